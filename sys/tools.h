#pragma once
// Programs that steps run (rping, perftest): no shell, each in its own
// process group, in a named network namespace when asked, with a deadline.
//
// A started tool runs until it ends by itself or is stopped; its stdout and
// stderr are captured (drained while waiting, so that a chatty tool never
// blocks on a full pipe). Stopping is SIGTERM, then SIGKILL after a grace;
// a process that survives SIGKILL is stuck in the kernel (D state: a
// verbs user whose device is being deleted, rxe retrying a dropped send):
// it is reported, with its pid and kernel wait channel, and let go rather
// than waited on for ever. Every tool dies with rxerun (PR_SET_PDEATHSIG).

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/duration.h"
#include "base/result.h"
#include "sys/clock.h"
#include "sys/process.h"

namespace rxerun::sys {

struct ToolSpec {
  std::vector<std::string> argv;           // argv[0] looked up in PATH
  std::optional<std::string> netns;        // a named namespace (/run/netns); unset: the caller's
  std::map<std::string, std::string> env;  // set in the tool's environment (LC_ALL=C)
  std::string what;                        // in words, for `plan`: "rping server on 10.0.0.1:7174"
  std::string cwd;                         // its working directory; empty: rxerun's
  // In a two-node lab: the node it runs on, when that is not the node
  // running the step (rping's server on node a, its client on node b). ""
  // here.
  std::string node;
  std::optional<std::string> input;  // all of its stdin; unset: /dev/null
  // Each stream keeps at most about this many of its last bytes in memory
  // (between keep_bytes and twice that); 0: all of it.
  std::size_t keep_bytes = 0;
  // Set: every byte of the stream is also handed here as it is read (the
  // whole output to a file, whatever keep_bytes keeps).
  std::function<void(std::string_view)> copy_out, copy_err;
};

enum class ToolWait {
  Exited,       // it ended by itself
  Deadline,     // still running at the deadline
  Interrupted,  // Ctrl-C / SIGTERM reached rxerun; still running
};

// How a stop ended.
struct ToolStop {
  std::optional<ExitStatus> status;  // how it ended; unset when it did not (stuck)
  bool stuck = false;                // survived SIGKILL: let go, not reaped
  std::string wchan;                 // stuck: /proc/PID/wchan, where it sleeps in the kernel ("" unreadable)
};

class RunningTool {
 public:
  // Stops a tool that still runs (stop() with a short grace).
  virtual ~RunningTool() = default;
  virtual pid_t pid() const = 0;
  // The exit status once it has ended; nullopt while it runs. Never blocks.
  virtual std::optional<ExitStatus> poll() = 0;
  // Until it ends, the deadline passes or the interrupt fires, whichever is first.
  virtual ToolWait wait(SteadyTime deadline, Interrupt& interrupt) = 0;
  // SIGTERM to its process group, SIGKILL after `grace`; then a bounded wait.
  // A tool that has ended already just answers how.
  virtual ToolStop stop(Duration grace) = 0;
  // What it wrote so far (its last bytes, with ToolSpec::keep_bytes).
  virtual const std::string& out() const = 0;
  virtual const std::string& err() const = 0;
  // How many bytes it wrote in all, kept or not.
  virtual std::uint64_t out_total() const { return out().size(); }
  virtual std::uint64_t err_total() const { return err().size(); }
};

enum class SocketProto { Tcp, Udp };

class Tools {
 public:
  virtual ~Tools() = default;
  // The error names the program when it cannot be started (not installed),
  // or the namespace when it cannot be entered (ENOENT: no such namespace).
  virtual Result<std::unique_ptr<RunningTool>> start(const ToolSpec& spec) = 0;

  // Whether a program is ready, for exec's `ready:`. A TCP socket listening
  // on `port`, or a UDP socket bound to it, in the calling thread's network
  // namespace, as the kernel's socket tables list it (IPv4 and IPv6).
  virtual Result<bool> listening(SocketProto proto, std::uint16_t port) = 0;
  // Whether `path` exists (a program's ready file).
  virtual Result<bool> exists(const std::string& path) = 0;

  // Stops every process whose environment holds `token` as a whole entry
  // (NAME=VALUE): what a program started with that entry, and all it
  // started, left running when its rxerun died. Nothing else is signalled,
  // whatever its name or pid. SIGTERM, then SIGKILL after `grace`. Returns
  // the pids it stopped.
  virtual Result<std::vector<pid_t>> stop_marked(const std::string& token, Duration grace) = 0;

  // A fresh random word for a token (`length` letters and digits): the
  // kernel's getrandom; the model's are numbered, so a plan is the same on
  // every call.
  virtual std::string random_word(std::size_t length) = 0;
};

}  // namespace rxerun::sys
