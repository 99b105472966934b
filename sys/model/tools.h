#pragma once
// Programs in the model (sys/model/kernel.h): each start() asks `on_start`
// how that program behaves (what it writes, how and after how much virtual
// time it ends, that it runs until stopped, or that not even SIGKILL ends
// it); unset, it ends at once with exit 0 and writes nothing (what a plan
// assumes). Starts are logged as the command a person would type; starts
// and stops as events, so that a test sees that nothing was left running.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sys/model/clock.h"
#include "sys/tools.h"

namespace rxerun::sys {

// How one started program behaves.
struct ProgramRun {
  std::string out, err;            // what it writes (all of it, from the start)
  std::optional<ExitStatus> exit;  // set: it ends so after `takes`; unset: it runs until stopped
  Duration takes{0};               // virtual time it runs before ending by itself
  bool ignores_term = false;       // only SIGKILL ends it
  bool stuck = false;              // not even SIGKILL: stuck in the kernel
};

// The command as a person would type it, the environment first:
// `LC_ALL=C ip netns exec NS ib_write_bw ...` hands it through.
std::string tool_command_line(const ToolSpec& spec);

class ModelTools final : public Tools {
 public:
  explicit ModelTools(ModelKernel& k) : k_(k) {}
  Result<std::unique_ptr<RunningTool>> start(const ToolSpec& spec) override;
  // Found once `ready_after` probes have not (open world: always).
  Result<bool> listening(SocketProto proto, std::uint16_t port) override;
  Result<bool> exists(const std::string& path) override;
  // The pids of `marked` under the token.
  Result<std::vector<pid_t>> stop_marked(const std::string& token, Duration grace) override;
  std::string random_word(std::size_t length) override;

  std::function<ProgramRun(const ToolSpec&)> on_start;
  ModelClock* clock = nullptr;  // set: `takes` and waits move this virtual time
  // Readiness: what listens (proto, port) and which files exist.
  std::set<std::pair<SocketProto, std::uint16_t>> sockets;
  std::set<std::string> files;
  int ready_after = 0;
  int probes = 0;
  // Processes left by a dead rxerun, by the token in their environment.
  std::map<std::string, std::vector<pid_t>> marked;
  std::vector<std::string> stopped_marked;  // tokens stop_marked() was asked for
  unsigned long words_ = 0;                 // random_word()s given

  std::vector<ToolSpec> started;  // in order
  // "start 1001 rping -s ...", "stop 1001" (SIGTERM), "kill 1001", "stuck 1001", "drop 1001"
  std::vector<std::string> log;
  std::set<pid_t> alive;  // started, and neither ended nor stopped (a stuck one stays)

 private:
  ModelKernel& k_;
  pid_t next_pid_ = 1001;
};

}  // namespace rxerun::sys
