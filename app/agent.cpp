#include "app/agent.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "app/agent_tools.h"
#include "app/kernel_health.h"
#include "app/plugins.h"
#include "base/output.h"
#include "base/version.h"
#include "engine/runner.h"
#include "steps/common/traffic.h"
#include "sys/interrupt.h"
#include "sys/kernel_log.h"
#include "sys/links_rtnl.h"
#include "sys/modules.h"
#include "sys/real.h"
#include "sys/verbs/real.h"
#include "vm/control.h"

namespace rxerun {

namespace fs = std::filesystem;

namespace {

constexpr int kAgentProtocol = 1;

// Waits up to two seconds for `ready`: a device a module just registered
// shows in sysfs at once, or nearly.
template <class F>
bool settle(F ready) {
  for (int i = 0; i < 100; ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ready();
}

Result<void> load_module(sys::Modules& modules, const std::string& name) {
  if (auto loaded = modules.loaded(name); loaded && *loaded) return {};
  return modules.load(name, "");
}

// Gives this node's wire NICs the scenario's names. The kernel named them
// eth0, eth1, ... in probe order, which may be another wire's name: each
// takes a name of its own first, then its final one.
Result<void> name_wire_nics(const Scenario& scenario, const std::string& node, sys::Modules& modules) {
  std::vector<const WireEnd*> ends;
  for (const auto& w : scenario.wires)
    for (const WireEnd* e : {&w.a, &w.b})
      if (e->node == node) ends.push_back(e);
  if (ends.empty()) return {};
  if (auto r = load_module(modules, "virtio_net"); !r)
    return make_error("cannot load virtio_net: " + r.error().message, r.error().code);
  sys::RtnlLinks links;
  std::vector<std::string> found;
  for (const WireEnd* e : ends) {
    std::string name;
    if (!settle([&] { return !(name = sys::interface_with_mac(e->mac)).empty(); }))
      return make_error("no interface has the MAC address " + e->mac + " of wire NIC " + e->nic);
    found.push_back(name);
  }
  for (std::size_t i = 0; i < ends.size(); ++i) {
    const std::string interim = "rxwire" + std::to_string(i);
    if (auto r = links.rename(found[i], interim); !r) return r;
    found[i] = interim;
  }
  for (std::size_t i = 0; i < ends.size(); ++i)
    if (auto r = links.rename(found[i], ends[i]->nic); !r) return r;
  return {};
}

Result<vm::ControlChannel> open_control(sys::Modules& modules) {
  if (auto r = load_module(modules, "virtio_console"); !r)
    return make_error("cannot load virtio_console: " + r.error().message, r.error().code);
  Result<vm::ControlChannel> port = make_error("not tried");
  settle([&] { return static_cast<bool>(port = vm::open_agent_port()); });
  return port;
}

}  // namespace

int cmd_agent(const AgentOptions& o, Registry& registry) {
  auto fail = [&](const std::string& why) {
    print(stderr, "rxerun agent (node {}): {}\n", o.node, why);
    return 3;
  };
  auto scenario = load(o.scenario, registry, o.common);
  if (!scenario) return fail("cannot read the scenario " + o.scenario);
  if (!scenario->find_node(o.node)) return fail("the scenario has no node '" + o.node + "'");
  // The module tree's indexes, read once for the control port's module, the wires' and the steps'.
  sys::RealSystem real;
  auto channel = open_control(real.system().modules);
  if (!channel) return fail(channel.error().message);
  if (auto r = name_wire_nics(*scenario, o.node, real.system().modules); !r) {
    (void)channel->send({{"failed", r.error().message}});
    return fail(r.error().message);
  }
  auto journal = open_journal(scenario->name);
  if (!journal) {
    (void)channel->send({{"failed", "cannot open the scenario's journal"}});
    return fail("cannot open the scenario's journal");
  }
  load_journal_plugins(*journal, registry);

  real.interrupt().bind_signals();
  // Tools of a pair step whose other end is on another node run there
  // (app/agent_tools.h); this node runs such tools for the others.
  sys::System& local = real.system();
  ChannelToolLink link(*channel);
  RoutingTools tools(local.tools, link, o.node, local.clock);
  sys::System system = sys::with_tools(local, tools);
  ToolService service(local);
  RunOptions ro;
  ro.force = o.force;
  ro.only = o.common.only;
  ro.skip = o.common.skip;
  ro.output_dir = o.output_dir;
  ro.outputs_return = !o.output_dir.empty();
  ro.kernel_health = parse_kernel_health_policy(o.kernel_health);
  MultiReporter reporters;
  const auto running_note = guest_running_note(o.output_dir);  // for a kernel that dies: what it was doing
  if (running_note) reporters.add(*running_note);
  Runner runner(registry, system, *journal, reporters, ro);
  const nlohmann::json host = host_record();
  AgentSession session(*scenario, o.node, runner, service, host);
  const bool clean = session.start();
  if (auto r = channel->send({{"hello",
                               {{"protocol", kAgentProtocol},
                                {"node", o.node},
                                {"kernel", host.value("kernel", "")},
                                {"rxerun", RXERUN_VERSION},
                                {"preclean_clean", clean}}}});
      !r)
    return fail(r.error().message);

  for (;;) {
    auto got = channel->receive();
    if (!got) return fail(got.error().message);
    // The host gone (it died, or closed the channel): clean up as after
    // `finish`, though nobody reads the report.
    nlohmann::json reply = session.answer(got->message.value_or(nlohmann::json{{"finish", true}}));
    if (session.finished()) {
      reply["finished"]["host"]["kernel_messages"] = sys::rdma_kernel_messages();
      (void)channel->send(reply);
      return 0;
    }
    if (auto r = channel->send(reply); !r) return fail(r.error().message);
  }
}

AgentSession::AgentSession(const Scenario& scenario, std::string node, Runner& runner, ToolService& tools,
                           nlohmann::json host_record)
    : scenario_(scenario), node_(std::move(node)), runner_(runner), tools_(tools), host_(std::move(host_record)) {}

bool AgentSession::start() {
  report_ = runner_.start(scenario_);
  return report_.preclean.clean();
}

nlohmann::json AgentSession::answer(const nlohmann::json& message) {
  if (message.contains("tool")) return {{"tool_reply", tools_.handle(message["tool"])}};
  if (message.contains("step") && message["step"].is_string()) {
    const std::string name = message["step"].get<std::string>();
    const StepSpec* step = scenario_.find_step(name);
    if (!step) return {{"failed", "the scenario has no step '" + name + "'"}};
    std::map<std::string, nlohmann::json> facts;
    if (message.contains("facts") && message["facts"].is_object())
      for (const auto& [k, v] : message["facts"].items()) facts[k] = v;
    StepReport sr = runner_.step(scenario_, *step, facts);
    sr.node = node_;
    nlohmann::json sent = to_json(sr);
    runner_.record(report_, std::move(sr));
    return {{"step_report", std::move(sent)}};
  }
  if (message.contains("finish")) {
    runner_.finish(scenario_, report_);
    report_.host = host_;
    finished_ = true;
    return {{"finished", to_json(report_)}};
  }
  return {{"failed", "the agent does not know the message " + message.dump().substr(0, 80)}};
}

int cmd_verbs_server() {
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  const nlohmann::json given = nlohmann::json::parse(text, nullptr, false);
  if (given.is_discarded()) {
    print(stderr,
          "rxerun: __verbs-server: stdin is not JSON: it reads a verbs request, which a verbs step across two nodes "
          "sends\n");
    return 2;
  }
  Duration budget{0};
  auto request = sys::verbs_request_from_json(given, &budget);
  if (!request) {
    print(stderr, "rxerun: __verbs-server: {}\n", request.error().message);
    return 2;
  }
  sys::Interrupt interrupt;
  interrupt.bind_signals();
  return sys::serve_verbs(*request, std::chrono::steady_clock::now() + budget, interrupt.fd(), STDOUT_FILENO);
}

int cmd_counters(const std::optional<std::string>& netns) {
  sys::RealSystem real;
  auto counters = steps::CounterWindow::read(real.system(), {netns});
  if (!counters) {
    print(stderr, "rxerun: __counters: {}\n", counters.error().message);
    return 1;
  }
  print(stdout, "{}\n", nlohmann::json(*counters).dump());
  return 0;
}

}  // namespace rxerun
