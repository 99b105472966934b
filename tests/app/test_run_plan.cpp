// `rxerun run` planned before anything runs (app/run_plan.h): each scenario
// on its kernels, the lane of each run, the --shard part, the lab VM groups
// by kernel, the numbers [i/N], and the refusals of options that do not go
// together, with their messages and exit codes.

#include <doctest/doctest.h>

#include <string>
#include <variant>
#include <vector>

#include "app/run_plan.h"
#include "engine/loader.h"
#include "steps/kinds.h"

using namespace rxerun;

namespace {

const Registry& registry() {
  static const Registry r(steps::all_kinds());
  return r;
}

Scenario scenario(const std::string& yaml, const std::string& file = "lab.yaml") {
  LoadResult r = load_scenario_text(yaml, file, registry(), {});
  REQUIRE(r.scenario);
  return *r.scenario;
}

// A scenario that needs nothing of the host, and one that needs netem.
Scenario idle(const std::string& name) {
  return scenario("name: " + name + "\nsteps:\n  - sleep: {duration: 1s}\n", name + ".yaml");
}
Scenario lossy(const std::string& name, const std::string& kernel = "") {
  const std::string vm = kernel.empty() ? "" : "vm: {kernel: \"" + kernel + "\"}\n";
  return scenario("name: " + name + "\n" + vm + "steps:\n  - netem: {dev: vB, loss: 10%}\n", name + ".yaml");
}
Scenario two_nodes() {
  return scenario(
      "name: pair\nnodes: {a: {kernel: \"6.1\"}, b: {kernel: \"7.3\"}}\nwires: [{a: eth1, b: eth1}]\n"
      "steps:\n  - link: {dev: eth1, up: true}\n    node: a\n",
      "pair.yaml");
}

vm::PreparedKernel kernel(const std::string& label) {
  vm::PreparedKernel k;
  k.label = label;
  k.release = label + ".0-test";
  return k;
}

const std::vector<vm::PreparedKernel> kBoth{kernel("7.3"), kernel("6.1")};  // newest first, as prepared_kernels()
const HostAbilities kAll{.net_admin = true, .netem = true, .rdma_rxe = true};
const HostAbilities kNoNetem{.net_admin = true, .netem = false, .rdma_rxe = true};

RunCommandOptions options(std::vector<std::string> scenarios = {"lab.yaml"}) {
  RunCommandOptions o;
  o.scenarios = std::move(scenarios);
  return o;
}

struct Planned {
  std::variant<RunPlan, Refusal> result;
  const RunPlan& plan() const {
    REQUIRE(std::holds_alternative<RunPlan>(result));
    return std::get<RunPlan>(result);
  }
  const Refusal& refusal() const {
    REQUIRE(std::holds_alternative<Refusal>(result));
    return std::get<Refusal>(result);
  }
};

Planned plan(const RunCommandOptions& o, const std::vector<Scenario>& scenarios,
             const std::vector<vm::PreparedKernel>& prepared = kBoth, HostAbilities host = kAll,
             bool directory = false) {
  return {plan_runs(o, PlanInputs{.scenarios = scenarios, .prepared = prepared, .host = host, .directory = directory},
                    registry())};
}

std::vector<std::string> labels(const RunPlan& plan) {
  std::vector<std::string> out;
  for (const auto& r : plan.runs) out.push_back(r.label);
  return out;
}

std::vector<Lane> lanes(const RunPlan& plan) {
  std::vector<Lane> out;
  for (const auto& r : plan.runs) out.push_back(r.lane);
  return out;
}

std::vector<std::size_t> positions(const RunPlan& plan) {
  std::vector<std::size_t> out;
  for (const auto& r : plan.runs) out.push_back(r.position);
  return out;
}

}  // namespace

TEST_CASE("run plan: one scenario the host can run runs in this process, not as a suite") {
  const auto p = plan(options(), {idle("idle")});
  const RunPlan& r = p.plan();
  CHECK_FALSE(r.suite);
  CHECK(lanes(r) == std::vector<Lane>{Lane::Host});
  CHECK(labels(r) == std::vector<std::string>{"idle"});
  CHECK(r.host_runs == std::vector<std::size_t>{0});
  CHECK(r.groups.empty());
  CHECK(r.total == 1);
  CHECK(r.runs[0].kernel_label.empty());
}

TEST_CASE("run plan: several scenarios, or a directory, are a suite whose host runs are child processes") {
  const auto several = plan(options({"a.yaml", "b.yaml"}), {idle("a"), idle("b")});
  CHECK(several.plan().suite);
  CHECK(lanes(several.plan()) == std::vector<Lane>{Lane::Child, Lane::Child});
  CHECK(positions(several.plan()) == std::vector<std::size_t>{1, 2});
  CHECK(several.plan().total == 2);

  const auto directory = plan(options({"dir"}), {idle("a")}, kBoth, kAll, /*directory=*/true);
  CHECK(directory.plan().suite);
  CHECK(lanes(directory.plan()) == std::vector<Lane>{Lane::Child});
}

TEST_CASE("run plan: a matrix runs each scenario on each kernel in the lab VM, one group per kernel") {
  auto o = options({"a.yaml", "b.yaml"});
  o.kernel = "6.1,7.3";
  const auto p = plan(o, {idle("a"), idle("b")});
  const RunPlan& r = p.plan();
  CHECK(r.suite);
  // In the order of the arguments, each scenario's kernels together: the
  // summary's order. The host could run them, but it has one kernel.
  CHECK(labels(r) == std::vector<std::string>{"a@6.1", "a@7.3", "b@6.1", "b@7.3"});
  CHECK(lanes(r) == std::vector<Lane>(4, Lane::LabVm));
  CHECK(r.host_runs.empty());
  REQUIRE(r.groups.size() == 2);
  CHECK(r.groups[0].kernel.label == "6.1");
  CHECK(r.groups[0].runs == std::vector<std::size_t>{0, 2});
  CHECK(r.groups[1].kernel.label == "7.3");
  CHECK(r.groups[1].runs == std::vector<std::size_t>{1, 3});
  // Numbered in the order the boots start: 6.1's runs, then 7.3's.
  CHECK(r.groups[0].first_position == 1);
  CHECK(r.groups[1].first_position == 3);
  CHECK(positions(r) == std::vector<std::size_t>{1, 3, 2, 4});
  // Each kernel's output files apart, so that one kernel's capture does not
  // replace another's.
  CHECK(r.groups[0].output_dir == "./6.1");
  CHECK(r.groups[1].output_dir == "./7.3");
  o.output_dir = "out";
  CHECK(plan(o, {idle("a"), idle("b")}).plan().groups[1].output_dir == "out/7.3");
}

TEST_CASE("run plan: --kernel all is every prepared kernel, oldest first, and without one it is refused") {
  auto o = options();
  o.kernel = "all";
  CHECK(labels(plan(o, {idle("a")}).plan()) == std::vector<std::string>{"a@6.1", "a@7.3"});
  const auto none = plan(o, {idle("a")}, {});
  CHECK(none.refusal().message == "--kernel all: no lab kernel is prepared: run `rxerun vm setup`");
  CHECK(none.refusal().exit_code == kExitEnvironment);
}

TEST_CASE("run plan: a scenario's vm.kernels make a matrix of its own, except on the host") {
  const auto both = scenario("name: both\nvm: {kernels: [\"6.1\", \"7.3\"]}\nsteps:\n  - sleep: {duration: 1s}\n");
  const auto p = plan(options(), {both});
  CHECK(p.plan().suite);
  CHECK(labels(p.plan()) == std::vector<std::string>{"both@6.1", "both@7.3"});
  auto host = options();
  host.host = true;
  const auto on_host = plan(host, {both}, {});
  CHECK_FALSE(on_host.plan().suite);
  CHECK(lanes(on_host.plan()) == std::vector<Lane>{Lane::Host});
}

TEST_CASE("run plan: the runs on this machine first, then each lab kernel's in one boot") {
  // a and d need netem, which the host lacks: the newest lab kernel; c names 6.1.
  const std::vector<Scenario> scenarios{lossy("a"), idle("b"), lossy("c", "6.1"), lossy("d")};
  const auto p = plan(options({"a.yaml", "b.yaml", "c.yaml", "d.yaml"}), scenarios, kBoth, kNoNetem);
  const RunPlan& r = p.plan();
  CHECK(lanes(r) == std::vector<Lane>{Lane::LabVm, Lane::Child, Lane::LabVm, Lane::LabVm});
  CHECK(r.host_runs == std::vector<std::size_t>{1});
  REQUIRE(r.groups.size() == 2);
  CHECK(r.groups[0].kernel.label == "7.3");
  CHECK(r.groups[0].runs == std::vector<std::size_t>{0, 3});
  CHECK(r.groups[1].kernel.label == "6.1");
  CHECK(r.groups[1].runs == std::vector<std::size_t>{2});
  CHECK(positions(r) == std::vector<std::size_t>{2, 1, 4, 3});
  CHECK(r.groups[0].first_position == 2);
  CHECK(r.groups[1].first_position == 4);
  CHECK(r.total == 4);
  // By default the lab VM says why it is not the host.
  CHECK(r.runs[0].placement ==
        "host kernel has no sch_netem (netem step 'netem-1'): running in the lab VM, kernel 7.3");
}

TEST_CASE("run plan: one group keeps the output directory as given") {
  auto o = options();
  o.vm = true;
  const auto p = plan(o, {idle("a")});
  REQUIRE(p.plan().groups.size() == 1);
  CHECK(p.plan().groups[0].output_dir.empty());
  CHECK(p.plan().runs[0].placement.empty());  // --vm asked for it: nothing to explain
  CHECK_FALSE(p.plan().suite);
}

TEST_CASE("run plan: --host and --vm decide outright") {
  auto host = options();
  host.host = true;
  CHECK(lanes(plan(host, {lossy("a")}, {}, {}).plan()) == std::vector<Lane>{Lane::Host});
  auto in_vm = options();
  in_vm.vm = true;
  const auto p = plan(in_vm, {idle("a")});
  CHECK(lanes(p.plan()) == std::vector<Lane>{Lane::LabVm});
  CHECK(p.plan().runs[0].kernel->label == "7.3");
}

TEST_CASE("run plan: --shard keeps every N-th run of the whole list, matrix included") {
  auto o = options({"a.yaml", "b.yaml", "c.yaml", "d.yaml"});
  o.shard = "2/2";
  const std::vector<Scenario> four{idle("a"), idle("b"), idle("c"), idle("d")};
  const auto p = plan(o, four);
  CHECK(p.plan().suite);
  CHECK(labels(p.plan()) == std::vector<std::string>{"b", "d"});
  CHECK(positions(p.plan()) == std::vector<std::size_t>{1, 2});
  CHECK(p.plan().total == 2);

  o.scenarios = {"a.yaml", "b.yaml"};
  o.kernel = "6.1,7.3";
  o.shard = "1/2";
  CHECK(labels(plan(o, {idle("a"), idle("b")}).plan()) == std::vector<std::string>{"a@6.1", "b@6.1"});
  // A shard of one scenario is still a suite: its part is reported as one.
  auto one = options();
  one.shard = "1/1";
  CHECK(plan(one, {idle("a")}).plan().suite);
}

TEST_CASE("run plan: the lab VM's guest numbers its runs where the host's suite put them") {
  auto o = options({"/x/a.yaml", "/x/b.yaml"});
  o.host = true;
  o.lab_kernel = "7.3";
  o.suite_position = "3/8";
  const auto p = plan(o, {idle("a"), idle("b")}, {});
  const RunPlan& r = p.plan();
  CHECK(r.suite);
  CHECK(r.total == 8);
  CHECK(positions(r) == std::vector<std::size_t>{3, 4});
  CHECK(labels(r) == std::vector<std::string>{"a@7.3", "b@7.3"});
  CHECK(r.runs[0].kernel_label == "7.3");
  CHECK(lanes(r) == std::vector<Lane>{Lane::Child, Lane::Child});
  // One scenario in the guest's part of a suite is still a suite's run: a child.
  o.scenarios = {"/x/a.yaml"};
  CHECK(lanes(plan(o, {idle("a")}, {}).plan()) == std::vector<Lane>{Lane::Child});
}

TEST_CASE("run plan: a kernel of one's own runs every scenario in the lab VM") {
  auto o = options();
  o.kernel = "./linux";
  const auto p = plan(o, {idle("a")}, {kernel("7.4.0-rc2+")});
  CHECK(lanes(p.plan()) == std::vector<Lane>{Lane::LabVm});
  CHECK(p.plan().runs[0].kernel->label == "7.4.0-rc2+");
  CHECK(labels(p.plan()) == std::vector<std::string>{"a@7.4.0-rc2+"});
  CHECK_FALSE(p.plan().suite);
}

TEST_CASE("run plan: a scenario with nodes is its own lane, and refuses what would place it") {
  const auto p = plan(options({"a.yaml", "pair.yaml"}), {idle("a"), two_nodes()});
  CHECK(lanes(p.plan()) == std::vector<Lane>{Lane::Child, Lane::Nodes});
  CHECK(p.plan().groups.empty());
  CHECK(lanes(plan(options({"pair.yaml"}), {two_nodes()}).plan()) == std::vector<Lane>{Lane::Nodes});

  auto refused = [](RunCommandOptions o) { return plan(o, {two_nodes()}).refusal(); };
  auto o = options({"pair.yaml"});
  o.host = true;
  CHECK(refused(o).message ==
        "pair.yaml: its nodes are lab VMs that name their own kernels: --host runs on this machine's kernel");
  o = options({"pair.yaml"});
  o.kernel = "6.1";
  CHECK(refused(o).message ==
        "pair.yaml: its nodes are lab VMs that name their own kernels: --kernel chooses one kernel");
  CHECK(refused(o).exit_code == kExitUsage);
  o = options({"pair.yaml"});
  o.keep = true;
  CHECK(refused(o).message ==
        "pair.yaml: its nodes are lab VMs that name their own kernels: --keep cannot keep a lab in lab VMs");
}

TEST_CASE("run plan: --keep keeps one lab on the host") {
  auto o = options();
  o.keep = true;
  CHECK(lanes(plan(o, {idle("a")}).plan()) == std::vector<Lane>{Lane::Host});
  o.vm = true;
  CHECK(plan(o, {idle("a")}).refusal().message ==
        "--keep cannot keep a lab in the lab VM: the VM is discarded after the run");
  o.vm = false;
  o.scenarios = {"a.yaml", "b.yaml"};
  const auto suite = plan(o, {idle("a"), idle("b")});
  CHECK(suite.refusal().message == "--keep keeps one lab: run one scenario with it, not a suite");
  CHECK(suite.refusal().exit_code == kExitUsage);
  // A matrix is the lab VM's first of all.
  o.scenarios = {"a.yaml"};
  o.kernel = "6.1,7.3";
  CHECK(plan(o, {idle("a")}).refusal().message ==
        "--keep cannot keep a lab in the lab VM: the VM is discarded after the run");
}

TEST_CASE("run plan: --host cannot run a matrix") {
  auto o = options();
  o.host = true;
  o.kernel = "6.1,7.3";
  const auto p = plan(o, {idle("a")}, {});
  CHECK(p.refusal().message == "--host runs on this machine's kernel: it cannot run a matrix of --kernel 6.1,7.3");
  CHECK(p.refusal().exit_code == kExitUsage);
  // One kernel named with --host: the host's, as asked.
  o.kernel = "6.1";
  CHECK(lanes(plan(o, {idle("a")}, {}).plan()) == std::vector<Lane>{Lane::Host});
}

TEST_CASE("run plan: an unknown kernel is a usage error, one that is not prepared stops a single run") {
  auto o = options();
  o.kernel = "five";
  const auto unknown = plan(o, {idle("a")});
  CHECK(unknown.refusal().exit_code == kExitUsage);
  CHECK(unknown.refusal().message.starts_with("unknown lab kernel 'five': rxerun knows "));

  auto vm = options();
  vm.vm = true;
  vm.kernel = "5.4";
  const auto single = plan(vm, {idle("a")});
  CHECK(single.refusal().exit_code == kExitEnvironment);
  CHECK(single.refusal().message ==
        "lab kernel 5.4 is not prepared (prepared: 7.3, 6.1): run `rxerun vm setup --kernel 5.4` first");

  // In a suite it is an error of its own, named with the kernel it wanted;
  // the other runs go on.
  vm.scenarios = {"a.yaml", "b.yaml"};
  const auto suite = plan(vm, {idle("a"), idle("b")});
  const RunPlan& r = suite.plan();
  CHECK(lanes(r) == std::vector<Lane>{Lane::Nowhere, Lane::Nowhere});
  CHECK(labels(r) == std::vector<std::string>{"a@5.4", "b@5.4"});
  CHECK(r.runs[0].unavailable ==
        "lab kernel 5.4 is not prepared (prepared: 7.3, 6.1): run `rxerun vm setup --kernel 5.4` first");
  CHECK(r.host_runs == std::vector<std::size_t>{0, 1});
}

TEST_CASE("run plan: options are checked before any scenario is read") {
  auto refusal = [](RunCommandOptions o) {
    auto r = read_run_request(o);
    REQUIRE(std::holds_alternative<Refusal>(r));
    return std::get<Refusal>(r);
  };
  auto o = options();
  o.shard = "3/2";
  CHECK(refusal(o).message == "--shard 3/2: expected K/N with 1 <= K <= N, e.g. 2/4");
  o = options();
  o.jobs = 0;
  CHECK(refusal(o).message == "-j 0: at least one lab VM runs at a time");
  o = options();
  o.host = true;
  o.kernel = "./linux";
  CHECK(refusal(o).message == "--host runs on this machine's kernel: it takes no --kernel PATH");
  o = options();
  o.modules = "/lib/modules/x";
  CHECK(refusal(o).message == "--modules DIR goes with --kernel IMAGE");
  o = options();
  o.kernel = "6.1,all";
  CHECK(refusal(o).message == "--kernel 6.1,all: 'all' stands alone");
  CHECK(refusal(o).exit_code == kExitUsage);
  // plan_runs refuses them too: it is whole on its own.
  o.kernel = "6.1,,7.3";
  CHECK(plan(o, {idle("a")}).refusal().message ==
        "--kernel 6.1,,7.3: an empty kernel in the list (expected 6.1,7.3 or all)");

  o = options();
  o.kernel = "./linux";
  o.modules = "./mods";
  auto own = read_run_request(o);
  REQUIRE(std::holds_alternative<RunRequest>(own));
  CHECK(std::get<RunRequest>(own).own_kernel);
  CHECK(std::get<RunRequest>(own).kernels.labels.empty());

  auto reports = read_report_targets({"json:a.json", "xml:b"});
  REQUIRE(std::holds_alternative<Refusal>(reports));
  CHECK(std::get<Refusal>(reports).message.starts_with("--report xml:b: "));
  auto good = read_report_targets({"json:a.json", "junit:b.xml"});
  REQUIRE(std::holds_alternative<std::vector<ReportTarget>>(good));
  CHECK(std::get<std::vector<ReportTarget>>(good).size() == 2);

  // plan_runs: --report first of all, and the plan keeps the targets.
  o = options();
  o.reports = {"xml:b"};
  o.shard = "0/1";
  CHECK(plan(o, {idle("a")}).refusal().message.starts_with("--report xml:b: "));
  o.reports = {"junit:b.xml"};
  CHECK(plan(o, {idle("a")}).refusal().message == "--shard 0/1: expected K/N with 1 <= K <= N, e.g. 2/4");
  o.shard.clear();
  REQUIRE(plan(o, {idle("a")}).plan().reports.size() == 1);
  CHECK(plan(o, {idle("a")}).plan().reports[0].path == "b.xml");
}
