// rxe: the step's logic against the fake Rdma: modules loaded and unloaded
// only by the run that loaded them, adoption of the same device, clear errors
// for a name taken elsewhere (the kernel's ENFILE) or a missing netdev, and
// the probe for rxe's UDP socket inside a namespace.

#include <doctest/doctest.h>

#include <filesystem>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

struct RxeHarness : fakes::Harness {
  RxeHarness() {
    fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    fake.links.add_host_link("", {.name = "vB", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  }
  void stack_loaded() {
    for (const auto& [name, deps] : fake.modules.known) fake.modules.live.insert(name);
  }
};

const std::string kStep = "steps:\n  - {name: dev, rxe: {name: rxe0, netdev: vA}}\n";

}  // namespace

TEST_CASE("rxe: loads rdma_rxe and rdma_ucm, adds the device, and cleanup deletes it and unloads them") {
  RxeHarness h;
  auto r = h.run_keep(kStep);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "dev");
  CHECK(s.facts.at("changed") == true);
  CHECK(s.facts.at("module_loaded") == true);
  CHECK(s.facts.at("name") == "rxe0");
  CHECK(s.facts.at("netdev") == "vA");
  REQUIRE(h.fake.rdma.find("rxe0"));
  CHECK(h.fake.rdma.find("rxe0")->netdev == "vA");
  CHECK(h.fake.modules.live.count("rdma_rxe") == 1);
  CHECK(h.fake.modules.live.count("rdma_ucm") == 1);

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 2);
  CHECK(c.undos[0].summary == "delete rxe device rxe0");
  CHECK(c.undos[1].summary ==
        "unload rdma_rxe, rdma_ucm and 5 modules they needed (loaded by this run) once no rxe device is left");
  CHECK(h.fake.rdma.devices.empty());
  CHECK(h.fake.modules.live.empty());  // the dependencies it pulled in went too
  // What the run did to modules and RDMA devices, in order.
  const auto log = h.fake.kernel.commands({"modules", "rdma"});
  REQUIRE(log.size() >= 5);
  CHECK(log.front() == "modprobe rdma_rxe");
  CHECK(log[2] == "rdma link add rxe0 type rxe netdev vA");
  CHECK(log[3] == "rdma link delete rxe0");  // before any unload
  CHECK(log[4] == "modprobe -r rdma_rxe");
  CHECK(h.cleanup().undos.empty());  // idempotent: nothing left to do
}

TEST_CASE("rxe: a second step for the same device reports nothing changed, and cleanup deletes it once") {
  RxeHarness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: a, rxe: {name: rxe0, netdev: vA}}\n"
      "  - {name: b, rxe: {name: rxe0, netdev: vA}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("changed") == false);
  CHECK(step_named(r, "b").facts.at("module_loaded") == false);
  CHECK(r.cleanup.clean());
  CHECK(r.cleanup.undos.size() == 2);
  CHECK(std::ranges::count(h.fake.kernel.commands({"modules", "rdma"}), "rdma link add rxe0 type rxe netdev vA") == 1);
  CHECK(h.fake.rdma.devices.empty());
  CHECK(h.fake.modules.live.empty());
}

TEST_CASE("rxe: a device that was there already is adopted unchanged and left in place") {
  RxeHarness h;
  h.stack_loaded();
  h.fake.rdma.devices.push_back({.index = 7, .name = "rxe0", .netns = "", .netdev = "vA"});
  auto r = h.run(kStep);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "dev").facts.at("changed") == false);
  CHECK(step_named(r, "dev").facts.at("index") == 7);
  CHECK(r.cleanup.undos.empty());
  CHECK(h.fake.rdma.find("rxe0"));
  CHECK(h.fake.kernel.commands({"modules", "rdma"}).empty());
}

TEST_CASE("rxe: with rdma_rxe loaded before the run, cleanup deletes the device and unloads nothing") {
  RxeHarness h;
  h.stack_loaded();
  auto r = h.run(kStep);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "dev").facts.at("module_loaded") == false);
  CHECK(r.cleanup.clean());
  REQUIRE(r.cleanup.undos.size() == 1);
  CHECK(h.fake.kernel.commands({"modules", "rdma"}) ==
        Strings{"rdma link add rxe0 type rxe netdev vA", "rdma link delete rxe0"});
  CHECK(h.fake.modules.live.count("rdma_rxe") == 1);
}

TEST_CASE("rxe: a name taken over another netdev is a clear error and nothing is added") {
  RxeHarness h;
  h.stack_loaded();
  h.fake.rdma.devices.push_back({.index = 3, .name = "rxe0", .netns = "", .netdev = "vB"});
  auto r = h.run(kStep);
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "dev").message ==
        "RDMA device name rxe0 is taken (names are global across namespaces): it names the rxe device on vB; choose "
        "another name");
  CHECK(h.fake.kernel.commands({"modules", "rdma"}).empty());
  CHECK(h.fake.rdma.find("rxe0")->netdev == "vB");
}

TEST_CASE("rxe: the kernel's ENFILE for a name held elsewhere is translated") {
  RxeHarness h;
  h.stack_loaded();
  h.fake.netns.existing.insert("other");
  h.fake.links.add_host_link("other", {.name = "vX", .kind = "veth"});
  // Not listed yet when the step looks (as if added in between).
  h.fake.rdma.devices.push_back({.index = 3, .name = "rxe0", .netns = "other", .netdev = "vX"});
  h.fake.rdma.hidden[3] = 1;
  auto r = h.run(kStep);
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "dev").message ==
        "RDMA device name rxe0 is taken (names are global across namespaces): choose another name");
  CHECK(r.cleanup.clean());
  CHECK(h.fake.rdma.find("rxe0")->netdev == "vX");  // cleanup left the other one alone
}

TEST_CASE("rxe: a missing netdev or a netdev with another rxe device is a clear error") {
  SUBCASE("no netdev") {
    RxeHarness h;
    auto r = h.run("steps:\n  - {name: dev, rxe: {name: rxe0, netdev: vZ}}\n");
    CHECK(r.exit_code == 3);
    CHECK(step_named(r, "dev").message == "no netdev vZ (create it first)");
    CHECK(r.cleanup.clean());
    CHECK(h.fake.modules.live.empty());  // what the step loaded went again
  }
  SUBCASE("another rxe device on it") {
    RxeHarness h;
    h.stack_loaded();
    h.fake.rdma.devices.push_back({.index = 2, .name = "rxe9", .netns = "", .netdev = "vA"});
    auto r = h.run(kStep);
    CHECK(r.exit_code == 3);
    CHECK(contains(step_named(r, "dev").message, "vA already has rxe device rxe9 (one per netdev)"));
    CHECK(h.fake.kernel.commands({"modules", "rdma"}).empty());
  }
}

TEST_CASE("rxe: a kernel without rdma_rxe stops the step and names the lab VM") {
  RxeHarness h;
  h.fake.modules.known.erase("rdma_rxe");
  auto r = h.run(kStep);
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "dev");
  CHECK(contains(s.message, "rdma_rxe is not available in this kernel"));
  CHECK(contains(s.message, "rxerun --vm"));
  CHECK(h.fake.kernel.commands({"modules", "rdma"}).empty());
  CHECK(r.cleanup.undos.empty());
}

TEST_CASE("rxe: the step waits until the kernel lists the new device") {
  RxeHarness h;
  h.stack_loaded();
  h.fake.rdma.hidden_for = 3;
  auto r = h.run_keep(kStep);
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.clock.waits == std::vector<Duration>(3, Duration{20}));
}

TEST_CASE("rxe: inside a namespace on a kernel before 7.1 the step fails naming kernel 7.3, and cleanup removes it") {
  RxeHarness h;
  h.fake.rdma.per_netns_udp = false;
  h.fake.netns.existing.insert("lab");
  h.fake.links.add_host_link("lab", {.name = "vL", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  auto r = h.run("steps:\n  - {name: dev, rxe: {name: rxe0, netdev: vL}, netns: lab}\n");
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "dev");
  CAPTURE(s.message);
  CHECK(contains(s.message, "no UDP 4791 socket listens in netns lab"));
  CHECK(contains(s.message, "rxerun --vm --kernel 7.3"));
  CHECK(contains(s.message, "vm: {kernel: \"7.3\"}"));
  CHECK(s.facts.at("changed") == true);
  CHECK(r.cleanup.clean());
  CHECK(h.fake.rdma.devices.empty());
  CHECK(h.fake.modules.live.empty());
}

TEST_CASE("rxe: inside a namespace on 7.x the socket is there and the step passes") {
  RxeHarness h;
  h.fake.netns.existing.insert("lab");
  h.fake.links.add_host_link("lab", {.name = "vL", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  auto r = h.run("steps:\n  - {name: dev, rxe: {name: rxe0, netdev: vL}, netns: lab}\n");
  CHECK(r.exit_code == 0);
  CHECK(h.fake.clock.waits.empty());
  CHECK(r.cleanup.clean());
  CHECK(h.fake.rdma.devices.empty());
}

TEST_CASE("rxe: with the run's own veth, cleanup deletes the device, unloads the modules, then the veth") {
  fakes::Harness h;
  auto r = h.run(
      "steps:\n"
      "  - veth: {name: vA, peer: vB}\n"
      "  - link: {dev: vA, up: true}\n"
      "  - link: {dev: vB, up: true}\n"
      "  - rxe: {name: rxe0, netdev: vA}\n"
      "  - rxe: {name: rxe1, netdev: vB}\n"
      "  - port: {dev: rxe0}\n"
      "  - port: {dev: rxe1}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(r.cleanup.clean());
  CHECK(h.fake.rdma.devices.empty());
  CHECK(h.fake.modules.live.empty());
  CHECK(h.fake.links.find("", "vA") == nullptr);
  const auto log = h.fake.kernel.commands({"modules", "rdma"});
  auto at = [&](const std::string& e) { return std::find(log.begin(), log.end(), e) - log.begin(); };
  CHECK(at("rdma link delete rxe1") < at("rdma link delete rxe0"));
  CHECK(at("rdma link delete rxe0") < at("modprobe -r rdma_rxe"));
  CHECK(at("modprobe -r rdma_rxe") < static_cast<long>(log.size()));
}

TEST_CASE("rxe: rdma_rxe stays while another rxe device is left, and a busy module is retried") {
  SUBCASE("somebody else's device") {
    RxeHarness h;
    REQUIRE(h.run_keep(kStep).exit_code == 0);
    h.fake.rdma.devices.push_back({.index = 9, .name = "theirs", .netns = "", .netdev = "vB"});
    auto c = h.cleanup();
    CHECK(c.clean());
    CHECK(h.fake.rdma.find("rxe0") == nullptr);
    CHECK(h.fake.rdma.find("theirs"));
    CHECK(h.fake.modules.live.count("rdma_rxe") == 1);
  }
  SUBCASE("briefly busy") {
    RxeHarness h;
    h.stack_loaded();
    h.fake.modules.live.erase("rdma_rxe");  // only rdma_rxe to unload: one try per round
    REQUIRE(h.run_keep(kStep).exit_code == 0);
    h.fake.kernel.fail("modules.unload", EBUSY, "rdma_rxe", 1, 2);
    h.fake.clock.waits.clear();
    auto c = h.cleanup();
    CHECK(c.clean());
    CHECK(h.fake.modules.live.count("rdma_rxe") == 0);
    CHECK(h.fake.clock.waits == std::vector<Duration>(2, Duration{200}));
  }
  SUBCASE("busy for good: cleanup says what it left") {
    RxeHarness h;
    REQUIRE(h.run_keep(kStep).exit_code == 0);
    h.fake.kernel.fail("modules.unload", EBUSY, "rdma_rxe", 1, 1000);
    auto c = h.cleanup();
    CHECK_FALSE(c.clean());
    REQUIRE(c.undos.size() == 2);
    CHECK(contains(c.undos[1].error, "rdma_rxe is still in use after 10 tries"));
    CHECK(h.fake.modules.live.count("rdma_rxe") == 1);
  }
}

TEST_CASE("rxe: undo leaves a device of that name over another netdev: it is not the run's") {
  RxeHarness h;
  REQUIRE(h.run_keep(kStep).exit_code == 0);
  auto* theirs = h.fake.rdma.find("rxe0");  // replaced by somebody's since, over vB
  theirs->netdev = "vB";
  theirs->netdev_ifindex = h.fake.links.find("", "vB")->ifindex;
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());  // residue: the journal says which device was the run's
  CHECK(contains(c.undos[0].error, "rxe device rxe0 is another one than the one this run added"));
  CHECK(h.fake.rdma.find("rxe0"));
  CHECK(h.fake.modules.live.count("rdma_rxe") == 1);  // that device still needs it
}

TEST_CASE("rxe: an entry without identity (an older journal) leaves a device over another netdev silently") {
  RxeHarness h;
  h.fake.modules.live = {"rdma_rxe", "ib_uverbs", "ib_core"};
  h.fake.rdma.devices.push_back({.index = 4, .name = "rxe0", .netns = "", .netdev = "vB"});
  REQUIRE(h.journal.append({0, "dev", "rxe", "", "delete rxe device rxe0", {{"name", "rxe0"}, {"netdev", "vA"}}}));
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.fake.rdma.find("rxe0"));
}

TEST_CASE("rxe: revert deletes the device now and reports it gone") {
  RxeHarness h;
  h.stack_loaded();
  auto r = h.run(
      "steps:\n"
      "  - {name: dev, rxe: {name: rxe0, netdev: vA}}\n"
      "  - revert: dev\n");
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.kernel.commands({"modules", "rdma"}) ==
        Strings{"rdma link add rxe0 type rxe netdev vA", "rdma link delete rxe0"});
  CHECK(r.cleanup.undos.empty());
}

TEST_CASE("rxe: plan shows modprobe and rdma link commands") {
  fakes::Harness h;
  const std::string text = h.plan("steps:\n  - rxe: {name: rxe0, netdev: vA}\n");
  CAPTURE(text);
  CHECK(contains(text, "rdma link add rxe0 type rxe netdev vA"));
  CHECK(contains(text, "rdma link delete rxe0"));
  if (!std::filesystem::exists("/sys/module/rdma_rxe")) {
    CHECK(contains(text, "modprobe rdma_rxe"));
    CHECK(contains(text, "modprobe -r rdma_rxe"));
  }
}

TEST_CASE("rxe: plan runs the add inside the step's namespace") {
  fakes::Harness h;
  const std::string text = h.plan("steps:\n  - netns: {name: lab}\n  - {rxe: {name: rxe0, netdev: vA}, netns: lab}\n");
  CAPTURE(text);
  CHECK(contains(text, "ip netns exec lab rdma link add rxe0 type rxe netdev vA"));
}
