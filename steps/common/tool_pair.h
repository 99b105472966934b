#pragma once
// A server tool and its client (rping -s / rping -c, ib_write_bw and
// ib_write_bw ADDR), run the way rping and perftest both need:
// - the server first; the client when the server is READY, without a fixed
//   sleep: the client is started at once and started again, with a short
//   backoff, while it finds nobody listening (REJECTED, connection refused)
//   and the server still runs, for at most a few seconds. A listener is up
//   within milliseconds of the server's start, so this costs a retry or two
//   at most and never a guessed delay; a server that ended (it could not
//   bind its address) ends the retries at once. With rdma_cm the server is
//   started afresh before each new client (one that saw a refused request
//   may wait on the wrong connection for ever).
// - the client under the step's deadline and Ctrl-C;
// - at the end, on every path, both stopped (SIGTERM, SIGKILL) before the
//   step returns, so that no workload outlives it (an rxe device cannot be
//   deleted while a verbs user holds it); a tool that survives SIGKILL is
//   reported, not waited for.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/kind.h"
#include "engine/step.h"
#include "sys/tools.h"

namespace rxerun::steps {

class CounterWindow;

// Which end of the pair a command line is for.
enum class ToolRole { Server, Client };

// A tool of a pair: rxerun parses its output (refusals, hints, facts), so it
// runs in the C locale (LC_ALL=C), whatever the user's is.
sys::ToolSpec pair_tool(std::vector<std::string> argv, std::optional<std::string> netns, std::string what);

struct ToolPairSpec {
  sys::ToolSpec server, client;
  std::string name;  // "rping", "ib_write_bw": in messages
  // The client found nobody listening (judged from its output): try again.
  std::function<bool(const std::string& out, const std::string& err)> refused;
  // The server's rdma_cm port: whether it listens there yet (rdma_cm's
  // resource tracking) is polled before the first client starts. Unset (no
  // rdma_cm), or when the probe fails, the client is started at once and
  // `refused` decides.
  std::optional<std::uint16_t> cm_port;
  // Whether the server runs on this kernel, so that its listener can be
  // looked up; false when it runs on another node of a two-node lab (then
  // the client is started at once and `refused` decides).
  bool server_here = true;
};

struct ToolPairRun {
  enum class End {
    Done,          // the client ended well
    ClientFailed,  // the client ended badly
    ServerFailed,  // the server ended badly before the client was through
    Deadline,      // the client still ran at the step's deadline (it was stopped)
    Interrupted,   // Ctrl-C (both were stopped)
  };
  End end = End::ClientFailed;
  std::optional<sys::ExitStatus> server_exit, client_exit;  // unset: stuck
  bool server_stopped = false;                              // it did not end by itself: rxerun stopped it
  bool client_stopped = false;
  std::string server_out, server_err, client_out, client_err;  // the last client's
  pid_t server_pid = 0, client_pid = 0;                        // the last ones started
  int attempts = 0;                                            // clients started
  std::optional<Duration> server_ready;  // from the last server's start until the probe saw it listen
  Duration client_time{0};               // from the first client's start to the last one's end
  std::vector<std::string> stuck;        // one line per tool that did not die

  // All that the two tools wrote, for the hints to search.
  std::string output() const { return client_err + client_out + server_err + server_out; }
};

// An Error only when a tool could not be started at all (not installed, no
// such namespace); everything a tool did is in the ToolPairRun.
Result<ToolPairRun> run_tool_pair(StepContext& ctx, const ToolPairSpec& spec);

// The last `n` non-empty lines of a tool's stderr (else its stdout), joined
// with " / ": what a failure message quotes.
std::string last_lines(const std::string& err, const std::string& out, int n = 3);

// The hint for a client refused at `address`: `server` ("the server",
// "the server (rxe0)") ended early, or the client asked elsewhere.
std::string nobody_listened_hint(const std::string& address, const std::string& server);

// "exit 0", "killed by SIGTERM", "stuck": a tool's end as a fact.
std::string exit_fact(const std::optional<sys::ExitStatus>& s);

// The facts every tool pair reports: duration_s, attempts, server_ready_s
// (when the server was probed), server_exit, client_exit, server_pid,
// client_pid.
nlohmann::json tool_pair_facts(const ToolPairRun& r);

// Their descriptions, then stuck's and DEV.COUNTER's: the tail of a tool pair
// kind's facts in the registry.
std::vector<FactSpec> tool_pair_fact_specs();

// How a kind words the end of its tool pair; tool_pair_result() builds the
// rest of the result the same way for every kind.
struct ToolPairWords {
  // What " server ended with ..." and " client ..." follow: "the rping",
  // "ib_write_bw".
  std::string subject;
  // Said of the client when it failed or stalled (" after 2 of 5 round
  // trips"); empty when the kind counts nothing.
  std::string progress;
  // Whether a stalled client's message quotes its last lines, and a hint the
  // server's: perftest's tell where it hung; rping's only repeat the round
  // trips already counted.
  bool quote_stalled = false;
  std::vector<std::string> stalled_hints;  // likely causes of a client still running at the deadline
  std::vector<std::string> failed_hints;   // likely causes of a tool that ended badly, from what the tools wrote
  // The result when the client ended well: StepResult::ok(facts) when unset.
  std::function<StepResult(const nlohmann::json& facts)> done;
};

// The step's result once run_tool_pair() is through. After Ctrl-C the error
// "interrupted", with nothing measured. Else the kind's `facts` with
// tool_pair_facts(), changed: false and the counter deltas of `window`; the
// outcome of r.end in `words` (a failure quotes the last lines of the tool
// that failed); and every stuck tool, as the fact "stuck" and a hint each.
StepResult tool_pair_result(StepContext& ctx, const ToolPairRun& r, const CounterWindow& window, nlohmann::json facts,
                            const ToolPairWords& words);

}  // namespace rxerun::steps
