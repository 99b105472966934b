#include "vm/lab_vm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cerrno>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

#include "base/duration.h"
#include "base/fd.h"
#include "base/files.h"
#include "sys/process.h"
#include "vm/boot_protocol.h"
#include "vm/control.h"
#include "vm/kernel/kernels.h"

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

// One boot of qemu, start to end.
struct Boot {
  LabOutcome outcome = LabOutcome::BootFailed;
  bool started = false;
  bool retryable = false;  // a kernel that died on its own before the run: worth one more boot
  double boot_seconds = 0;
  std::string detail;
  std::deque<std::string> console;
};

Boot boot_once(const LabRun& run, const std::vector<std::string>& cmd, bool kvm) {
  Boot boot;
  Pipe console, output, errors;
  if (auto r = make_pipe(console); !r) return boot.detail = r.error().message, boot;
  if (auto r = make_pipe(output); !r) return boot.detail = r.error().message, boot;
  if (auto r = make_pipe(errors); !r) return boot.detail = r.error().message, boot;
  sys::SpawnOptions so;
  so.fds = {{3, output.write.get()}};  // the guest's output reaches qemu as its fd 3 (cmd names /dev/fd/3)
  so.stdout_fd = console.write.get();
  so.stderr_fd = errors.write.get();
  const auto t0 = Clock::now();
  auto qemu = sys::spawn(cmd, so);
  console.write.reset();
  errors.write.reset();
  output.write.reset();
  if (!qemu) {
    boot.detail =
        qemu.error().message + (qemu.error().code ? std::string(": ") + std::strerror(qemu.error().code) : "");
    return boot;
  }

  const auto boot_limit = kvm ? std::chrono::seconds(30) : std::chrono::seconds(90);
  Clock::time_point started_at{};
  // A kernel that panicked during the run reboots at once (panic=-1) and
  // qemu ends (-no-reboot); one stuck in the panic (a CPU that does not
  // answer the stop, under a busy host's emulation) is stopped from here
  // after a grace, instead of waiting out the run's whole budget.
  std::optional<Clock::time_point> panicked_at;
  std::string partial, qemu_errors;
  bool console_open = true, output_open = true, errors_open = true;
  auto finish = [&](LabOutcome outcome, std::string detail) {
    boot.outcome = outcome;
    boot.detail = std::move(detail);
    qemu->terminate(std::chrono::milliseconds(2000));
  };
  for (;;) {
    const auto now = Clock::now();
    if (!boot.started && now - t0 > boot_limit) {
      boot.retryable = true;
      finish(LabOutcome::BootFailed, "the guest did not start within " + std::to_string(boot_limit.count()) + " s");
      return boot;
    }
    if (boot.started && now - started_at > run.run_timeout) {
      finish(LabOutcome::Hung, "the run did not end within " + std::to_string(run.run_timeout.count()) +
                                   " s (the steps' timeouts plus cleanup): the lab VM was stopped");
      return boot;
    }
    if (panicked_at && now - *panicked_at > kPanicGrace) {
      finish(LabOutcome::Crashed, "the guest kernel panicked and did not stop by itself: the lab VM was stopped");
      return boot;
    }
    if (!console_open && !output_open && !errors_open) break;
    pollfd fds[4] = {{console_open ? console.read.get() : -1, POLLIN, 0},
                     {output_open ? output.read.get() : -1, POLLIN, 0},
                     {errors_open ? errors.read.get() : -1, POLLIN, 0},
                     {run.interrupt_fd, POLLIN, 0}};
    int r = ::poll(fds, 4, 100);
    if (r < 0 && errno != EINTR) break;
    if (fds[3].revents & POLLIN) {
      finish(LabOutcome::Interrupted, "interrupted");
      return boot;
    }
    if (!boot.started && run.booting) run.booting(seconds_since(t0));
    char buf[16384];
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(output.read.get(), buf, sizeof buf);
      if (n > 0 && run.output) run.output(std::string_view(buf, static_cast<std::size_t>(n)));
      if (n == 0 || (n < 0 && errno != EINTR)) output_open = false;
    }
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(errors.read.get(), buf, sizeof buf);
      if (n > 0) qemu_errors.append(buf, static_cast<std::size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR)) errors_open = false;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(console.read.get(), buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR)) console_open = false;
      if (n > 0) partial.append(buf, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = partial.find('\n')) != std::string::npos) {
        std::string line = partial.substr(0, nl);
        partial.erase(0, nl + 1);
        while (!line.empty() && (line.back() == '\r')) line.pop_back();
        boot.console.push_back(line);
        if (boot.console.size() > kConsoleTail) boot.console.pop_front();
        if (!boot.started && line.find(kStartedMarker) != std::string::npos) {
          boot.started = true;
          started_at = Clock::now();
          boot.boot_seconds = seconds_since(t0);
          if (run.started) run.started(boot.boot_seconds);
        } else if (boot.started && !panicked_at && line.find("Kernel panic - not syncing") != std::string::npos) {
          panicked_at = Clock::now();
        } else if (!boot.started && early_death(line)) {
          boot.retryable = line.find("rxerun-init: FATAL") == std::string::npos;
          finish(LabOutcome::BootFailed, "the guest kernel failed while booting: " + line);
          return boot;
        }
      }
    }
  }
  const sys::ExitStatus st = qemu->wait();
  if (!boot.started) {
    std::string why = qemu_errors.empty() ? "qemu ended (" + st.describe() + ") before the guest started"
                                          : "qemu: " + qemu_errors.substr(0, qemu_errors.find_last_not_of("\n") + 1);
    boot.retryable = qemu_errors.empty();
    boot.outcome = LabOutcome::BootFailed;
    boot.detail = why;
    return boot;
  }
  boot.outcome = LabOutcome::Finished;
  return boot;
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
  for (std::size_t i = 0; i < run.wires.size(); ++i) {
    const WireNic& w = run.wires[i];
    const std::string id = "wire" + std::to_string(i);
    cmd.insert(cmd.end(), {"-netdev",
                           "dgram,id=" + id + ",local.type=unix,local.path=" + w.local.string() +
                               ",remote.type=unix,remote.path=" + w.remote.string(),
                           "-device", "virtio-net-device,netdev=" + id + ",mac=" + w.mac});
  }
  return cmd;
}

Result<LabRunResult> run_lab(const LabRun& run) {
  std::vector<fs::path> paths{run.exe, run.kernel.modules, run.share};
  for (const auto& w : run.wires) paths.insert(paths.end(), {w.local, w.remote});
  if (!run.control.empty()) paths.push_back(run.control);
  for (const auto& p : paths)
    if (p.string().find_first_of(" \t\n,") != std::string::npos)
      return make_error("the lab VM cannot use a path with a space or a comma: " + p.string());
  {
    std::ofstream req(run.share / "request.json");
    req << run.request.to_json().dump() << "\n";
    if (!req) return make_error("cannot write into " + run.share.string(), errno);
  }
  const bool kvm = run.kvm ? *run.kvm : choose_accel(boot_image(run.kernel)).kvm;
  const auto cmd = qemu_command(run, kvm, kvm ? 0.0 : measure_tsc_khz());
  LabRunResult result;
  result.accel = kvm ? "kvm" : "tcg";
  for (int attempt = 1;; ++attempt) {
    Boot boot = boot_once(run, cmd, kvm);
    result.boots = attempt;
    result.outcome = boot.outcome;
    result.detail = boot.detail;
    result.boot_seconds = boot.boot_seconds;
    result.console_tail.assign(boot.console.begin(), boot.console.end());
    if (boot.outcome == LabOutcome::BootFailed && boot.retryable && attempt == 1) {
      if (run.notice) run.notice("lab VM: " + boot.detail + "; booting again");
      continue;
    }
    break;
  }
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

}  // namespace rxerun::vm
