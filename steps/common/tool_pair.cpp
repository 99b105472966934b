#include "steps/common/tool_pair.h"

#include <algorithm>
#include <sstream>

#include <spdlog/spdlog.h>

#include "base/duration.h"
#include "base/strings.h"
#include "base/try.h"
#include "steps/common/traffic.h"

namespace rxerun::steps {

namespace {

constexpr Duration kReadyBudget{10'000};  // how long a client may find nobody listening
constexpr Duration kProbeEvery{20};       // how often to ask whether the server listens
constexpr Duration kFirstBackoff{50};
constexpr Duration kMaxBackoff{400};
constexpr Duration kToolServerEnd{3'000};  // after a good client: time for the server to end by itself
// While the client runs, the server's output is read this often: a server
// that writes a line per round trip (rping -v) would otherwise fill its
// pipe and block, and the pair would stall.
constexpr Duration kDrainEvery{200};
constexpr Duration kStopGrace{1'000};  // SIGTERM to SIGKILL

std::string stuck_line(const std::string& name, const sys::RunningTool& t, const sys::ToolStop& s) {
  return name + " (pid " + std::to_string(t.pid()) + ") did not die after SIGKILL: it sleeps in the kernel" +
         (s.wchan.empty() ? "" : " at " + s.wchan) + " (a device being deleted, or an output-hook drop); let go";
}

}  // namespace

sys::ToolSpec pair_tool(std::vector<std::string> argv, std::optional<std::string> netns, std::string what) {
  return {std::move(argv), std::move(netns), {{"LC_ALL", "C"}}, std::move(what)};
}

std::string last_lines(const std::string& err, const std::string& out, int n) {
  return last_lines_of(trim(err).empty() ? out : err, n, " / ");
}

std::string nobody_listened_hint(const std::string& address, const std::string& server) {
  return "nothing listened at " + address + " when the client connected: " + server +
         " ended early, or another address or port";
}

std::string exit_fact(const std::optional<sys::ExitStatus>& s) {
  return s ? s->describe() : "stuck";
}

namespace {

// One run of a pair, as tool_pair.h tells it: the server, the clients it
// takes, and how both ended.
class PairRun {
 public:
  PairRun(StepContext& ctx, const ToolPairSpec& spec) : ctx_(ctx), sys_(ctx.sys()), spec_(spec) {}

  Result<ToolPairRun> run();

 private:
  // Starts the server and, with rdma_cm, waits until it listens: a client
  // that connects too early is refused, and a refusal at the wrong moment
  // can leave a server that serves one connection waiting for the wrong one.
  Result<void> start_server();
  // Starts a client and waits for it. Whether to start another (this one
  // was refused while the server still runs); else run_.end says how the
  // pair ended.
  Result<bool> attempt();
  // Waits for the client until the step's deadline, reading the server's
  // output meanwhile.
  sys::ToolWait wait_client();
  // Stops a tool that still runs and notes how it ended.
  void finish(sys::RunningTool& tool, std::optional<sys::ExitStatus>& exit, bool& stopped, const std::string& role);
  void finish_server() { finish(*server_, run_.server_exit, run_.server_stopped, "server"); }
  void finish_client() { finish(*client_, run_.client_exit, run_.client_stopped, "client"); }

  StepContext& ctx_;
  sys::System& sys_;
  const ToolPairSpec& spec_;
  ToolPairRun run_;
  std::unique_ptr<sys::RunningTool> server_, client_;
  sys::SteadyTime ready_until_{};  // the last moment a refused client is started again
  Duration backoff_ = kFirstBackoff;
};

void PairRun::finish(sys::RunningTool& tool, std::optional<sys::ExitStatus>& exit, bool& stopped,
                     const std::string& role) {
  stopped = !tool.poll().has_value();
  const sys::ToolStop s = tool.stop(kStopGrace);
  exit = s.status;
  if (s.stuck) run_.stuck.push_back(stuck_line(spec_.name + " " + role, tool, s));
}

Result<void> PairRun::start_server() {
  RXERUN_TRY_ASSIGN(server_, sys_.tools.start(spec_.server));
  run_.server_pid = server_->pid();
  const auto server_start = sys_.clock.now();
  if (!spec_.cm_port || !spec_.server_here) return {};
  for (;;) {
    auto up = sys_.rdma.cm_listening(*spec_.cm_port);
    if (!up) {
      spdlog::debug("{}: cannot tell whether the server listens ({}): starting the client", spec_.name,
                    up.error().message);
      return {};
    }
    if (*up) {
      run_.server_ready = std::chrono::duration_cast<Duration>(sys_.clock.now() - server_start);
      return {};
    }
    if (server_->poll()) return {};  // it ended: the client will find out
    if (sys_.clock.now() + kProbeEvery >= std::min(server_start + kReadyBudget, ctx_.deadline())) return {};
    if (ctx_.sleep_for(kProbeEvery) != WaitStatus::Done) return {};  // the client's wait reports it
  }
}

sys::ToolWait PairRun::wait_client() {
  for (;;) {
    const auto until = std::min(ctx_.deadline(), saturating_deadline(sys_.clock.now(), kDrainEvery));
    const sys::ToolWait w = client_->wait(until, sys_.interrupt);
    // A wait that gave up before `until` will not do better next time.
    if (w != sys::ToolWait::Deadline || until >= ctx_.deadline() || sys_.clock.now() < until) return w;
    (void)server_->poll();
  }
}

Result<bool> PairRun::attempt() {
  using End = ToolPairRun::End;
  if (client_) finish_client();
  auto started = sys_.tools.start(spec_.client);
  if (!started) {
    finish_server();
    return started.error();
  }
  client_ = std::move(*started);
  ++run_.attempts;
  run_.client_pid = client_->pid();
  const sys::ToolWait w = wait_client();
  if (w != sys::ToolWait::Exited) {
    run_.end = w == sys::ToolWait::Interrupted ? End::Interrupted : End::Deadline;
    return false;
  }
  if (client_->poll()->ok()) {
    run_.end = End::Done;
    return false;
  }
  const auto server_end = server_->poll();
  const bool refused = !server_end && spec_.refused && spec_.refused(client_->out(), client_->err());
  if (!refused || sys_.clock.now() + backoff_ >= std::min(ready_until_, ctx_.deadline())) {
    run_.end = server_end && !server_end->ok() ? End::ServerFailed : End::ClientFailed;
    return false;
  }
  spdlog::debug("{}: client {} refused ({}): starting it again", spec_.name, run_.attempts,
                last_lines(client_->err(), client_->out()));
  const WaitStatus slept = ctx_.sleep_for(backoff_);
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  if (slept != WaitStatus::Done) {
    run_.end = slept == WaitStatus::Interrupted ? End::Interrupted : End::Deadline;
    return false;
  }
  // Under rdma_cm the listening server saw the refused request and may
  // now wait on a connection that will never send (its receives posted
  // on the wrong QP: the next client's SENDs draw RNR NAKs for ever).
  // A fresh server serves the next client.
  if (spec_.cm_port) {
    finish_server();
    if (auto restarted = start_server(); !restarted) {
      finish_client();
      return restarted.error();
    }
  }
  return true;
}

Result<ToolPairRun> PairRun::run() {
  RXERUN_TRY(start_server());
  const auto first_start = sys_.clock.now();
  ready_until_ = first_start + kReadyBudget;
  for (bool again = true; again;) {
    RXERUN_TRY_ASSIGN(again, attempt());
  }
  run_.client_time = std::chrono::duration_cast<Duration>(sys_.clock.now() - first_start);

  // A server that served its client ends by itself in a moment; one that is
  // still waiting (the client failed, or stalled) is stopped now.
  finish_client();
  if (run_.end == ToolPairRun::End::Done && !server_->poll())
    server_->wait(std::min(ctx_.deadline(), sys_.clock.now() + kToolServerEnd), sys_.interrupt);
  finish_server();
  if (run_.end == ToolPairRun::End::Done && run_.server_exit && !run_.server_stopped && !run_.server_exit->ok())
    run_.end = ToolPairRun::End::ServerFailed;
  if (run_.end != ToolPairRun::End::Interrupted && sys_.interrupt.requested()) run_.end = ToolPairRun::End::Interrupted;

  run_.server_out = server_->out();
  run_.server_err = server_->err();
  run_.client_out = client_->out();
  run_.client_err = client_->err();
  return std::move(run_);
}

}  // namespace

Result<ToolPairRun> run_tool_pair(StepContext& ctx, const ToolPairSpec& spec) {
  return PairRun(ctx, spec).run();
}

nlohmann::json tool_pair_facts(const ToolPairRun& r) {
  nlohmann::json facts = {{"duration_s", rounded(r.client_time.count() / 1000.0, 3)},
                          {"attempts", r.attempts},
                          {"server_exit", exit_fact(r.server_exit)},
                          {"client_exit", exit_fact(r.client_exit)},
                          {"server_pid", r.server_pid},
                          {"client_pid", r.client_pid}};
  if (r.server_ready) facts["server_ready_s"] = rounded(r.server_ready->count() / 1000.0, 3);
  return facts;
}

std::vector<FactSpec> tool_pair_fact_specs() {
  return {
      {"changed", "always false: it changes nothing"},
      {"duration_s", "seconds from the first client's start to the last one's end"},
      {"attempts", "clients started: more than 1 when the first found the server not listening yet"},
      {"server_ready_s",
       "seconds from the server's start until rdma_cm listed it listening (the client starts then); absent when "
       "not probed"},
      {"server_exit", "how the server ended: exit 0, killed by SIGTERM (still waiting, stopped), stuck"},
      {"client_exit", "how the client ended: exit 0, exit 1, killed by SIGTERM (stalled, stopped), stuck"},
      {"server_pid", "the server's process id (gone when the step ends)"},
      {"client_pid", "the last client's process id (gone when the step ends)"},
      {"stuck", "tools that did not die after SIGKILL (asleep in the kernel); absent when none"},
      {"DEV.COUNTER", "deltas across the step of every rxe device's counters and of the netdevs of its namespaces"},
      {"NODE.DEV.COUNTER",
       "ends on two nodes: the same deltas on each node, named with the node in front (a.rxe0.rcvd_pkts, "
       "b.eth1.tx_packets)"},
  };
}

StepResult tool_pair_result(StepContext& ctx, const ToolPairRun& r, const CounterWindow& window, nlohmann::json facts,
                            const ToolPairWords& words) {
  using End = ToolPairRun::End;
  if (r.end == End::Interrupted) return StepResult::error("interrupted");

  nlohmann::json all = tool_pair_facts(r);
  all["changed"] = false;
  all.update(facts);
  RXERUN_TRY(window.close(ctx, all));

  StepResult result;
  if (r.end == End::Done) {
    result = words.done ? words.done(all) : StepResult::ok(all);
  } else if (r.end == End::Deadline) {
    const std::string client_said = words.quote_stalled ? last_lines(r.client_err, r.client_out) : "";
    result = StepResult::timeout(words.subject + " client was still running at the step's timeout" + words.progress +
                                     " (stopped)" + (client_said.empty() ? "" : ": " + client_said),
                                 all);
    const std::string server_said = words.quote_stalled ? last_lines(r.server_err, r.server_out) : "";
    if (!server_said.empty()) result.hints.push_back("the server's last lines: " + server_said);
    result.hints.insert(result.hints.end(), words.stalled_hints.begin(), words.stalled_hints.end());
  } else if (r.end == End::ServerFailed) {
    result = StepResult::fail(words.subject + " server ended with " + exit_fact(r.server_exit) + ": " +
                                  last_lines(r.server_err, r.server_out),
                              all);
    result.hints = words.failed_hints;
  } else {  // End::ClientFailed
    result = StepResult::fail(words.subject + " client ended with " + exit_fact(r.client_exit) + words.progress + ": " +
                                  last_lines(r.client_err, r.client_out),
                              all);
    result.hints = words.failed_hints;
  }
  if (!r.stuck.empty()) {
    result.facts["stuck"] = r.stuck.size();
    result.hints.insert(result.hints.end(), r.stuck.begin(), r.stuck.end());
  }
  return result;
}

}  // namespace rxerun::steps
