#pragma once
// A fake sys::Tools for step tests: each start() asks the test how that
// program behaves (what it writes, how and after how much virtual time it
// ends, or that it runs until stopped, or that not even SIGKILL ends it),
// and every start and stop is logged, so that a test sees what was run and
// that nothing was left running.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/duration.h"
#include "sys/tools.h"

namespace rxerun::fakes {

class FakeClock;

// How one started tool behaves.
struct FakeRun {
  std::string out, err;                 // what it writes (all of it, from the start)
  std::optional<sys::ExitStatus> exit;  // set: it ends so after `takes`; unset: it runs until stopped
  Duration takes{0};                    // virtual time it runs before ending by itself
  bool ignores_term = false;            // only SIGKILL ends it
  bool stuck = false;                   // not even SIGKILL: stuck in the kernel
};

class FakeTools final : public sys::Tools {
 public:
  Result<std::unique_ptr<sys::RunningTool>> start(const sys::ToolSpec& spec) override;
  Result<bool> listening(sys::SocketProto proto, std::uint16_t port) override;
  Result<bool> exists(const std::string& path) override;
  Result<std::vector<pid_t>> stop_marked(const std::string& token, Duration grace) override;

  // Readiness: what listens (proto, port) and which files exist; a probe
  // finds them only after `ready_after` probes have not.
  std::set<std::pair<sys::SocketProto, std::uint16_t>> sockets;
  std::set<std::string> files;
  int ready_after = 0;
  int probes = 0;
  // Processes left by a dead rxerun, by the token in their environment.
  std::map<std::string, std::vector<pid_t>> marked;
  std::vector<std::string> stopped_marked;  // tokens stop_marked() was asked for

  // Unset: every tool ends at once with exit 0 and no output.
  std::function<FakeRun(const sys::ToolSpec&)> on_start;
  std::optional<Error> error;  // set: start() fails with it
  FakeClock* clock = nullptr;  // set: `takes` and waits move this virtual time

  std::vector<sys::ToolSpec> started;  // in order
  // "start 1001 rping -s ...", "stop 1001 SIGTERM", "kill 1001", "stuck 1001", "drop 1001"
  std::vector<std::string> log;
  std::set<pid_t> alive;  // started, and neither ended nor stopped (a stuck one stays)

 private:
  pid_t next_pid_ = 1001;
};

}  // namespace rxerun::fakes
