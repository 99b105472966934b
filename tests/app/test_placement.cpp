// Where a run goes: host, lab VM, or nowhere, from the scenario's needs, what
// the host offers and which lab kernels are prepared.

#include <doctest/doctest.h>

#include "app/cli_vm.h"
#include "app/placement.h"
#include "engine/loader.h"
#include "steps/kinds.h"

using namespace rxerun;

namespace {

const Registry& registry() {
  static const Registry r(steps::all_kinds());
  return r;
}

Scenario scenario(const std::string& yaml) {
  LoadResult r = load_scenario_text(yaml, "lab.yaml", registry(), {});
  REQUIRE(r.scenario);
  return *r.scenario;
}

vm::PreparedKernel kernel(const std::string& label) {
  vm::PreparedKernel k;
  k.label = label;
  k.release = label + ".0-test";
  return k;
}

const std::string kNetem = "name: lossy\nsteps:\n  - netem: {dev: vB, loss: 10%}\n";
const std::string kNetns = "name: ns\nsteps:\n  - netns: {name: a}\n";
const std::string kSleep = "name: idle\nsteps:\n  - sleep: {duration: 1s}\n";
const HostAbilities kRootNoNetem{.net_admin = true, .netem = false, .rdma_rxe = false};
const HostAbilities kRootAll{.net_admin = true, .netem = true, .rdma_rxe = true};
const HostAbilities kUser{.net_admin = false, .netem = false, .rdma_rxe = false};

}  // namespace

TEST_CASE("placement: the host when it can do everything") {
  auto p = place(scenario(kNetem), registry(), {}, {kernel("7.3")}, kRootAll);
  CHECK(p.where == Placement::Where::Host);
  CHECK(p.message.empty());
  // A scenario that needs nothing runs on the host even without root.
  CHECK(place(scenario(kSleep), registry(), {}, {}, kUser).where == Placement::Where::Host);
}

TEST_CASE("placement: the lab VM when the host lacks something, saying why first") {
  auto p = place(scenario(kNetem), registry(), {}, {kernel("7.3"), kernel("6.1")}, kRootNoNetem);
  REQUIRE(p.where == Placement::Where::Vm);
  CHECK(p.kernel->label == "7.3");
  CHECK(p.message == "host kernel has no sch_netem (netem step 'netem-1'): running in the lab VM, kernel 7.3");
  auto u = place(scenario(kNetns), registry(), {}, {kernel("6.1")}, kUser);
  REQUIRE(u.where == Placement::Where::Vm);
  CHECK(u.message.starts_with("not root on the host"));
}

TEST_CASE("placement: nowhere, with the command that fixes it") {
  auto p = place(scenario(kNetem), registry(), {}, {}, kRootNoNetem);
  CHECK(p.where == Placement::Where::Nowhere);
  CHECK(p.message ==
        "host kernel has no sch_netem (netem step 'netem-1'), and no lab VM is prepared: `rxerun vm "
        "setup` prepares it, then run again");
}

TEST_CASE("placement: --vm and --host decide outright") {
  CHECK(place(scenario(kNetem), registry(), {.force_host = true}, {kernel("7.3")}, kRootNoNetem).where ==
        Placement::Where::Host);
  auto p = place(scenario(kSleep), registry(), {.force_vm = true}, {kernel("6.1")}, kRootAll);
  CHECK(p.where == Placement::Where::Vm);
  CHECK(p.message.empty());
  auto none = place(scenario(kSleep), registry(), {.force_vm = true}, {}, kRootAll);
  CHECK(none.where == Placement::Where::Nowhere);
  CHECK(none.message == "no lab VM is prepared: run `rxerun vm setup` first");
}

TEST_CASE("placement: the kernel comes from --kernel, else the scenario, else the newest") {
  const std::vector<vm::PreparedKernel> both{kernel("7.3"), kernel("6.1")};
  auto pinned = scenario("name: old\nvm: {kernel: \"6.1\"}\nsteps:\n  - netns: {name: a}\n");
  CHECK(place(pinned, registry(), {.force_vm = true}, both, kRootAll).kernel->label == "6.1");
  CHECK(place(pinned, registry(), {.force_vm = true, .kernel = "7.3"}, both, kRootAll).kernel->label == "7.3");
  auto missing = place(pinned, registry(), {.force_vm = true}, {kernel("7.3")}, kRootAll);
  CHECK(missing.where == Placement::Where::Nowhere);
  CHECK(missing.message == "lab kernel 6.1 is not prepared (prepared: 7.3): run `rxerun vm setup --kernel 6.1` first");
  auto unknown = place(pinned, registry(), {.force_vm = true, .kernel = "five"}, both, kRootAll);
  CHECK(unknown.where == Placement::Where::BadKernel);
  CHECK(unknown.message ==
        "unknown lab kernel 'five': rxerun knows 6.1, 7.3, any Debian kernel version (6.12) and a kernel of your own "
        "(a path)");
  // Any Debian version: prepared, it is used; else `vm setup` is the way.
  auto unprepared = place(pinned, registry(), {.force_vm = true, .kernel = "5.4"}, both, kRootAll);
  CHECK(unprepared.where == Placement::Where::Nowhere);
  CHECK(unprepared.message ==
        "lab kernel 5.4 is not prepared (prepared: 7.3, 6.1): run `rxerun vm setup --kernel 5.4` first");
  const std::vector<vm::PreparedKernel> three{kernel("7.3"), kernel("6.12"), kernel("6.1")};
  CHECK(place(pinned, registry(), {.force_vm = true, .kernel = "6.12"}, three, kRootAll).kernel->label == "6.12");
  // A kernel of one's own is prepared under its release.
  CHECK(place(pinned, registry(), {.force_vm = true, .kernel = "7.4.0-rc2+"}, {kernel("7.4.0-rc2+")}, kRootAll)
            .kernel->label == "7.4.0-rc2+");
}

TEST_CASE("placement: --kernel PATH is a kernel of one's own, and what its lab needs") {
  CHECK(is_own_kernel_path("./linux"));
  CHECK(is_own_kernel_path("/boot/vmlinuz-6.1.0-57-amd64"));
  CHECK(is_own_kernel_path("."));  // an existing directory
  CHECK_FALSE(is_own_kernel_path("6.12"));
  CHECK_FALSE(is_own_kernel_path("7.3"));
  CHECK_FALSE(is_own_kernel_path("linux"));  // a label, even where a directory of that name exists
  CHECK_FALSE(is_own_kernel_path(""));
  const auto rxe = lab_needs(scenario("name: r\nsteps:\n  - rxe: {name: rxe0, netdev: vA}\n"), registry());
  CHECK(rxe.rxe);
  CHECK_FALSE(rxe.siw);
  CHECK_FALSE(rxe.netem);
  const auto plain = lab_needs(scenario(kSleep), registry());
  CHECK_FALSE(plain.rxe);
}

TEST_CASE("placement: the lab VM's time budget") {
  // vm.timeout wins.
  CHECK(lab_run_budget(scenario("name: t\nvm: {timeout: 90s}\nsteps:\n  - sleep: {duration: 1s}\n"), registry()) ==
        std::chrono::seconds(90));
  // Else every step's timeout times its attempts, plus five minutes: ping's
  // default 10s x 3 attempts + 2 delays of 1s; netns has the engine's 30s.
  auto s = scenario("name: t\nsteps:\n  - netns: {name: a}\n  - ping: {to: 10.0.0.1}\n    retries: 2\n");
  CHECK(lab_run_budget(s, registry()) == std::chrono::seconds(30 + 30 + 2 + 300));
}

TEST_CASE("placement: vm.timeout must be a positive duration") {
  LoadResult r = load_scenario_text("name: t\nvm: {timeout: soon}\nsteps:\n  - sleep: {duration: 1s}\n", "lab.yaml",
                                    registry(), {});
  CHECK_FALSE(r.scenario);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].to_string() ==
        "lab.yaml:2:15: 'vm.timeout' must be a positive duration with a unit (90s, 10m), got 'soon'");
}

TEST_CASE("placement: the lab VM's time budget saturates instead of overflowing") {
  // 876000h (the longest duration) x 4 attempts + 3 delays of 876000h: a
  // hundred years, not a wrapped negative budget that would read as spent.
  auto s = scenario(
      "name: t\nsteps:\n  - sleep: {duration: 1s}\n    timeout: 876000h\n    retries: 3\n    delay: 876000h\n"
      "  - sleep: {duration: 1s}\n    timeout: 876000h\n    retries: 100\n");
  const auto budget = lab_run_budget(s, registry());
  CHECK(budget == std::chrono::duration_cast<std::chrono::seconds>(kMaxDuration));
  // What the lab VM does with it: compared with steady_clock's durations.
  const auto elapsed = std::chrono::steady_clock::duration(std::chrono::hours(1));
  CHECK_FALSE(elapsed > budget);
  CHECK(std::chrono::steady_clock::now() + budget > std::chrono::steady_clock::now());
}

TEST_CASE("placement: a duration past a hundred years is refused with a clear message") {
  LoadResult r = load_scenario_text(
      "name: t\nvm: {timeout: 99999999999999999999h}\nsteps:\n  - sleep: {duration: 1s}\n    timeout: 876001h\n",
      "lab.yaml", registry(), {});
  CHECK_FALSE(r.scenario);
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[0].to_string() ==
        "lab.yaml:2:15: 'vm.timeout' is '99999999999999999999h', longer than 876000h (a hundred years), the longest "
        "duration rxerun takes");
  CHECK(r.diagnostics[1].to_string() ==
        "lab.yaml:5:14: 'timeout' is '876001h', longer than 876000h (a hundred years), the longest duration rxerun "
        "takes");
}
