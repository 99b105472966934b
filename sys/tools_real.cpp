#include "sys/tools_real.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>

#include "base/fd.h"
#include "base/files.h"
#include "sys/interrupt.h"

namespace rxerun::sys {

namespace {

// How long a tool that is dropped while running gets between SIGTERM and SIGKILL.
constexpr std::chrono::milliseconds kDropGrace{500};

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

std::string wchan_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/wchan");
  std::string w;
  std::getline(in, w);
  return w == "0" ? "" : w;
}

class RealRunningTool final : public RunningTool {
 public:
  RealRunningTool(Child child, UniqueFd out, UniqueFd err, UniqueFd pidfd, std::chrono::milliseconds kill_wait,
                  const ToolSpec& spec)
      : child_(std::move(child)),
        pid_(child_.pid()),
        out_(std::move(out)),
        err_(std::move(err)),
        pidfd_(std::move(pidfd)),
        kill_wait_(kill_wait),
        out_stream_{.keep = spec.keep_bytes, .copy = spec.copy_out},
        err_stream_{.keep = spec.keep_bytes, .copy = spec.copy_err} {}

  ~RealRunningTool() override {
    if (!status_ && !released_) stop(kDropGrace);
  }

  pid_t pid() const override { return pid_; }

  std::optional<ExitStatus> poll() override {
    // Everything its pipes hold now: a tool polled now and then (a server
    // while its client is waited on) must never block on a full pipe.
    if (!status_ && !released_) drain_all();
    return reap();
  }

  ToolWait wait(SteadyTime deadline, Interrupt& interrupt) override {
    for (;;) {
      if (reap()) return ToolWait::Exited;
      if (released_) return ToolWait::Deadline;  // let go while stuck: it will not end for us
      if (interrupt.requested()) return ToolWait::Interrupted;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return ToolWait::Deadline;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
      if (pump(static_cast<int>(std::min<long long>(left, 1000)), interrupt.fd()) && !reap())
        return ToolWait::Interrupted;
    }
  }

  ToolStop stop(Duration grace) override {
    if (released_) return ToolStop{std::nullopt, true, wchan_};
    if (reap()) return ToolStop{status_};
    if (grace.count() > 0) {
      child_.signal_group(SIGTERM);
      if (settle(grace)) return ToolStop{status_};
    }
    child_.signal_group(SIGKILL);
    if (settle(kill_wait_)) return ToolStop{status_};
    // Still there after SIGKILL: asleep in the kernel, uninterruptibly.
    // Waiting for it could take for ever; it dies with its cause (the
    // lab VM's PID 1 reaps it at the latest).
    wchan_ = wchan_of(pid_);
    child_.release();
    released_ = true;
    return ToolStop{std::nullopt, true, wchan_};
  }

  const std::string& out() const override { return out_stream_.text; }
  const std::string& err() const override { return err_stream_.text; }
  std::uint64_t out_total() const override { return out_stream_.total; }
  std::uint64_t err_total() const override { return err_stream_.total; }

 private:
  // The exit status once the child has ended (reaping it, and reading what
  // its pipes still hold); nullopt while it runs.
  const std::optional<ExitStatus>& reap() {
    if (!status_ && !released_) {
      if (auto s = child_.poll()) {
        status_ = *s;
        drain_all();
      }
    }
    return status_;
  }

  // Waits up to `limit` for the child to end, reading its output meanwhile.
  bool settle(std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
      if (reap()) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now >= until) return false;
      pump(static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(until - now).count()), -1);
    }
  }

  // Reads whatever output is there, waiting up to `timeout_ms` for output,
  // the child's end or `extra_fd`. Returns whether `extra_fd` is readable.
  bool pump(int timeout_ms, int extra_fd) {
    // Without a pidfd (a kernel before 5.3) the end is noticed by polling.
    if (!pidfd_.valid()) timeout_ms = std::min(timeout_ms, 20);
    pollfd fds[4] = {
        {out_.get(), POLLIN, 0}, {err_.get(), POLLIN, 0}, {pidfd_.get(), POLLIN, 0}, {extra_fd, POLLIN, 0}};
    const int r = ::poll(fds, 4, timeout_ms);
    if (r <= 0) return false;
    if (fds[0].revents) read_some(out_, out_stream_);
    if (fds[1].revents) read_some(err_, err_stream_);
    return (fds[3].revents & POLLIN) != 0;
  }

  // What one pipe gave: the text kept, how much in all, where it is copied.
  struct Stream {
    std::size_t keep = 0;  // 0: everything
    std::function<void(std::string_view)> copy;
    std::string text;
    std::uint64_t total = 0;
  };

  // One read; closes the pipe at its end.
  static void read_some(UniqueFd& fd, Stream& into) {
    if (!fd.valid()) return;
    char buf[16384];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      const std::string_view got(buf, static_cast<std::size_t>(n));
      into.total += got.size();
      if (into.copy) into.copy(got);
      into.text.append(got);
      // Cut back to `keep` only once twice that has gathered: amortised.
      if (into.keep && into.text.size() > 2 * into.keep) into.text.erase(0, into.text.size() - into.keep);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      fd.reset();
    }
  }

  // After the end: what the pipes hold, without blocking (a grandchild may
  // still hold them open).
  void drain_all() {
    for (auto [fd, into] : {std::pair<UniqueFd*, Stream*>{&out_, &out_stream_}, {&err_, &err_stream_}}) {
      while (fd->valid()) {
        const std::uint64_t before = into->total;
        read_some(*fd, *into);
        if (fd->valid() && into->total == before) break;  // EAGAIN: nothing more now
      }
    }
  }

  Child child_;
  pid_t pid_;
  UniqueFd out_, err_, pidfd_;
  std::chrono::milliseconds kill_wait_;
  Stream out_stream_, err_stream_;
  std::optional<ExitStatus> status_;
  bool released_ = false;
  std::string wchan_;
};

}  // namespace

Result<std::unique_ptr<RunningTool>> RealTools::start(const ToolSpec& spec) {
  if (spec.argv.empty()) return make_error("no program to run");
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  UniqueFd out_read(out[0]), out_write(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  UniqueFd err_read(err[0]), err_write(err[1]);
  SpawnOptions options;
  options.env = spec.env;
  options.cwd = spec.cwd;
  options.stdout_fd = out_write.get();
  options.stderr_fd = err_write.get();
  // stdin from memory: a memfd holds all of it, so that neither side can
  // block on a full pipe.
  UniqueFd input;
  if (spec.input) {
    input.reset(::memfd_create("rxerun-stdin", MFD_CLOEXEC));
    if (!input.valid()) return make_error("cannot hold the program's stdin", errno);
    std::string_view left = *spec.input;
    while (!left.empty()) {
      const ssize_t n = ::write(input.get(), left.data(), left.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return make_error("cannot hold the program's stdin", errno);
      left.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::lseek(input.get(), 0, SEEK_SET) != 0) return make_error("cannot hold the program's stdin", errno);
    options.stdin_fd = input.get();
  }
  Result<Child> child = make_error("not started");
  {
    // The child inherits the namespace of the thread that forks it; this
    // thread goes back to its own when the scope ends, right after the fork.
    std::unique_ptr<NetnsScope> inside;
    if (spec.netns) {
      auto entered = netns_.enter(*spec.netns);
      if (!entered) {
        child = Error{entered.error().code, "cannot run " + spec.argv[0] + " in network namespace " + *spec.netns +
                                                ": " + entered.error().message};
      } else {
        inside = std::move(*entered);
      }
    }
    if (!spec.netns || inside) child = spawn(spec.argv, options);
  }
  out_write.reset();
  err_write.reset();
  if (!child) return child.error();
  for (int fd : {out_read.get(), err_read.get()}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  UniqueFd pidfd(pidfd_open(child->pid()));
  return std::unique_ptr<RunningTool>(std::make_unique<RealRunningTool>(
      std::move(*child), std::move(out_read), std::move(err_read), std::move(pidfd), kill_wait, spec));
}

namespace {

// The socket tables of the calling thread's namespace (/proc/self/net would
// be the process's): "sl local_address rem_address st ...", the local port
// in hex after the colon, the state in hex (TCP: 0A is LISTEN).
Result<bool> port_in_table(const std::string& table, std::uint16_t port, bool tcp) {
  std::ifstream in("/proc/thread-self/net/" + table);
  if (!in) return make_error("cannot read /proc/thread-self/net/" + table, errno);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    unsigned long local_port = 0;
    try {
      local_port = std::stoul(local.substr(colon + 1), nullptr, 16);
    } catch (const std::exception&) {
      continue;
    }
    if (local_port == port && (!tcp || state == "0A")) return true;
  }
  return false;
}

// The environment of `pid` holds `entry` as a whole NUL-separated entry.
bool environ_holds(pid_t pid, const std::string& entry) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string item;
  while (std::getline(in, item, '\0'))
    if (item == entry) return true;
  return false;
}

}  // namespace

Result<bool> RealTools::listening(SocketProto proto, std::uint16_t port) {
  const bool tcp = proto == SocketProto::Tcp;
  for (const char* family : {"", "6"}) {
    auto found = port_in_table(std::string(tcp ? "tcp" : "udp") + family, port, tcp);
    if (!found && family[0] == '6') continue;  // no IPv6 in this kernel
    if (!found) return found.error();
    if (*found) return true;
  }
  return false;
}

Result<bool> RealTools::exists(const std::string& path) {
  std::error_code ec;
  const bool there = std::filesystem::exists(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return make_error("cannot look at " + path, ec.value());
  return there;
}

Result<std::vector<pid_t>> RealTools::stop_marked(const std::string& token, Duration grace) {
  // Each candidate is held by a pidfd before its environment is read, so
  // the signal reaches the process that was read, even if it ends and its
  // pid is given to another in between.
  std::vector<std::pair<pid_t, UniqueFd>> marked;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == ::getpid()) continue;
    UniqueFd fd(pidfd_open(pid));
    if (!fd.valid()) continue;  // gone already
    if (environ_holds(pid, token)) marked.emplace_back(pid, std::move(fd));
  }
  if (ec) return make_error("cannot list /proc", ec.value());
  std::vector<pid_t> stopped;
  for (int signo : {SIGTERM, SIGKILL}) {
    std::vector<pollfd> alive;
    for (auto& [pid, fd] : marked) {
      if (::syscall(SYS_pidfd_send_signal, fd.get(), signo, nullptr, 0) == 0 && signo == SIGTERM)
        stopped.push_back(pid);
      alive.push_back({fd.get(), POLLIN, 0});
    }
    // A pidfd is readable once its process has ended.
    const auto until = std::chrono::steady_clock::now() + (signo == SIGTERM ? grace : Duration(kill_wait));
    for (;;) {
      if (std::none_of(alive.begin(), alive.end(), [](const pollfd& p) { return p.fd >= 0; })) break;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      ::poll(alive.data(), alive.size(), static_cast<int>(std::min<long long>(left.count(), 100)));
      for (auto& p : alive)
        if (p.fd >= 0 && (p.revents & POLLIN)) p.fd = -1;  // ended: no longer polled
    }
    std::erase_if(marked, [&](const auto& m) {
      pollfd p{m.second.get(), POLLIN, 0};
      return ::poll(&p, 1, 0) == 1;
    });
    if (marked.empty()) break;
  }
  return stopped;
}

std::string RealTools::random_word(std::size_t length) {
  return random_name(length);
}

}  // namespace rxerun::sys
