#include "sys/tools_real.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <functional>
#include <string_view>

#include "base/fd.h"
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
    if (!status_ && !released_) pump(0, -1);
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

}  // namespace rxerun::sys
