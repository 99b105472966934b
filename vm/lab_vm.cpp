#include "vm/lab_vm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <optional>
#include <sstream>
#include <system_error>

#include "base/duration.h"
#include "base/fd.h"
#include "base/files.h"
#include "base/result.h"
#include "sys/process.h"
#include "vm/boot_protocol.h"
#include "vm/control.h"
#include "vm/kernel/kernels.h"
#include "vm/snapshot.h"

namespace rxerun::vm {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kConsoleTail = 120;  // a panic and its trace, for kernel health

struct Pipe {
  UniqueFd read, write;
};

Result<void> make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error("cannot create a pipe", errno);
  p.read.reset(fds[0]);
  p.write.reset(fds[1]);
  return {};
}

// Under software emulation the guest's TSC is the host's (qemu reads it with
// rdtsc). Giving the guest its rate spares the kernel a calibration against
// the emulated PIT, which fails on a busy host and then hangs the boot.
double measure_tsc_khz() {
  const auto t0 = Clock::now();
  const unsigned long long c0 = __rdtsc();
  while (Clock::now() - t0 < std::chrono::milliseconds(20)) {
  }
  const unsigned long long c1 = __rdtsc();
  const double secs = seconds_since(t0);
  return static_cast<double>(c1 - c0) / secs / 1000.0;
}

constexpr auto kPanicGrace = std::chrono::seconds(10);

bool early_death(std::string_view line) {
  for (std::string_view s : {"Kernel panic", "Oops:", "BUG:", "rxerun-init: FATAL", "general protection fault"})
    if (line.find(s) != std::string_view::npos) return true;
  return false;
}

// How one qemu starts: a boot, a boot that saves a snapshot when /init
// waits for the go line, or a restore of a snapshot.
struct Start {
  enum class Mode { Boot, BootAndSave, Restore } mode = Mode::Boot;
  bool go = false;                     // the guest waits for the go line (uses_go_line())
  const SnapshotSlot* slot = nullptr;  // BootAndSave, Restore
  fs::path qmp;                        // the monitor's socket: BootAndSave, Restore
};

constexpr int kSnapshotFd = 4;                            // a restore's snapshot file, as qemu's fd
constexpr auto kRestoreLimit = std::chrono::seconds(20);  // qemu start to a running guest
constexpr auto kAnswerLimit = std::chrono::seconds(10);   // the go line to /init's answer

// One boot of qemu, start to end.
struct Boot {
  LabOutcome outcome = LabOutcome::BootFailed;
  bool started = false;
  bool retryable = false;       // a kernel that died on its own before the run: worth one more boot
  bool restore_failed = false;  // a Restore that did not come up: boot instead, and make the snapshot anew
  bool saved = false;           // a BootAndSave saved its snapshot
  double boot_seconds = 0;
  std::string detail;
  std::deque<std::string> console;
};

// The go line, with the host's clock now and fresh random bytes.
std::string make_go_line(const LabRun& run) {
  unsigned char seed[32];
  std::size_t got = 0;
  while (got < sizeof seed) {
    const ssize_t n = ::getrandom(seed + got, sizeof seed - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (unsigned char c : seed) hex += fmt::format("{:02x}", c);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return go_line({.release = run.kernel.release,
                  .modules = run.kernel.modules.string(),
                  .exe = run.exe.string(),
                  .host_time_ns = static_cast<long long>(now.tv_sec) * 1000000000 + now.tv_nsec,
                  .seed_hex = hex});
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Whether `fd` (Ctrl-C's) became readable within `ms`.
bool interrupted_within(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, fd >= 0 ? 1 : 0, ms) > 0 && (p.revents & POLLIN);
}

// Waits until a restoring qemu runs its guest; "" then, else why not.
std::string wait_restored(const Start& start, int interrupt_fd) {
  auto qmp = Qmp::connect(start.qmp, std::chrono::duration_cast<std::chrono::milliseconds>(kRestoreLimit));
  if (!qmp) return qmp.error().message;
  const auto until = Clock::now() + kRestoreLimit;
  while (Clock::now() < until) {
    auto status = qmp->execute("query-status");
    if (!status) return status.error().message;
    if (status->value("status", "") == "running") return "";
    if (status->value("status", "") != "inmigrate") return "the guest is " + status->value("status", "?");
    if (interrupted_within(interrupt_fd, 5)) return "interrupted";
  }
  return "the snapshot did not load within " + std::to_string(kRestoreLimit.count()) + " s";
}

// Saves the guest that waits for its go line into the slot's snapshot, and
// lets it go on; "" when saved, else why not.
std::string save_snapshot(const Start& start, int interrupt_fd) {
  auto qmp = Qmp::connect(start.qmp, std::chrono::seconds(10));
  if (!qmp) return qmp.error().message;
  const fs::path tmp = start.slot->temporary();
  std::string why;
  {
    UniqueFd file(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!file.valid()) return "cannot create " + tmp.string() + ": " + std::strerror(errno);
    if (auto r = qmp->pass_fd("snapshot", file.get()); !r) why = r.error().message;
  }
  if (why.empty())
    if (auto r = qmp->execute("migrate", {{"uri", "fd:snapshot"}}); !r) why = r.error().message;
  const auto until = Clock::now() + std::chrono::seconds(120);
  while (why.empty()) {
    auto m = qmp->execute("query-migrate");
    if (!m) {
      why = m.error().message;
    } else if (m->value("status", "") == "completed") {
      break;
    } else if (m->value("status", "") == "failed") {
      why = "migration failed: " + m->value("error-desc", "?");
    } else if (Clock::now() > until) {
      why = "the guest's memory was not saved within 120 s";
      (void)qmp->execute("migrate_cancel");
    } else if (interrupted_within(interrupt_fd, 20)) {
      why = "interrupted";
    }
  }
  // The guest goes on whatever happened to its snapshot (after a
  // migration it is paused).
  if (auto r = qmp->execute("cont"); !r && why.empty()) why = r.error().message;
  std::error_code ec;
  if (why.empty()) {
    fs::rename(tmp, start.slot->path(), ec);
    if (ec) why = "cannot rename " + tmp.string() + ": " + ec.message();
  }
  if (!why.empty()) {
    fs::remove(tmp, ec);
    return why;
  }
  for (const auto& old : start.slot->stale()) fs::remove(old, ec);
  return "";
}

// One start of qemu, watched from its start to its end: the console's
// markers, the guest's output, qemu's errors, the limits and Ctrl-C.
class QemuWatch {
 public:
  QemuWatch(const LabRun& run, bool kvm, const Start& start) : run_(run), kvm_(kvm), start_(start) {}

  Boot watch(const std::vector<std::string>& cmd) {
    if (!spawn(cmd)) return std::move(boot_);
    if (start_.mode == Start::Mode::Restore && !go_on_restored()) return std::move(boot_);
    char buf[16384];
    for (;;) {
      if (past_a_limit()) return std::move(boot_);
      if (!console_open_ && !output_open_ && !errors_open_) break;
      pollfd fds[4] = {{console_open_ ? console_.read.get() : -1, POLLIN, 0},
                       {output_open_ ? output_.read.get() : -1, POLLIN, 0},
                       {errors_open_ ? errors_.read.get() : -1, POLLIN, 0},
                       {run_.interrupt_fd, POLLIN, 0}};
      int r = ::poll(fds, 4, 100);
      if (r < 0 && errno != EINTR) break;
      if (fds[3].revents & POLLIN) {
        finish(LabOutcome::Interrupted, "interrupted");
        return std::move(boot_);
      }
      if (!boot_.started && run_.booting) run_.booting(seconds_since(t0_));
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = ::read(output_.read.get(), buf, sizeof buf);
        if (n > 0 && run_.output) run_.output(std::string_view(buf, static_cast<std::size_t>(n)));
        if (n == 0 || (n < 0 && errno != EINTR)) output_open_ = false;
      }
      if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = ::read(errors_.read.get(), buf, sizeof buf);
        if (n > 0) qemu_errors_.append(buf, static_cast<std::size_t>(n));
        if (n == 0 || (n < 0 && errno != EINTR)) errors_open_ = false;
      }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = ::read(console_.read.get(), buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR)) console_open_ = false;
        if (n > 0) partial_.append(buf, static_cast<std::size_t>(n));
        if (console_lines()) return std::move(boot_);
      }
    }
    const sys::ExitStatus st = qemu_->wait();
    if (!boot_.started) {
      boot_.retryable = qemu_errors_.empty();
      boot_.restore_failed = start_.mode == Start::Mode::Restore;
      boot_.outcome = LabOutcome::BootFailed;
      boot_.detail = qemu_errors_.empty() ? "qemu ended (" + st.describe() + ") before the guest started"
                                          : "qemu: " + one_line(qemu_errors_);
      return std::move(boot_);
    }
    boot_.outcome = LabOutcome::Finished;
    return std::move(boot_);
  }

 private:
  static std::string one_line(std::string text) {
    text = text.substr(0, text.find_last_not_of("\n") + 1);
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
  }

  // qemu with its fds: the console (stdout), the guest's output (fd 3),
  // its errors, the console's input for the go line, a restore's snapshot.
  bool spawn(const std::vector<std::string>& cmd) {
    for (Pipe* p : {&console_, &output_, &errors_})
      if (auto r = make_pipe(*p); !r) return boot_.detail = r.error().message, false;
    // The console's input is a socket, so that writing to a qemu that is
    // gone raises no SIGPIPE.
    int go_pair[2] = {-1, -1};
    if (start_.go && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go_pair) != 0)
      return boot_.detail = std::string("cannot create a socket pair: ") + std::strerror(errno), false;
    go_.reset(go_pair[0]);
    UniqueFd go_qemu(go_pair[1]), snapshot;
    if (start_.mode == Start::Mode::Restore) {
      snapshot.reset(::open(start_.slot->path().c_str(), O_RDONLY | O_CLOEXEC));
      if (!snapshot.valid()) {
        boot_.restore_failed = true;
        boot_.detail = "cannot open " + start_.slot->path().string() + ": " + std::strerror(errno);
        return false;
      }
    }
    sys::SpawnOptions so;
    so.fds = {{3, output_.write.get()}};  // the guest's output reaches qemu as its fd 3 (cmd names /dev/fd/3)
    if (snapshot.valid()) so.fds.push_back({kSnapshotFd, snapshot.get()});
    so.stdin_fd = go_qemu.valid() ? go_qemu.get() : -1;
    so.stdout_fd = console_.write.get();
    so.stderr_fd = errors_.write.get();
    t0_ = Clock::now();
    auto qemu = sys::spawn(cmd, so);
    console_.write.reset();
    errors_.write.reset();
    output_.write.reset();
    if (!qemu) {
      boot_.detail = error_text(qemu.error());
      return false;
    }
    qemu_.emplace(std::move(*qemu));
    return true;
  }

  // A restore: the go line once the guest runs again (sooner, the console
  // drops what it is sent); /init's answer is awaited within kAnswerLimit.
  bool go_on_restored() {
    const std::string why = wait_restored(start_, run_.interrupt_fd);
    if (why == "interrupted") return finish(LabOutcome::Interrupted, why), false;
    if (why.empty() && send_all(go_.get(), make_go_line(run_))) {
      go_sent_at_ = Clock::now();
      return true;
    }
    qemu_->terminate(std::chrono::milliseconds(2000));
    std::string errs;
    char buf[4096];
    for (ssize_t n; (n = ::read(errors_.read.get(), buf, sizeof buf)) > 0;)
      errs.append(buf, static_cast<std::size_t>(n));
    boot_.restore_failed = true;
    boot_.detail = !errs.empty() ? "qemu: " + one_line(errs) : why.empty() ? std::string("qemu ended") : why;
    return false;
  }

  // Whether a limit has run out (the boot then finished).
  bool past_a_limit() {
    const auto now = Clock::now();
    const auto boot_limit = kvm_ ? std::chrono::seconds(30) : std::chrono::seconds(90);
    if (go_sent_at_ && !answered_ && now - *go_sent_at_ > kAnswerLimit) {
      boot_.restore_failed = true;
      finish(LabOutcome::BootFailed,
             "the restored guest did not answer within " + std::to_string(kAnswerLimit.count()) + " s");
    } else if (!boot_.started && now - t0_ > boot_limit) {
      boot_.retryable = true;
      finish(LabOutcome::BootFailed, "the guest did not start within " + std::to_string(boot_limit.count()) + " s");
    } else if (boot_.started && now - started_at_ > run_.run_timeout) {
      finish(LabOutcome::Hung, "the run did not end within " + std::to_string(run_.run_timeout.count()) +
                                   " s (the steps' timeouts plus cleanup): the lab VM was stopped");
    } else if (panicked_at_ && now - *panicked_at_ > kPanicGrace) {
      finish(LabOutcome::Crashed, "the guest kernel panicked and did not stop by itself: the lab VM was stopped");
    } else {
      return false;
    }
    return true;
  }

  // The console's whole lines; true when one finished the boot.
  bool console_lines() {
    std::size_t nl;
    while ((nl = partial_.find('\n')) != std::string::npos) {
      std::string line = partial_.substr(0, nl);
      partial_.erase(0, nl + 1);
      while (!line.empty() && (line.back() == '\r')) line.pop_back();
      spdlog::debug("lab VM console at {:.3f} s: {}", seconds_since(t0_), line);
      boot_.console.push_back(line);
      if (boot_.console.size() > kConsoleTail) boot_.console.pop_front();
      if (start_.go && !go_sent_at_ && line.find(kWaitingMarker) != std::string::npos) {
        if (start_.mode == Start::Mode::BootAndSave) {
          const std::string why = save_snapshot(start_, run_.interrupt_fd);
          boot_.saved = why.empty();
          if (!why.empty() && why != "interrupted" && run_.notice)
            run_.notice("lab VM: no snapshot of kernel " + run_.kernel.label + ": " + why);
        }
        go_sent_at_ = Clock::now();
        answered_ = true;  // a boot's guest has shown it is alive
        send_all(go_.get(), make_go_line(run_));
      } else if (go_sent_at_ && line.find(kGoMarker) != std::string::npos) {
        answered_ = true;
      } else if (!boot_.started && line.find(kStartedMarker) != std::string::npos) {
        boot_.started = true;
        started_at_ = Clock::now();
        boot_.boot_seconds = seconds_since(t0_);
        if (run_.started) run_.started(boot_.boot_seconds, start_.mode == Start::Mode::Restore);
      } else if (boot_.started && !panicked_at_ && line.find("Kernel panic - not syncing") != std::string::npos) {
        panicked_at_ = Clock::now();
      } else if (!boot_.started && early_death(line)) {
        boot_.retryable = line.find("rxerun-init: FATAL") == std::string::npos;
        boot_.restore_failed = start_.mode == Start::Mode::Restore;
        finish(LabOutcome::BootFailed, "the guest kernel failed while booting: " + line);
        return true;
      }
    }
    return false;
  }

  void finish(LabOutcome outcome, std::string detail) {
    boot_.outcome = outcome;
    boot_.detail = std::move(detail);
    qemu_->terminate(std::chrono::milliseconds(2000));
  }

  const LabRun& run_;
  const bool kvm_;
  const Start& start_;
  Boot boot_;
  Pipe console_, output_, errors_;
  UniqueFd go_;  // the console's input, the host's end
  std::optional<sys::Child> qemu_;
  Clock::time_point t0_{}, started_at_{};
  std::optional<Clock::time_point> go_sent_at_;
  bool answered_ = false;
  // A kernel that panicked during the run reboots at once (panic=-1) and
  // qemu ends (-no-reboot); one stuck in the panic (a CPU that does not
  // answer the stop, under a busy host's emulation) is stopped from here
  // after a grace, instead of waiting out the run's whole budget.
  std::optional<Clock::time_point> panicked_at_;
  std::string partial_, qemu_errors_;
  bool console_open_ = true, output_open_ = true, errors_open_ = true;
};

Boot boot_once(const LabRun& run, const std::vector<std::string>& cmd, bool kvm, const Start& start) {
  return QemuWatch(run, kvm, start).watch(cmd);
}

// The result of the run whose last start was `boot`.
LabRunResult finish_lab(const LabRun& run, const Boot& boot, int boots, LabRunResult result) {
  result.boots = boots;
  result.outcome = boot.outcome;
  result.detail = boot.detail;
  result.boot_seconds = boot.boot_seconds;
  result.console_tail.assign(boot.console.begin(), boot.console.end());
  if (result.outcome != LabOutcome::Finished) return result;
  std::ifstream in(run.share / "result.json");
  try {
    if (!in) throw std::runtime_error("no result.json");
    result.guest = GuestResult::from_json(nlohmann::json::parse(in));
  } catch (const std::exception&) {
    result.outcome = LabOutcome::Crashed;
    result.detail = "the lab VM stopped before the run finished";
  }
  return result;
}

}  // namespace

Result<ShareDir> ShareDir::create() {
  const char* tmp = std::getenv("TMPDIR");
  const fs::path base = tmp && *tmp ? tmp : "/tmp";
  // Share dirs of runs that were SIGKILLed (their pid is gone) and that are
  // this user's: nothing else removes them.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("rxerun-vm.")) continue;
    const auto dot = name.find('.', 10);
    if (dot == std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(name.substr(10, dot - 10).c_str()));
    struct stat st {};
    if (pid <= 0 || ::lstat(entry.path().c_str(), &st) != 0 || st.st_uid != ::geteuid() || !S_ISDIR(st.st_mode))
      continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(entry.path(), ignored);
  }
  std::string templ = (base / ("rxerun-vm." + std::to_string(::getpid()) + ".XXXXXX")).string();
  if (!::mkdtemp(templ.data()))
    return make_error("cannot create a directory for the lab VM in " + base.string(), errno);
  return ShareDir(templ);
}

ShareDir::~ShareDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

bool kvm_usable() {
  int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

namespace {

// Boots `image` under KVM with no initramfs: the kernel panics as soon as it
// finds no root, and with panic=-1 and -no-reboot qemu exits by itself, in
// well under a second where KVM works. "" when it did; else why not.
std::string kvm_probe(const fs::path& image) {
  const std::vector<std::string> argv = {"qemu-system-x86_64",
                                         "-machine",
                                         "microvm",
                                         "-accel",
                                         "kvm",
                                         "-cpu",
                                         "host",
                                         "-m",
                                         "256",
                                         "-nodefaults",
                                         "-no-user-config",
                                         "-display",
                                         "none",
                                         "-no-reboot",
                                         "-serial",
                                         "none",
                                         "-kernel",
                                         image.string(),
                                         "-append",
                                         "panic=-1 quiet"};
  auto r = sys::run_command(argv, std::chrono::seconds(5));
  if (!r) return r.error().message;
  if (r->timed_out) return "a probe guest did not run under KVM within 5 s";
  if (!r->status.ok()) {
    std::string err = r->err;
    if (auto nl = err.find('\n'); nl != std::string::npos) err.resize(nl);
    return "qemu: " + (err.empty() ? r->status.describe() : err);
  }
  return "";
}

}  // namespace

fs::path boot_image(const PreparedKernel& k) {
  std::error_code ec;
  return !k.vmlinux.empty() && fs::exists(k.vmlinux, ec) ? k.vmlinux : k.bzimage;
}

Accel choose_accel(const fs::path& kernel_image) {
  const char* forced = std::getenv("RXERUN_VM_ACCEL");
  if (forced && std::string_view(forced) == "tcg") return {false, "software emulation (RXERUN_VM_ACCEL=tcg)"};
  if (forced && std::string_view(forced) == "kvm") return {true, "KVM (RXERUN_VM_ACCEL=kvm)"};
  if (!kvm_usable()) return {false, "software emulation (no usable /dev/kvm)"};
  const fs::path cache = cache_dir() / "kvm-probe.json";
  const std::string boot = kernel_boot_id();
  try {
    std::ifstream in(cache);
    if (in) {
      auto j = nlohmann::json::parse(in);
      if (j.at("boot_id") == boot) return {j.at("kvm").get<bool>(), j.at("why").get<std::string>()};
    }
  } catch (const std::exception&) {
    // unreadable: probe again
  }
  const std::string failed = kvm_probe(kernel_image);
  Accel a = failed.empty() ? Accel{true, "KVM (/dev/kvm)"}
                           : Accel{false, "software emulation: /dev/kvm cannot run a guest here (" + failed + ")"};
  std::error_code ec;
  fs::create_directories(cache.parent_path(), ec);
  const fs::path tmp = cache.string() + "." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << nlohmann::json{{"boot_id", boot}, {"kvm", a.kvm}, {"why", a.why}}.dump() << "\n";
  }
  fs::rename(tmp, cache, ec);  // best effort: without it, the next run probes again
  if (ec) fs::remove(tmp, ec);
  return a;
}

bool uses_go_line(const LabRun& run) {
  return run.kernel.initramfs_current && !run.cold_boot;
}

namespace {

// Whether the wire NICs boot with stand-in MAC addresses (wire_boot_mac())
// that the guest replaces with the lab's (GuestRequest::wire_macs): with a
// current initramfs, so that a snapshot of the machine fits every run.
bool wires_boot_with_stand_ins(const LabRun& run) {
  return run.kernel.initramfs_current;
}

}  // namespace

std::vector<std::string> qemu_command(const LabRun& run, bool kvm, double tsc_khz) {
  const PreparedKernel& k = run.kernel;
  // rodata=off and init_on_alloc=0 turn off two hardening measures a
  // throwaway lab has no use for, each slow under software emulation: the
  // write protection of the kernel's data and its W+X check, and the zeroing
  // of every page allocated. Measured (bench/vmboot.sh, 10 boots of 7.3 under
  // TCG): 4.37 s to the first step with both on, 3.94 s with both off.
  std::string append = "console=ttyS0 panic=-1 quiet pci=off random.trust_cpu=on rodata=off init_on_alloc=0";
  if (!kvm && tsc_khz > 0) append += " tsc_early_khz=" + std::to_string(static_cast<long long>(tsc_khz));
  append += std::string(" ") + std::string(kParamRelease) + "=" + k.release;
  append += std::string(" ") + std::string(kParamModules) + "=" + k.modules.string();
  append += std::string(" ") + std::string(kParamExe) + "=" + run.exe.string();
  if (uses_go_line(run)) append += std::string(" ") + std::string(kParamGo) + "=console";
  // For debugging a guest (and for the boot-failure test): more kernel parameters.
  if (const char* extra = std::getenv("RXERUN_VM_APPEND"); extra && *extra) append += std::string(" ") + extra;
  const char* tcg = std::getenv("RXERUN_VM_TCG_THREAD");
  const std::string tcg_thread = tcg && std::string_view(tcg) == "multi" ? "multi" : "single";
  const fs::path image = boot_image(k);
  std::vector<std::string> cmd{"qemu-system-x86_64",
                               "-machine",
                               "microvm,acpi=on,pit=on,pic=on,rtc=on",
                               "-accel",
                               kvm ? "kvm" : "tcg,thread=" + tcg_thread,
                               "-cpu",
                               kvm ? "host" : "max",
                               "-smp",
                               "2",
                               "-m",
                               "1024",
                               "-nodefaults",
                               "-no-user-config",
                               "-display",
                               "none",
                               "-no-reboot",
                               "-serial",
                               "stdio",
                               "-chardev",
                               "file,id=out,path=/dev/fd/3",
                               "-device",
                               "isa-serial,chardev=out,index=1",
                               "-kernel",
                               image.string(),
                               "-initrd",
                               k.initramfs.string(),
                               "-append",
                               append,
                               "-fsdev",
                               "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
                               "-device",
                               "virtio-9p-device,fsdev=root,mount_tag=" + std::string(kHostRootTag),
                               "-fsdev",
                               "local,id=share,path=" + run.share.string() + ",security_model=none,multidevs=remap",
                               "-device",
                               "virtio-9p-device,fsdev=share,mount_tag=" + std::string(kShareTag)};
  if (!run.control.empty())
    cmd.insert(cmd.end(), {"-device", "virtio-serial-device", "-chardev",
                           "socket,id=control,path=" + run.control.string() + ",server=on,wait=off", "-device",
                           "virtserialport,chardev=control,name=" + std::string(kAgentPort)});
  // With the go line, each wire NIC boots with a stand-in MAC address and
  // the guest gives it the lab's (run_lab() puts it in the request).
  for (std::size_t i = 0; i < run.wires.size(); ++i) {
    const WireNic& w = run.wires[i];
    const std::string id = "wire" + std::to_string(i);
    const std::string mac = wires_boot_with_stand_ins(run) ? wire_boot_mac(i) : w.mac;
    cmd.insert(cmd.end(), {"-netdev",
                           "dgram,id=" + id + ",local.type=unix,local.path=" + w.local.string() +
                               ",remote.type=unix,remote.path=" + w.remote.string(),
                           "-device", "virtio-net-device,netdev=" + id + ",mac=" + mac});
  }
  return cmd;
}

namespace {

// qemu's command line for `run` with the paths that change from run to run
// as placeholders: what a snapshot's machine is (vm/snapshot.h).
std::vector<std::string> machine_of(const LabRun& run, bool kvm) {
  LabRun shape = run;
  shape.exe = "/EXE";
  shape.share = "/SHARE";
  if (!shape.control.empty()) shape.control = "/CONTROL";
  for (std::size_t i = 0; i < shape.wires.size(); ++i)
    shape.wires[i] = {.mac = "", .local = "/WIRE" + std::to_string(i), .remote = "/PEER" + std::to_string(i)};
  return qemu_command(shape, kvm, 0.0);
}

}  // namespace

Result<LabRunResult> run_lab(const LabRun& run) {
  std::vector<fs::path> paths{run.exe, run.kernel.modules, run.share};
  for (const auto& w : run.wires) paths.insert(paths.end(), {w.local, w.remote});
  if (!run.control.empty()) paths.push_back(run.control);
  for (const auto& p : paths)
    if (p.string().find_first_of(" \t\n,") != std::string::npos)
      return make_error("the lab VM cannot use a path with a space or a comma: " + p.string());
  {
    GuestRequest request = run.request;
    if (wires_boot_with_stand_ins(run))
      for (std::size_t i = 0; i < run.wires.size(); ++i)
        request.wire_macs.emplace_back(wire_boot_mac(i), run.wires[i].mac);
    std::ofstream req(run.share / "request.json");
    req << request.to_json().dump() << "\n";
    if (!req) return make_error("cannot write into " + run.share.string(), errno);
  }
  const bool kvm = run.kvm ? *run.kvm : choose_accel(boot_image(run.kernel)).kvm;
  auto cmd = qemu_command(run, kvm, kvm ? 0.0 : measure_tsc_khz());
  LabRunResult result;
  result.accel = kvm ? "kvm" : "tcg";
  Start start{.go = uses_go_line(run)};
  std::optional<SnapshotSlot> slot;
  if (start.go) {
    slot = snapshot_slot(run.kernel, machine_of(run, kvm), kvm, !run.control.empty(), run.wires.size());
    start.slot = &*slot;
    start.qmp = run.share / "qmp.sock";  // the run's private directory, removed with it
    cmd.insert(cmd.end(), {"-qmp", "unix:" + start.qmp.string() + ",server=on,wait=off"});
  }
  std::error_code ec;
  if (slot && fs::exists(slot->path(), ec)) {
    auto restore_cmd = cmd;
    restore_cmd.insert(restore_cmd.end(), {"-incoming", "fd:" + std::to_string(kSnapshotFd)});
    start.mode = Start::Mode::Restore;
    Boot boot = boot_once(run, restore_cmd, kvm, start);
    fs::remove(start.qmp, ec);
    if (!boot.restore_failed) {
      result.start = "snapshot";
      return finish_lab(run, boot, 1, std::move(result));
    }
    if (run.notice)
      run.notice("lab VM: the snapshot of kernel " + run.kernel.label + " did not restore (" + boot.detail +
                 "): booting instead, and making it anew");
    fs::remove(slot->path(), ec);
  }
  std::optional<SnapshotLock> lock;
  start.mode = Start::Mode::Boot;
  if (slot) {
    std::string why;
    lock = SnapshotLock::try_take(*slot, &why);
    if (lock) {
      start.mode = Start::Mode::BootAndSave;
      if (run.notice && !slot->stale().empty())
        run.notice("lab VM: making the snapshot of kernel " + run.kernel.label +
                   " again: its kernel, initramfs, rxerun, qemu or machine changed");
    } else if (!why.empty() && run.notice) {
      run.notice("lab VM: no snapshot of kernel " + run.kernel.label + ": " + why);
    }
  }
  for (int attempt = 1;; ++attempt) {
    Boot boot = boot_once(run, cmd, kvm, start);
    if (boot.saved) start.mode = Start::Mode::Boot;  // a second boot has nothing more to save
    fs::remove(start.qmp, ec);
    if (boot.outcome == LabOutcome::BootFailed && boot.retryable && attempt == 1) {
      if (run.notice) run.notice("lab VM: " + boot.detail + "; booting again");
      continue;
    }
    return finish_lab(run, boot, attempt, std::move(result));
  }
}

}  // namespace rxerun::vm
