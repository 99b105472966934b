#include "app/nodes.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/cli_vm.h"
#include "app/node_steps.h"
#include "app/prefixed_lines.h"
#include "base/fd.h"
#include "base/output.h"
#include "base/strings.h"
#include "engine/exit_code.h"
#include "engine/nodes.h"
#include "engine/picture.h"
#include "engine/runner.h"
#include "sys/interrupt.h"
#include "sys/process.h"
#include "vm/boot_protocol.h"
#include "vm/control.h"
#include "vm/lab_vm.h"

namespace rxerun {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

namespace {

// How long a node may take from qemu's start to its agent's hello. Two lab
// VMs boot side by side in 10-30 s under software emulation.
constexpr std::chrono::seconds kHelloLimit{240};

// Stops every node's lab VM at once. run_lab stops qemu when its
// interrupt_fd becomes readable: this pipe's read end is that fd for every
// node. A watcher passes Ctrl-C on to it at once, whatever the run is
// doing; the run itself stops the VMs that cannot end by themselves.
class StopAll {
 public:
  explicit StopAll(const sys::Interrupt& interrupt) {
    int fds[2], quit[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      read_.reset(fds[0]);
      write_.reset(fds[1]);
    }
    if (::pipe2(quit, O_CLOEXEC) == 0) {
      quit_read_.reset(quit[0]);
      quit_write_.reset(quit[1]);
    }
    watcher_ = std::thread([this, fd = interrupt.fd()] {
      pollfd p[2] = {{fd, POLLIN, 0}, {quit_read_.get(), POLLIN, 0}};
      while (::poll(p, 2, -1) < 0 && errno == EINTR) {
      }
      if (p[0].revents & POLLIN) stop();
    });
  }
  ~StopAll() {
    (void)!::write(quit_write_.get(), "q", 1);
    watcher_.join();
  }
  StopAll(const StopAll&) = delete;
  StopAll& operator=(const StopAll&) = delete;
  void stop() { (void)!::write(write_.get(), "s", 1); }
  int fd() const { return read_.get(); }

 private:
  UniqueFd read_, write_, quit_read_, quit_write_;
  std::thread watcher_;
};

// One node: its lab VM (run in a thread of its own) and its agent's channel.
struct Node {
  const NodeSpec* spec = nullptr;
  vm::PreparedKernel kernel;
  std::optional<vm::ShareDir> share;
  std::vector<vm::WireNic> wires;
  std::thread thread;
  std::atomic<bool> ended{false};
  std::optional<Result<vm::LabRunResult>> lab;  // once `ended`
  std::optional<vm::ControlChannel> channel;
  std::string release;    // the guest's kernel, from its agent's hello
  bool gone = false;      // its lab VM ended before the run did
  bool finished = false;  // its agent cleaned up and said so: its VM powers off by itself
  std::unique_ptr<PrefixedLines> output;

  fs::path control() const { return share->path() / "control"; }
  std::string name() const { return spec->name; }
  // Why the node's lab VM ended, with its console's last lines (after `ended`).
  std::string ended_because() const {
    if (!lab) return "its lab VM is still running";
    if (!*lab) return "its lab VM could not start: " + lab->error().message;
    return crash_message(**lab, "node " + spec->name + ", kernel " + kernel.label);
  }
};

// The lab kernel of `node`: its own, else the scenario's vm.kernel, else the
// newest prepared. nullopt when that one is not prepared (`why` says so).
std::optional<vm::PreparedKernel> kernel_of(const NodeSpec& node, const Scenario& scenario,
                                            const std::vector<vm::PreparedKernel>& prepared, std::string* why) {
  const std::optional<std::string> wanted = node.kernel ? node.kernel : scenario.vm_kernel;
  if (!wanted) {
    if (!prepared.empty()) return prepared.front();
    *why = "node " + node.name + ": no lab kernel is prepared: run `rxerun vm setup`";
    return std::nullopt;
  }
  for (const auto& k : prepared)
    if (k.label == *wanted) return k;
  *why = fmt::format("node {}: lab kernel {} is not prepared: run `rxerun vm setup --kernel {}`", node.name, *wanted,
                     *wanted);
  return std::nullopt;
}

// The guest's command: this scenario's agent for `node`, with what the host
// was given.
std::vector<std::string> agent_args(const RunCommandOptions& o, const Scenario& scenario, const std::string& node) {
  std::vector<std::string> args{"__agent", scenario.file, "--node", node};
  for (auto& arg : run_arguments(agent_run_options(o, std::string(vm::kShareMount) + "/output"), WithScenarios::no))
    args.push_back(std::move(arg));
  return args;
}

// Connects to the node's control socket and waits for its agent's hello.
// A boot that failed once and is tried again makes a new socket: the
// connection is made again then.
Result<nlohmann::json> await_hello(Node& node, int interrupt_fd) {
  const auto until = SteadyClock::now() + kHelloLimit;
  while (SteadyClock::now() < until) {
    if (node.ended) return make_error(node.ended_because());
    auto channel = vm::connect_control(node.control(), std::chrono::milliseconds(500));
    if (!channel) continue;
    node.channel.emplace(std::move(*channel));
    auto got = node.channel->receive(interrupt_fd);
    if (!got) return got.error();
    if (got->stopped) return make_error("interrupted");
    if (got->closed) {
      node.channel.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const nlohmann::json& m = *got->message;
    if (m.contains("failed")) return make_error("its agent could not start: " + m["failed"].dump());
    if (!m.contains("hello") || !m["hello"].is_object())
      return make_error("its agent said " + m.dump().substr(0, 120) + " instead of hello");
    return m["hello"];
  }
  return make_error(fmt::format("its agent did not say hello within {} s", kHelloLimit.count()));
}

// The node's next message, once every tool call it makes on another node
// (app/agent_tools.h) has been passed on and answered.
Result<vm::ControlChannel::Received> receive_serving_tools(Node& node, const std::map<std::string, Node*>& nodes,
                                                           int interrupt_fd) {
  for (;;) {
    auto got = node.channel->receive(interrupt_fd);
    if (!got || !got->message || !got->message->contains("tool")) return got;
    const nlohmann::json& request = (*got->message)["tool"];
    const std::string target = request.value("node", "");
    nlohmann::json reply;
    const auto it = nodes.find(target);
    Node* other = it == nodes.end() ? nullptr : it->second;
    if (!other || other == &node || !other->channel || other->gone) {
      reply = {{"error", "node " + target + " cannot run a tool: " +
                             (other ? std::string("it is gone") : std::string("no such node"))}};
    } else if (auto sent = other->channel->send({{"tool", request}}); !sent) {
      reply = {{"error", "node " + target + " is gone: " + sent.error().message}};
    } else {
      auto answer = other->channel->receive(interrupt_fd);
      if (answer && answer->stopped) return answer;
      if (answer && answer->message && answer->message->contains("tool_reply"))
        reply = (*answer->message)["tool_reply"];
      else
        reply = {{"error", "node " + target + " died"}};
    }
    if (auto sent = node.channel->send({{"tool_reply", reply}}); !sent) return sent.error();
  }
}

// The lab VMs' control channels, as run_node_steps reaches the agents.
class VmNodeLinks final : public NodeLinks {
 public:
  VmNodeLinks(const std::map<std::string, Node*>& nodes, int interrupt_fd)
      : nodes_(nodes), interrupt_fd_(interrupt_fd) {}
  Result<vm::ControlChannel::Received> ask(const std::string& name, const nlohmann::json& message) override {
    Node& node = *nodes_.at(name);
    if (!node.channel || node.gone) return make_error("node " + name + " is gone");
    if (auto sent = node.channel->send(message); !sent) return sent.error();
    return receive_serving_tools(node, nodes_, interrupt_fd_);
  }
  std::string gone_because(const std::string& name) override {
    Node& node = *nodes_.at(name);
    node.gone = true;
    if (node.thread.joinable()) node.thread.join();
    return node.ended_because();
  }

 private:
  const std::map<std::string, Node*>& nodes_;
  int interrupt_fd_;
};

// A two-node lab's lab VMs, from their making to their end, and what each
// node's agent reported at its end.
class NodeLab {
 public:
  NodeLab(const RunCommandOptions& o, const Scenario& scenario) : o_(o), scenario_(scenario) {}
  NodeLab(const NodeLab&) = delete;
  NodeLab& operator=(const NodeLab&) = delete;

  const std::map<std::string, Node*>& by_name() const { return by_name_; }

  // Each node's kernel and share, and the wires between the shares; the
  // error says why a node cannot be made.
  Result<void> prepare(const std::vector<vm::PreparedKernel>& prepared) {
    for (const auto& spec : scenario_.nodes) {
      auto node = std::make_unique<Node>();
      node->spec = &spec;
      std::string why;
      auto kernel = kernel_of(spec, scenario_, prepared, &why);
      if (!kernel) return make_error(why);
      node->kernel = *kernel;
      auto share = vm::ShareDir::create();
      if (!share) return make_error(share.error().message);
      node->share.emplace(std::move(*share));
      // Files the node's steps write (captures) go here and come back after the run.
      std::error_code ec;
      fs::create_directories(node->share->path() / "output", ec);
      if (ec) return make_error("cannot create " + (node->share->path() / "output").string() + ": " + ec.message());
      by_name_[spec.name] = node.get();
      nodes_.push_back(std::move(node));
    }
    // Each wire: a datagram socket in each end's share; each end sends to the other's.
    for (std::size_t i = 0; i < scenario_.wires.size(); ++i) {
      const WireSpec& w = scenario_.wires[i];
      Node& a = *by_name_.at(w.a.node);
      Node& b = *by_name_.at(w.b.node);
      const std::string file = "wire" + std::to_string(i);
      a.wires.push_back({w.a.mac, a.share->path() / file, b.share->path() / file});
      b.wires.push_back({w.b.mac, b.share->path() / file, a.share->path() / file});
    }
    return {};
  }

  // Boots every node's lab VM at once, each in a thread of its own, its
  // output prefixed with the node's name. Ctrl-C stops them all.
  void boot(const std::string& exe, std::chrono::seconds budget, const sys::Interrupt& interrupt) {
    stop_all_.emplace(interrupt);
    const vm::Accel accel = vm::choose_accel(vm::boot_image(nodes_.front()->kernel));
    for (auto& n : nodes_) {
      Node& node = *n;
      node.output = std::make_unique<PrefixedLines>(output_lock_, "[" + node.name() + "] ");
      vm::LabRun run;
      run.kernel = node.kernel;
      run.kvm = accel.kvm;
      run.wires = node.wires;
      run.control = node.control();
      run.exe = exe;
      run.share = node.share->path();
      run.run_timeout = budget;
      const char* term = std::getenv("TERM");
      run.request = {.program = "",
                     .args = agent_args(o_, scenario_, node.name()),
                     .cwd = fs::current_path().string(),
                     .term = term ? term : "dumb"};
      run.output = [&node](std::string_view bytes) { (*node.output)(bytes); };
      run.started = [&node, quiet = o_.quiet, accel](double secs, bool restored) {
        if (!quiet) (*node.output)(up_line(node.kernel, accel.kvm ? "kvm" : "tcg", secs, restored));
      };
      run.notice = [&node](const std::string& line) { (*node.output)("rxerun: " + line + "\n"); };
      run.interrupt_fd = stop_all_->fd();
      node.thread = std::thread([&node, run = std::move(run)]() {
        node.lab.emplace(vm::run_lab(run));
        node.ended = true;
      });
    }
  }

  // Waits for each agent's hello, in order. Whether the steps must not run
  // (`report.error` says why): an agent that did not say hello, a node
  // whose preclean left something behind.
  bool greet(int interrupt_fd, RunReport& report) {
    bool stop = false;
    for (auto& n : nodes_) {
      auto hello = await_hello(*n, interrupt_fd);
      if (!hello) {
        report.error = "node " + n->name() + ": " + hello.error().message;
        return true;
      }
      n->release = hello->value("kernel", "");
      if (!hello->value("preclean_clean", true)) {
        report.error = "node " + n->name() + ": its preclean left something behind";
        stop = true;
      }
    }
    return stop;
  }

  // Each node cleans up its own lab and sends its whole report, which goes
  // into `report`: its undos, its kernel's findings.
  void finish(int interrupt_fd, RunReport& report) {
    report.preclean.phase = "preclean";
    report.cleanup.phase = "cleanup";
    for (auto& n : nodes_) {
      Node& node = *n;
      if (report.interrupted || node.gone || !node.channel) continue;
      Result<vm::ControlChannel::Received> got = make_error("closed");
      if (auto sent = node.channel->send({{"finish", true}}); sent) got = node.channel->receive(interrupt_fd);
      if (got && got->message && got->message->contains("finished")) {
        node.finished = true;
        merge_node_report(node, (*got->message)["finished"], report);
      } else if (got && got->stopped) {
        report.interrupted = true;
      } else {
        node.gone = true;
        report.cleanup.undos.push_back({.step = "",
                                        .kind = "node",
                                        .summary = "clean up node " + node.name(),
                                        .ok = false,
                                        .error = "node " + node.name() +
                                                 " died during cleanup (nothing of it outlives "
                                                 "its lab VM): " +
                                                 node.ended_because()});
      }
    }
  }

  // No lab VM outlives the run: the nodes that finished power off by
  // themselves; then every one still running is stopped.
  void shut_down() {
    for (auto& n : nodes_)
      if (n->finished && n->thread.joinable()) n->thread.join();
    if (stop_all_) stop_all_->stop();
    for (auto& n : nodes_)
      if (n->thread.joinable()) n->thread.join();
    stop_all_.reset();
  }

  // Once shut down: each node's lab VM in the report (with what its RDMA
  // stack logged), the nodes' kernels, and the files the nodes' steps wrote,
  // brought back.
  void collect(RunReport& report) const {
    nlohmann::json vm_nodes = nlohmann::json::object();
    for (const auto& n : nodes_) {
      const Node& node = *n;
      if (node.lab && *node.lab) {
        nlohmann::json facts_of_vm = vm_facts(node.kernel, **node.lab);
        const auto messages = kernel_messages_.find(node.name());
        facts_of_vm["kernel_messages"] =
            messages != kernel_messages_.end() ? messages->second : nlohmann::json::array();
        vm_nodes[node.name()] = std::move(facts_of_vm);
      }
      if (auto r = bring_back_outputs(node.share->path() / "output", o_.output_dir.empty() ? "." : o_.output_dir); !r)
        print(stderr, "rxerun: node {}: {}\n", node.name(), r.error().message);
    }
    report.vm = {{"nodes", vm_nodes}};
    report.kernel_health.kernel = join(releases_, ", ");
  }

 private:
  // A node's report at its end, into the run's: its preclean's and
  // cleanup's undos (named with the node), its kernel's findings and what
  // its RDMA stack logged.
  void merge_node_report(const Node& node, const nlohmann::json& finished, RunReport& report) {
    auto run = run_report_from_json(finished);
    if (!run) {
      report.error = "node " + node.name() + " sent a report rxerun cannot read: " + run.error().message;
      return;
    }
    for (auto* phase : {&report.preclean, &report.cleanup}) {
      const CleanupReport& theirs = phase == &report.preclean ? run->preclean : run->cleanup;
      for (UndoReport u : theirs.undos) {
        u.summary = "[" + node.name() + "] " + u.summary;
        phase->undos.push_back(std::move(u));
      }
      phase->interrupted |= theirs.interrupted;
    }
    for (auto f : run->kernel_health.findings) {
      f.node = node.name();
      report.kernel_health.findings.push_back(std::move(f));
    }
    if (!run->kernel_health.kernel.empty()) releases_.push_back(node.name() + ": " + run->kernel_health.kernel);
    kernel_messages_[node.name()] = run->host.value("kernel_messages", nlohmann::json::array());
  }

  const RunCommandOptions& o_;
  const Scenario& scenario_;
  std::mutex output_lock_;  // the nodes' output, a whole line at a time
  std::vector<std::unique_ptr<Node>> nodes_;
  std::map<std::string, Node*> by_name_;
  std::optional<StopAll> stop_all_;                        // from boot() to shut_down()
  std::map<std::string, nlohmann::json> kernel_messages_;  // by node: what its RDMA stack logged
  std::vector<std::string> releases_;                      // "a: 6.1.0-...", from the nodes' reports
};

// The report of a two-node lab's run before anything runs.
RunReport node_lab_report(const RunCommandOptions& o, const Scenario& scenario) {
  RunReport report;
  report.file = scenario.file;
  report.scenario = scenario.name;
  report.description = scenario.description;
  report.started_at = now_iso8601();
  report.kernel_health.policy = parse_kernel_health_policy(o.kernel_health).value_or(scenario.kernel_health);
  report.host = host_record();
  return report;
}

}  // namespace

RunReport run_nodes(const RunCommandOptions& o, const Scenario& scenario, const Registry& registry,
                    const std::vector<vm::PreparedKernel>& prepared, const sys::Interrupt* given_interrupt) {
  RunReport report = node_lab_report(o, scenario);
  report.picture = picture_json(picture_of(scenario, registry));
  const auto start = SteadyClock::now();
  auto failed = [&](std::string why) {
    print(stderr, "rxerun: {}: {}\n", scenario.name, why);
    report.error = std::move(why);
    report.exit_code = kExitEnvironment;
    return report;
  };
  const auto exe = own_binary();
  if (!exe) return failed("cannot find its own binary (/proc/self/exe)");
  NodeLab lab(o, scenario);
  if (auto made = lab.prepare(prepared); !made) return failed(made.error().message);

  TerminalReporter terminal(stdout, terminal_style(o));
  terminal.run_started(scenario);
  std::optional<sys::Interrupt> own_interrupt;
  if (!given_interrupt) {
    own_interrupt.emplace();
    own_interrupt->bind_signals();
  }
  const sys::Interrupt& interrupt = given_interrupt ? *given_interrupt : *own_interrupt;
  lab.boot(*exe, lab_run_budget(scenario, registry), interrupt);
  const bool stop = lab.greet(interrupt.fd(), report);
  if (interrupt.requested()) report.interrupted = true;
  VmNodeLinks links(lab.by_name(), interrupt.fd());
  run_node_steps(
      scenario, registry, links, terminal, [&] { return interrupt.requested(); }, stop, report, start);

  lab.finish(interrupt.fd(), report);
  if (report.interrupted) terminal.note("interrupted: the lab VMs were stopped (nothing of them is left)");
  lab.shut_down();
  lab.collect(report);
  terminal.cleanup_finished(report.cleanup);
  report.duration = std::chrono::duration_cast<Duration>(SteadyClock::now() - start);
  report.exit_code = exit_code_for(report);
  if (!report.error.empty() && report.exit_code == kExitOk) report.exit_code = kExitEnvironment;
  if (!report.error.empty()) print(stderr, "rxerun: {}: {}\n", scenario.name, report.error);
  terminal.run_finished(report);
  return report;
}

}  // namespace rxerun
