#include "steps/common/tool_pair.h"

#include <algorithm>
#include <sstream>

#include <spdlog/spdlog.h>

#include "base/duration.h"
#include "base/strings.h"
#include "steps/common/traffic.h"

namespace rxerun::steps {

namespace {

constexpr Duration kReadyBudget{10'000};  // how long a client may find nobody listening
constexpr Duration kProbeEvery{20};       // how often to ask whether the server listens
constexpr Duration kFirstBackoff{50};
constexpr Duration kMaxBackoff{400};
constexpr Duration kServerEnd{3'000};  // after a good client: time for the server to end by itself
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

Result<ToolPairRun> run_tool_pair(StepContext& ctx, const ToolPairSpec& spec) {
  auto& sys = ctx.sys();
  ToolPairRun run;

  // Stops a tool that still runs and notes how it ended.
  auto finish = [&](sys::RunningTool& tool, std::optional<sys::ExitStatus>& exit, bool& stopped,
                    const std::string& role) {
    stopped = !tool.poll().has_value();
    const sys::ToolStop s = tool.stop(kStopGrace);
    exit = s.status;
    if (s.stuck) run.stuck.push_back(stuck_line(spec.name + " " + role, tool, s));
  };

  // Starts the server and, with rdma_cm, waits until it listens: a client
  // that connects too early is refused, and a refusal at the wrong moment
  // can leave a server that serves one connection waiting for the wrong one.
  std::unique_ptr<sys::RunningTool> server;
  auto start_server = [&]() -> Result<void> {
    auto started = sys.tools.start(spec.server);
    if (!started) return started.error();
    server = std::move(*started);
    run.server_pid = server->pid();
    const auto server_start = sys.clock.now();
    if (!spec.cm_port || !spec.server_here) return {};
    for (;;) {
      auto up = sys.rdma.cm_listening(*spec.cm_port);
      if (!up) {
        spdlog::debug("{}: cannot tell whether the server listens ({}): starting the client", spec.name,
                      up.error().message);
        return {};
      }
      if (*up) {
        run.server_ready = std::chrono::duration_cast<Duration>(sys.clock.now() - server_start);
        return {};
      }
      if (server->poll()) return {};  // it ended: the client will find out
      if (sys.clock.now() + kProbeEvery >= std::min(server_start + kReadyBudget, ctx.deadline())) return {};
      if (ctx.sleep_for(kProbeEvery) != WaitStatus::Done) return {};  // the client's wait reports it
    }
  };
  if (auto started = start_server(); !started) return started.error();

  const auto first_start = sys.clock.now();
  const auto ready_until = first_start + kReadyBudget;
  Duration backoff = kFirstBackoff;
  std::unique_ptr<sys::RunningTool> client;
  for (;;) {
    if (client) finish(*client, run.client_exit, run.client_stopped, "client");
    auto started = sys.tools.start(spec.client);
    if (!started) {
      finish(*server, run.server_exit, run.server_stopped, "server");
      return started.error();
    }
    client = std::move(*started);
    ++run.attempts;
    run.client_pid = client->pid();
    sys::ToolWait w;
    for (;;) {
      const auto until = std::min(ctx.deadline(), saturating_deadline(sys.clock.now(), kDrainEvery));
      w = client->wait(until, sys.interrupt);
      // A wait that gave up before `until` will not do better next time.
      if (w != sys::ToolWait::Deadline || until >= ctx.deadline() || sys.clock.now() < until) break;
      (void)server->poll();
    }
    if (w == sys::ToolWait::Interrupted) {
      run.end = ToolPairRun::End::Interrupted;
      break;
    }
    if (w == sys::ToolWait::Deadline) {
      run.end = ToolPairRun::End::Deadline;
      break;
    }
    const sys::ExitStatus status = *client->poll();
    if (status.ok()) {
      run.end = ToolPairRun::End::Done;
      break;
    }
    const auto server_end = server->poll();
    const auto now = sys.clock.now();
    if (!server_end && spec.refused && spec.refused(client->out(), client->err()) &&
        now + backoff < std::min(ready_until, ctx.deadline())) {
      spdlog::debug("{}: client {} refused ({}): starting it again", spec.name, run.attempts,
                    last_lines(client->err(), client->out()));
      const WaitStatus slept = ctx.sleep_for(backoff);
      backoff = std::min(backoff * 2, kMaxBackoff);
      if (slept != WaitStatus::Done) {
        run.end = slept == WaitStatus::Interrupted ? ToolPairRun::End::Interrupted : ToolPairRun::End::Deadline;
        break;
      }
      // Under rdma_cm the listening server saw the refused request and may
      // now wait on a connection that will never send (its receives posted
      // on the wrong QP: the next client's SENDs draw RNR NAKs for ever).
      // A fresh server serves the next client.
      if (spec.cm_port) {
        finish(*server, run.server_exit, run.server_stopped, "server");
        if (auto started = start_server(); !started) {
          finish(*client, run.client_exit, run.client_stopped, "client");
          return started.error();
        }
      }
      continue;
    }
    run.end = server_end && !server_end->ok() ? ToolPairRun::End::ServerFailed : ToolPairRun::End::ClientFailed;
    break;
  }
  run.client_time = std::chrono::duration_cast<Duration>(sys.clock.now() - first_start);

  // A server that served its client ends by itself in a moment; one that is
  // still waiting (the client failed, or stalled) is stopped now.
  finish(*client, run.client_exit, run.client_stopped, "client");
  if (run.end == ToolPairRun::End::Done && !server->poll())
    server->wait(std::min(ctx.deadline(), sys.clock.now() + kServerEnd), sys.interrupt);
  finish(*server, run.server_exit, run.server_stopped, "server");
  if (run.end == ToolPairRun::End::Done && run.server_exit && !run.server_stopped && !run.server_exit->ok())
    run.end = ToolPairRun::End::ServerFailed;
  if (run.end != ToolPairRun::End::Interrupted && sys.interrupt.requested()) run.end = ToolPairRun::End::Interrupted;

  run.server_out = server->out();
  run.server_err = server->err();
  run.client_out = client->out();
  run.client_err = client->err();
  return run;
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
  if (auto closed = window.close(ctx, all); !closed) return StepResult::error(closed.error());

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
