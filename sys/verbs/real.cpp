// RealVerbs: the check in a forked worker (see verbs_real.h for why), its
// result back over a pipe as JSON; and the device list with the reason when
// libibverbs lists nothing (it says why only under IBV_SHOW_WARNINGS=1).

#include "sys/verbs/real.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "sys/interrupt.h"
#include "sys/process.h"
#include "sys/verbs/resources.h"

namespace rxerun::sys {

namespace verbs {

Result<DeviceList> device_list() {
  int n = 0;
  DeviceList list(ibv_get_device_list(&n));
  if (!list) {
    const int err = errno;
    return make_error(std::string("libibverbs cannot list RDMA devices: ") + std::strerror(err) +
                          (err == ENOSYS ? " (no kernel RDMA support: is ib_uverbs loaded?)" : ""),
                      err);
  }
  if (n > 0) return list;
  // Empty: say why, as IBV_SHOW_WARNINGS=1 would.
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> devices;
  for (const auto& e : fs::directory_iterator("/sys/class/infiniband", ec)) devices.push_back(e.path().filename());
  if (devices.empty())
    return make_error("libibverbs lists no RDMA device: the kernel has none (add one with an rxe step)", ENODEV);
  std::string why;
  if (!fs::exists("/etc/libibverbs.d/rxe.driver", ec))
    why = "/etc/libibverbs.d/rxe.driver is missing (install ibverbs-providers)";
  else if (!fs::exists("/sys/class/infiniband_verbs", ec))
    why = "no /sys/class/infiniband_verbs: ib_uverbs is not loaded";
  else
    why = "is the rxe provider (librxe-rdmav*.so from ibverbs-providers) installed? IBV_SHOW_WARNINGS=1 says more";
  return make_error("libibverbs lists no RDMA device although the kernel has " + devices.front() + ": " + why, ENXIO);
}

}  // namespace verbs

namespace {

using json = nlohmann::json;

// How long the worker may take past the deadline to release what it holds,
// and after Ctrl-C to notice it.
constexpr auto kGrace = std::chrono::seconds(5);
constexpr auto kReap = std::chrono::seconds(3);

bool write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The worker's body (sys/process.h fork_worker: tied to rxerun's life, and
// holding no descriptor of rxerun's but `interrupt_fd` and `out`).
int worker(const VerbsRequest& req, SteadyTime deadline, int interrupt_fd, int out) {
  ::signal(SIGPIPE, SIG_IGN);
  // Ctrl-C reaches the worker through the interrupt's pipe, which it shares
  // with rxerun: every wait polls it.
  verbs::Waiter waiter(deadline, interrupt_fd);
  const Result<VerbsResult> r = req.mode == VerbsMode::Self ? verbs::run_self(req, waiter) : verbs::run_cm(req, waiter);
  return write_all(out, verbs_result_json(r).dump()) ? 0 : 1;
}

// Reaps the worker within `bound`; false when it does not end (stuck in the kernel).
bool reap(pid_t pid, std::chrono::milliseconds bound, int* status) {
  const auto until = verbs::SteadyClock::now() + bound;
  for (;;) {
    const pid_t r = ::waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return true;
    if (verbs::SteadyClock::now() >= until) return false;
    ::poll(nullptr, 0, 10);
  }
}

}  // namespace

Result<VerbsResult> RealVerbs::run(const VerbsRequest& request, SteadyTime deadline, Interrupt& interrupt) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  UniqueFd in(fds[0]), out(fds[1]);
  const int keep[] = {interrupt.fd(), fds[1]};
  auto forked = fork_worker(keep, [&] { return worker(request, deadline, interrupt.fd(), fds[1]); });
  if (!forked) return make_error("cannot start the verbs worker", forked.error().code);
  const pid_t pid = *forked;
  out.reset();

  // The worker keeps to the deadline and to Ctrl-C; past them, and a grace
  // to release what it holds, it is killed.
  std::string text;
  auto bound = deadline == SteadyTime::max() ? verbs::SteadyClock::time_point::max() : deadline + kGrace;
  bool interrupted = false, killed = false;
  for (;;) {
    const auto now = verbs::SteadyClock::now();
    if (now >= bound) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    const auto left = bound == verbs::SteadyClock::time_point::max()
                          ? 60'000LL
                          : std::chrono::ceil<std::chrono::milliseconds>(bound - now).count();
    pollfd p[2] = {{in.get(), POLLIN, 0}, {interrupted ? -1 : interrupt.fd(), POLLIN, 0}};
    const int n = ::poll(p, 2, static_cast<int>(std::min<long long>(left, 60'000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (p[1].revents) {
      interrupted = true;
      bound = std::min(bound, verbs::SteadyClock::now() + kGrace);
    }
    if (p[0].revents) {
      char buf[4096];
      const ssize_t got = ::read(in.get(), buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;  // EOF: the worker is done
      text.append(buf, static_cast<std::size_t>(got));
    }
  }
  int status = 0;
  if (!reap(pid, kReap, &status))
    return make_error("the verbs worker (pid " + std::to_string(pid) +
                          ") does not end: it is stuck in the kernel (D state?); an RDMA device it holds cannot be "
                          "deleted until it ends",
                      EBUSY);
  if (killed) {
    VerbsResult r;
    r.status = interrupted ? VerbsStatus::Interrupted : VerbsStatus::TimedOut;
    r.message = interrupted ? "interrupted" : "the check did not end by the step's deadline and was stopped";
    r.cause = interrupted ? "interrupt" : "deadline";
    return r;
  }
  if (text.empty()) {
    if (WIFSIGNALED(status))
      return make_error("the verbs worker died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                        strsignal(WTERMSIG(status)) + ")");
    return make_error("the verbs worker ended without a result (exit " + std::to_string(WEXITSTATUS(status)) + ")");
  }
  try {
    return verbs_result_from_json(json::parse(text));
  } catch (const json::exception& e) {
    return make_error(std::string("cannot read the verbs worker's result: ") + e.what());
  }
}

int serve_verbs(const VerbsRequest& request, SteadyTime deadline, int interrupt_fd, int out) {
  ::signal(SIGPIPE, SIG_IGN);
  verbs::Waiter waiter(deadline, interrupt_fd);
  const std::string listening = std::string(kVerbsListening) + "\n";
  const Result<VerbsResult> r = verbs::serve_cm(request, waiter, [&] { (void)write_all(out, listening); });
  return write_all(out, verbs_result_json(r).dump() + "\n") ? 0 : 1;
}

}  // namespace rxerun::sys
