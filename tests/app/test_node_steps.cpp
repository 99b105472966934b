// A two-node run's step dispatch and fact flow (app/node_steps.h), with the
// real host loop and real agents (app/agent.h), each agent on a fake system
// of its own and the host's links passing messages in-process: each step
// runs on its node's system, facts of one node reach steps on the other, a
// pair across two nodes runs on its client's node with its server started on
// the other, and a node that is gone makes its step an error.

#include <doctest/doctest.h>

#include <map>
#include <memory>

#include "app/agent.h"
#include "app/agent_tools.h"
#include "app/node_steps.h"
#include "base/strings.h"
#include "engine/journal.h"
#include "engine/loader.h"
#include "fakes/fake_system.h"
#include "steps/kinds.h"

using namespace rxerun;

namespace {

struct TestNodes;

// A node: its fake system, its tools routed through the test's host, its
// Runner and agent.
struct TestNode : ToolLink {
  TestNode(TestNodes& all, const Scenario& scenario, const Registry& registry, std::string name);
  Result<nlohmann::json> call(nlohmann::json request) override;

  TestNodes& all;
  std::string name;
  fakes::FakeSystem fake;
  RoutingTools tools;
  sys::System system;
  ToolService service{fake.system};
  Journal journal = Journal::in_memory();
  Reporter quiet;
  Runner runner;
  AgentSession agent;
};

struct TestNodes : NodeLinks {
  std::map<std::string, std::unique_ptr<TestNode>> nodes;
  std::set<std::string> gone;
  std::vector<std::string> asked;  // "a: step address-1"

  Result<vm::ControlChannel::Received> ask(const std::string& node, const nlohmann::json& message) override {
    asked.push_back(node + ": " + message.value("step", "?"));
    if (gone.count(node)) return make_error("closed");
    return vm::ControlChannel::Received{.message = nodes.at(node)->agent.answer(message)};
  }
  std::string gone_because(const std::string& node) override { return "qemu of node " + node + " was killed"; }
};

TestNode::TestNode(TestNodes& all_, const Scenario& scenario, const Registry& registry, std::string name_)
    : all(all_),
      name(std::move(name_)),
      tools(fake.tools, *this, name, fake.clock),
      system(sys::with_tools(fake.system, tools)),
      runner(registry, system, journal, quiet, {}),
      agent(scenario, name, runner, service, nlohmann::json::object()) {
  fake.links.add_host_link("", {.name = "eth1", .kind = "", .mtu = 1500});
}

// A tool call to another node, passed on as the host does.
Result<nlohmann::json> TestNode::call(nlohmann::json request) {
  const std::string target = request.value("node", "");
  if (!all.nodes.count(target) || all.gone.count(target)) return make_error("node " + target + " is gone");
  nlohmann::json reply = all.nodes.at(target)->agent.answer({{"tool", request}})["tool_reply"];
  if (reply.contains("error")) return make_error(reply.value("error", ""));
  return reply;
}

struct Lab {
  Registry registry{steps::all_kinds()};
  Scenario scenario;
  TestNodes links;
  Reporter quiet;
  RunReport report;

  explicit Lab(const std::string& yaml) {
    auto loaded = load_scenario_text(yaml, "two.yaml", registry, {});
    for (const auto& d : loaded.diagnostics) FAIL_CHECK(d.to_string());
    REQUIRE(loaded.scenario);
    scenario = *loaded.scenario;
    for (const auto& n : scenario.nodes)
      links.nodes[n.name] = std::make_unique<TestNode>(links, scenario, registry, n.name);
  }
  TestNode& node(const std::string& name) { return *links.nodes.at(name); }
  void run() {
    for (auto& [name, n] : links.nodes) REQUIRE(n->agent.start());
    run_node_steps(
        scenario, registry, links, quiet, [] { return false; }, false, report, std::chrono::steady_clock::now());
  }
  const StepReport& step(const std::string& name) {
    for (const auto& s : report.steps)
      if (s.name == name) return s;
    FAIL("no step " << name);
    return report.steps.front();
  }
};

const char* kNodes =
    "nodes: {a: {kernel: \"6.1\"}, b: {kernel: \"7.3\"}}\n"
    "wires: [{a: eth1, b: eth1}]\n";

bool started(const sys::ModelTools& tools, const std::string& word) {
  for (const auto& s : tools.started)
    if (contains(shell_join(s.argv), word)) return true;
  return false;
}

}  // namespace

TEST_CASE("node steps: each step runs on its node, and a fact of node a reaches a step on node b") {
  Lab lab(std::string(kNodes) +
          "steps:\n"
          "  - address: {dev: eth1, cidr: 10.70.0.1/24}\n"
          "    node: a\n"
          "  - name: echo\n"
          "    exec: {argv: [echo, \"from a: {{steps.address-1.address}}\"]}\n"
          "    node: b\n"
          "  - sleep: {duration: 10ms}\n");
  lab.run();
  CHECK(lab.report.steps.size() == 3);
  CHECK(lab.links.asked == std::vector<std::string>{"a: address-1", "b: echo", "a: sleep-3"});
  // The address went into a's kernel only.
  CHECK(lab.node("a").fake.links.addrs[""]["eth1"] == std::vector<std::string>{"10.70.0.1/24"});
  CHECK(lab.node("b").fake.links.addrs[""]["eth1"].empty());
  // b ran the program, with a's fact in its argument; a ran none.
  REQUIRE(lab.node("b").fake.tools.started.size() == 1);
  CHECK(lab.node("b").fake.tools.started[0].argv == std::vector<std::string>{"echo", "from a: 10.70.0.1/24"});
  CHECK(lab.node("a").fake.tools.started.empty());
  CHECK(lab.step("address-1").node == "a");
  CHECK(lab.step("echo").node == "b");
  CHECK(lab.step("sleep-3").node == "a");  // a step that touches no kernel: the first node
  for (const auto& s : lab.report.steps) CHECK(s.status == StepStatus::Passed);
}

TEST_CASE("node steps: a pair across two nodes runs on its client's node, its server on the other") {
  Lab lab(std::string(kNodes) +
          "steps:\n"
          "  - name: across\n"
          "    rping: {server: 10.70.0.1, server_node: a, client: 10.70.0.2, client_node: b, count: 2}\n"
          "    expect: {a.rxe0.rcvd_pkts: 7, iterations: 2}\n");
  int reads = 0;
  lab.node("a").fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (s.argv.at(1) == "__counters")
      return sys::ProgramRun{.out = nlohmann::json{{"rxe0.rcvd_pkts", reads++ ? 7 : 0}}.dump(),
                             .exit = sys::ExitStatus{}};
    return sys::ProgramRun{.out = "server ping data: x\nserver ping data: y\n", .exit = sys::ExitStatus{}};
  };
  lab.node("b").fake.tools.on_start = [](const sys::ToolSpec&) {
    return sys::ProgramRun{.out = "ping data: x\nping data: y\n", .exit = sys::ExitStatus{}};
  };
  lab.run();
  CHECK(lab.links.asked == std::vector<std::string>{"b: across"});
  const auto& s = lab.step("across");
  CHECK(s.status == StepStatus::Passed);
  CHECK(s.node == "a+b");  // the server's node first
  CHECK(s.facts.at("server_iterations") == 2);
  // The server and a's counter readings on a; the client on b.
  CHECK(started(lab.node("a").fake.tools, "rping -s"));
  CHECK(started(lab.node("a").fake.tools, "__counters"));
  CHECK_FALSE(started(lab.node("a").fake.tools, "rping -c"));
  CHECK(started(lab.node("b").fake.tools, "rping -c"));
  CHECK_FALSE(started(lab.node("b").fake.tools, "rping -s"));
  CHECK(lab.node("a").fake.tools.alive.empty());
}

TEST_CASE("node steps: a node that is gone makes its step an error that names it, and stops the run") {
  Lab lab(std::string(kNodes) +
          "steps:\n"
          "  - address: {dev: eth1, cidr: 10.70.0.1/24}\n"
          "    node: a\n"
          "  - address: {dev: eth1, cidr: 10.70.0.2/24}\n"
          "    node: b\n"
          "  - address: {dev: eth1, cidr: 10.70.0.3/24}\n"
          "    node: a\n");
  lab.links.gone.insert("b");
  lab.run();
  CHECK(lab.step("address-1").status == StepStatus::Passed);
  CHECK(lab.step("address-2").status == StepStatus::Error);
  CHECK(lab.step("address-2").message == "node b died during the step: qemu of node b was killed");
  CHECK(lab.step("address-3").status == StepStatus::NotRun);
  CHECK(lab.links.asked.size() == 2);
}

TEST_CASE("node steps: facts go only to the other nodes, a pair's to the node that did not run it") {
  Lab lab(std::string(kNodes) +
          "steps:\n"
          "  - address: {dev: eth1, cidr: 10.70.0.1/24}\n"
          "    node: a\n"
          "  - name: across\n"
          "    rping: {server: 10.70.0.1, server_node: a, client: 10.70.0.2, client_node: b, count: 1}\n"
          "  - address: {dev: eth1, cidr: 10.70.0.2/24}\n"
          "    node: b\n"
          "  - address: {dev: eth1, cidr: 10.70.0.3/24}\n"
          "    node: a\n");
  lab.node("a").fake.tools.on_start = [](const sys::ToolSpec& s) {
    return sys::ProgramRun{.out = s.argv.at(1) == "__counters" ? "{}" : "server ping data: x\n",
                           .exit = sys::ExitStatus{}};
  };
  lab.node("b").fake.tools.on_start = [](const sys::ToolSpec&) {
    return sys::ProgramRun{.out = "ping data: x\n", .exit = sys::ExitStatus{}};
  };
  struct Spy : NodeLinks {
    TestNodes& inner;
    std::vector<nlohmann::json> messages;
    explicit Spy(TestNodes& i) : inner(i) {}
    Result<vm::ControlChannel::Received> ask(const std::string& node, const nlohmann::json& m) override {
      messages.push_back(m);
      return inner.ask(node, m);
    }
    std::string gone_because(const std::string& node) override { return inner.gone_because(node); }
  } spy(lab.links);
  for (auto& [name, n] : lab.links.nodes) REQUIRE(n->agent.start());
  run_node_steps(
      lab.scenario, lab.registry, spy, lab.quiet, [] { return false; }, false, lab.report,
      std::chrono::steady_clock::now());
  REQUIRE(spy.messages.size() == 4);
  for (const auto& s : lab.report.steps) CHECK(s.status == StepStatus::Passed);
  auto keys = [](const nlohmann::json& facts) {
    std::vector<std::string> k;
    for (const auto& [name, v] : facts.items()) k.push_back(name);
    return k;
  };
  // The pair ran on b (its client's node): b gets a's address, not its own pair's facts.
  CHECK(keys(spy.messages[1]["facts"]) == std::vector<std::string>{"address-1"});
  CHECK(keys(spy.messages[2]["facts"]) == std::vector<std::string>{"address-1"});
  // a gets what b ran: the pair and b's address, not its own address.
  CHECK(keys(spy.messages[3]["facts"]) == std::vector<std::string>{"across", "address-3"});
}
