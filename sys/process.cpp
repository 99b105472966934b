#include "sys/process.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>
#include <thread>

#include "base/fd.h"

namespace rxerun::sys {

namespace {

ExitStatus from_wait_status(int ws) {
  ExitStatus s;
  if (WIFSIGNALED(ws))
    s.signal = WTERMSIG(ws);
  else
    s.code = WEXITSTATUS(ws);
  return s;
}

[[noreturn]] void child_fail(int report_fd, int err) {
  (void)!::write(report_fd, &err, sizeof err);
  ::_exit(127);
}

// The highest descriptor number a fallback loop must cover.
int fd_limit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 20)) return 1 << 20;
  return static_cast<int>(rl.rlim_cur);
}

// Marks every descriptor from 3 up close-on-exec (async-signal-safe).
void cloexec_from_3() {
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  // Kernels before 5.11: one by one.
  for (int fd = 3, limit = fd_limit(); fd < limit; ++fd) {
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

// Closes [first, last] (async-signal-safe).
void close_span(unsigned first, unsigned last) {
  if (first > last) return;
  if (::close_range(first, last, 0) == 0) return;
  // Kernels before 5.9: one by one.
  const unsigned limit = static_cast<unsigned>(fd_limit());
  for (unsigned fd = first; fd <= last && fd < limit; ++fd) ::close(static_cast<int>(fd));
}

// rxerun's environment with `overrides` set (replacing a variable of that name).
std::vector<std::string> child_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos && overrides.count(std::string(entry.substr(0, eq)))) continue;
    out.emplace_back(entry);
  }
  for (const auto& [k, v] : overrides) out.push_back(k + "=" + v);
  return out;
}

}  // namespace

void close_fds_except(std::span<const int> keep) {
  // Sorted without allocating: malloc is not safe after fork() in a process
  // with threads.
  int sorted[16];
  std::size_t n = 0;
  for (int fd : keep)
    if (fd >= 3 && n < 16) sorted[n++] = fd;
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; --j) std::swap(sorted[j - 1], sorted[j]);
  unsigned next = 3;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned fd = static_cast<unsigned>(sorted[i]);
    if (fd > next) close_span(next, fd - 1);
    next = std::max(next, fd + 1);
  }
  close_span(next, ~0U);
}

Result<pid_t> fork_worker(std::span<const int> keep, const std::function<int()>& body) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return make_error("cannot start a worker process", errno);
  if (pid > 0) return pid;
  // Dies with rxerun, even on SIGKILL; the check closes the race with a
  // parent that died before prctl.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  close_fds_except(keep);
  ::_exit(body());
}

std::string ExitStatus::describe() const {
  if (signal) {
    const char* name = sigabbrev_np(signal);
    return std::string("killed by SIG") + (name ? name : std::to_string(signal));
  }
  return "exit " + std::to_string(code);
}

Child::~Child() {
  if (running()) terminate(std::chrono::milliseconds(0));
}

Child::Child(Child&& other) noexcept : pid_(other.pid_), status_(other.status_) {
  other.pid_ = -1;
}

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    if (running()) terminate(std::chrono::milliseconds(0));
    pid_ = other.pid_;
    status_ = other.status_;
    other.pid_ = -1;
  }
  return *this;
}

std::optional<ExitStatus> Child::poll() {
  if (pid_ <= 0 || status_) return status_;
  int ws = 0;
  pid_t r = ::waitpid(pid_, &ws, WNOHANG);
  if (r == pid_) status_ = from_wait_status(ws);
  return status_;
}

ExitStatus Child::wait() {
  if (pid_ <= 0) return ExitStatus{};
  while (!status_) {
    int ws = 0;
    pid_t r = ::waitpid(pid_, &ws, 0);
    if (r == pid_)
      status_ = from_wait_status(ws);
    else if (r < 0 && errno != EINTR)
      status_ = ExitStatus{.code = 127};
  }
  return *status_;
}

void Child::signal_group(int signo) {
  if (!running()) return;
  // The child leads its own group; a group that is already empty is fine.
  if (::kill(-pid_, signo) != 0) ::kill(pid_, signo);
}

ExitStatus Child::terminate(std::chrono::milliseconds grace) {
  if (!running()) return status_.value_or(ExitStatus{});
  if (grace.count() > 0) {
    signal_group(SIGTERM);
    const auto until = std::chrono::steady_clock::now() + grace;
    while (!poll() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!poll()) signal_group(SIGKILL);
  return wait();
}

pid_t Child::release() {
  const pid_t pid = pid_;
  pid_ = -1;
  status_.reset();
  return pid;
}

std::optional<std::string> find_in_path(const std::string& program, const std::string& path) {
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

Result<Child> spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) return make_error("spawn: empty command");
  int report[2];  // the child reports an exec failure's errno; EOF means it ran
  if (::pipe2(report, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  UniqueFd report_read(report[0]), report_write(report[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  // Everything the child needs is made here: between fork and exec it may
  // not allocate (another thread may hold malloc's lock at the fork).
  const std::vector<std::string> env_strings = child_environment(options.env);
  std::vector<char*> envp;
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::string program = argv[0];
  if (program.find('/') == std::string::npos) {
    auto path =
        options.env.count("PATH") ? options.env.at("PATH") : std::string(::getenv("PATH") ? ::getenv("PATH") : "");
    auto found = find_in_path(program, path.empty() ? "/usr/local/bin:/usr/bin:/bin" : path);
    if (!found) return make_error("cannot run " + argv[0] + ": not installed (not found in PATH)", ENOENT);
    program = *found;
  }
  std::vector<int> highs(options.fds.size(), -1);

  pid_t pid = ::fork();
  if (pid < 0) return make_error("cannot start " + argv[0], errno);
  if (pid == 0) {
    // The child's copies: it leaves by exec or _exit, never through a destructor.
    ::close(report_read.get());
    ::setpgid(0, 0);
    // Dies with rxerun, even on SIGKILL; the check closes the race with a
    // parent that died before prctl.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Signals rxerun blocks or ignores must not stay so in the child.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::signal(s, SIG_DFL);
    int in = options.stdin_fd;
    if (in < 0) in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || ::dup2(in, 0) < 0) child_fail(report_write.get(), errno);
    if (options.stdout_fd >= 0 && ::dup2(options.stdout_fd, 1) < 0) child_fail(report_write.get(), errno);
    if (options.stderr_fd >= 0 && ::dup2(options.stderr_fd, 2) < 0) child_fail(report_write.get(), errno);
    // Extra fds: first out of the way (a target may be another's source), then in place.
    for (std::size_t i = 0; i < options.fds.size(); ++i) {
      highs[i] = ::fcntl(options.fds[i].second, F_DUPFD_CLOEXEC, 100);
      if (highs[i] < 0) child_fail(report_write.get(), errno);
    }
    // Nothing of rxerun's beyond what was asked for: whatever a library
    // opened without O_CLOEXEC closes at exec too. dup2 below clears the
    // flag on the fds the child is given.
    cloexec_from_3();
    for (std::size_t i = 0; i < options.fds.size(); ++i)
      if (::dup2(highs[i], options.fds[i].first) < 0) child_fail(report_write.get(), errno);
    // A failed chdir reports -errno, so that the parent can name the directory.
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) child_fail(report_write.get(), -errno);
    ::execve(program.c_str(), args.data(), envp.data());
    child_fail(report_write.get(), errno);
  }
  report_write.reset();
  Child child(pid);
  int err = 0;
  ssize_t n;
  do n = ::read(report_read.get(), &err, sizeof err);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof err)) {
    child.wait();
    if (err < 0) return make_error("cannot run " + argv[0] + ": cannot enter directory " + options.cwd, -err);
    if (err == ENOENT) return make_error("cannot run " + argv[0] + ": not installed (not found in PATH)", err);
    return make_error("cannot run " + argv[0], err);
  }
  return child;
}

Result<CommandResult> run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  const SpawnOptions& options, int interrupt_fd) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
  SpawnOptions o = options;
  o.stdout_fd = out_write.get();
  o.stderr_fd = err_write.get();
  auto child = spawn(argv, o);
  if (!child) return child.error();
  out_write.reset();
  err_write.reset();

  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3] = {{out_open ? out_read.get() : -1, POLLIN, 0},
                     {err_open ? err_read.get() : -1, POLLIN, 0},
                     {interrupt_fd, POLLIN, 0}};
    int r = ::poll(fds, 3, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) break;
    if (fds[2].revents & POLLIN) {
      result.timed_out = true;  // stopped, like a timeout; the caller knows about its interrupt
      break;
    }
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0)
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR)
        (i == 0 ? out_open : err_open) = false;
    }
  }
  result.status = result.timed_out ? child->terminate(std::chrono::seconds(2)) : child->wait();
  return result;
}

}  // namespace rxerun::sys
