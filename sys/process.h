#pragma once
// Child processes rxerun starts (apt-get and depmod for `vm setup`, qemu for
// the lab VM; the RDMA tools later): no shell, an argv as given, each in its
// own process group so that a signal reaches the whole tree and the terminal's
// Ctrl-C does not, and killed with rxerun (PR_SET_PDEATHSIG) so that none
// outlives it. A Child that goes out of scope still running is killed and
// reaped: RAII, like every other resource.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

struct SpawnOptions {
  std::string cwd;                         // empty: rxerun's own
  std::map<std::string, std::string> env;  // set (or override) in the child's environment
  int stdin_fd = -1;                       // -1: /dev/null
  int stdout_fd = -1;                      // -1: rxerun's stdout
  int stderr_fd = -1;                      // -1: rxerun's stderr
  std::vector<std::pair<int, int>> fds;    // more fds for the child: {fd in the child, fd of rxerun}
};

// How a child ended: exit status, or the signal that killed it.
struct ExitStatus {
  int code = 0;    // exit code when !signal
  int signal = 0;  // terminating signal, or 0
  bool ok() const { return signal == 0 && code == 0; }
  std::string describe() const;  // "exit 2", "killed by SIGKILL"
};

class Child {
 public:
  Child() = default;
  explicit Child(pid_t pid) : pid_(pid) {}
  ~Child();
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !status_; }

  // The exit status once the child has ended; nullopt while it runs. Never blocks.
  std::optional<ExitStatus> poll();
  // Blocks until the child ends.
  ExitStatus wait();
  // Signals the child's whole process group (it leads it); no-op once reaped.
  void signal_group(int signo);
  // SIGTERM, then SIGKILL after `grace`; reaps. Returns how it ended.
  ExitStatus terminate(std::chrono::milliseconds grace);
  // Forgets the child without signalling it (someone else reaps it, as the
  // lab VM's PID 1 does for every process). Returns its pid.
  pid_t release();

 private:
  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
};

// Starts argv[0] (looked up in PATH) with argv. The error names the program
// when it cannot be started (not installed, not executable). The program
// gets stdin, stdout, stderr and `options.fds`, nothing else of rxerun's:
// every other descriptor is closed at exec, also those a library opened
// without O_CLOEXEC (the scenario's lock would otherwise outlive rxerun).
Result<Child> spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// Forks a worker that runs `body` in a copy of this process (no exec: the
// verbs check) and _exits with what it returns. Before `body` the worker
// is tied to rxerun's life (PR_SET_PDEATHSIG) and closes every descriptor
// but 0, 1, 2 and `keep`: it must not hold the scenario's lock, a capture's
// file or a netlink socket of rxerun's past the run. Returns its pid.
Result<pid_t> fork_worker(std::span<const int> keep, const std::function<int()>& body);

// In a child between fork and exec/work (async-signal-safe, no allocation):
// closes every descriptor from 3 up except `keep` (at most 16 of them).
void close_fds_except(std::span<const int> keep);

struct CommandResult {
  ExitStatus status;
  std::string out;  // stdout
  std::string err;  // stderr
  bool timed_out = false;
};

// Runs a command to completion with stdout and stderr captured (stdin is
// /dev/null); past `timeout` it is terminated and `timed_out` is set.
// `interrupt_fd` (readable on Ctrl-C, see Interrupt) also terminates it.
// What execvp would run for `program` (a name without '/'): the first
// executable regular file of that name in the directories of `path`
// (PATH's form; an empty entry is the current directory).
std::optional<std::string> find_in_path(const std::string& program, const std::string& path);

Result<CommandResult> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  const SpawnOptions& options = {}, int interrupt_fd = -1);

}  // namespace rxerun::sys
