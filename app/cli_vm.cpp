#include "app/cli_vm.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <variant>

#include "app/cli.h"
#include "app/kernel_health.h"
#include "base/files.h"
#include "base/output.h"
#include "engine/report.h"
#include "sys/host_info.h"
#include "sys/interrupt.h"
#include "vm/boot_protocol.h"
#include "vm/kernel/siw_build.h"
#include "vm/lab_vm.h"

namespace rxerun {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::seconds kLabMargin{300};

std::string errno_suffix(const Error& e) {
  return e.code ? std::string(": ") + std::strerror(e.code) : "";
}

// The JSON report the guest wrote, with the lab VM's facts added.
Result<void> add_vm_facts(const fs::path& file, const vm::PreparedKernel& kernel, const vm::LabRunResult& lab) {
  nlohmann::json report;
  {
    std::ifstream in(file);
    if (!in) return make_error("cannot read " + file.string(), errno);
    try {
      report = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      return make_error("the guest's JSON report is not JSON: " + std::string(e.what()));
    }
  }
  report["vm"] = {
      {"kernel", kernel.label}, {"release", kernel.release},  {"package_version", kernel.package_version},
      {"accel", lab.accel},     {"boot_s", lab.boot_seconds}, {"guest_uptime_at_start_s", lab.guest.uptime_at_start},
      {"boots", lab.boots},     {"dmesg", lab.guest.dmesg}};
  std::ofstream out(file, std::ios::trunc);
  out << report.dump(2) << "\n";
  if (!out) return make_error("cannot write " + file.string(), errno);
  return {};
}

}  // namespace

std::chrono::seconds lab_run_budget(const Scenario& scenario, const Registry& registry) {
  if (scenario.vm_timeout) return std::chrono::duration_cast<std::chrono::seconds>(*scenario.vm_timeout);
  Duration total{0};
  for (const auto& step : scenario.steps) {
    const Kind* kind = registry.find(step.kind);
    Duration t = step.timeout                         ? *step.timeout
                 : kind && kind->spec.default_timeout ? *kind->spec.default_timeout
                                                      : Duration(30'000);
    if (t.count() == 0) t = Duration(60'000);  // kinds without a timeout: a minute each
    total = saturating_add(
        total, saturating_add(saturating_mul(t, step.retries + 1), saturating_mul(step.delay, step.retries)));
  }
  // Saturated at kMaxDuration: compared with steady_clock's nanoseconds, a
  // budget past that would overflow and read as already spent.
  return std::chrono::duration_cast<std::chrono::seconds>(saturating_add(total, kLabMargin));
}

namespace {

// The path of this binary, which the guest runs too.
std::optional<std::string> own_binary() {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) {
    print(stderr, "rxerun: cannot find its own binary (/proc/self/exe)\n");
    return std::nullopt;
  }
  exe[n] = '\0';
  return std::string(exe);
}

// Boots the lab VM with `kernel` and runs `request` in it, its output live on
// stdout, a spinner while it boots (on a terminal) and the boot line once it
// is up. Returns the finished run, or rxerun's exit code when the VM could
// not run it (the reason printed).
// `kernel_died`, when given, is asked first about a guest that died during
// the run: an exit code when it reported that as the run's result.
std::variant<vm::LabRunResult, int> boot_and_run(
    const vm::PreparedKernel& kernel, vm::GuestRequest request, const fs::path& share, std::chrono::seconds budget,
    bool quiet, const std::function<std::optional<int>(const vm::LabRunResult&)>& kernel_died = {}) {
  const auto exe = own_binary();
  if (!exe) return kExitEnvironment;
  vm::LabRun run;
  run.kernel = kernel;
  const vm::Accel accel_choice = vm::choose_accel(vm::boot_image(kernel));
  run.kvm = accel_choice.kvm;
  const std::string accel = accel_choice.kvm ? "kvm" : "tcg";
  run.exe = *exe;
  run.share = share;
  run.run_timeout = budget;
  run.request = std::move(request);

  const bool spinner = !quiet && sys::is_terminal(2);
  const std::string which = "kernel " + kernel.label;
  run.booting = [&](double secs) {
    static const char frames[] = "|/-\\";
    if (spinner)
      print(stderr, "\r{} booting the lab VM ({}) {:.1f}s", frames[static_cast<int>(secs * 10) % 4], which, secs);
  };
  bool announced = false;
  run.started = [&](double secs) {
    if (spinner) print(stderr, "\r\033[K");
    announced = true;
    // The boot time, in every log (CI's among them).
    if (!quiet)
      print(stdout, "lab VM: kernel {} ({}, {}), up in {:.1f} s\n", kernel.label, kernel.release, accel, secs);
    std::fflush(stdout);
  };
  run.output = [&](std::string_view bytes) { write_out(stdout, bytes); };
  run.notice = [&](const std::string& line) {
    if (spinner) print(stderr, "\r\033[K");
    print(stderr, "rxerun: {}\n", line);
  };
  sys::Interrupt interrupt;
  interrupt.bind_signals();
  run.interrupt_fd = interrupt.fd();

  auto lab = vm::run_lab(run);
  if (spinner && !announced) print(stderr, "\r\033[K");
  if (!lab) {
    print(stderr, "rxerun: cannot start the lab VM: {}{}\n", lab.error().message, errno_suffix(lab.error()));
    return kExitEnvironment;
  }
  if (lab->outcome == vm::LabOutcome::Crashed && kernel_died)
    if (auto code = kernel_died(*lab)) return *code;
  switch (lab->outcome) {
    case vm::LabOutcome::Interrupted:
      print(stderr, "rxerun: interrupted: the lab VM was stopped (nothing of it is left on the host)\n");
      return kExitInterrupted;
    case vm::LabOutcome::BootFailed:
    case vm::LabOutcome::Hung:
    case vm::LabOutcome::Crashed: {
      const char* what = lab->outcome == vm::LabOutcome::BootFailed ? "the lab VM did not boot"
                         : lab->outcome == vm::LabOutcome::Hung     ? "the run in the lab VM hung"
                                                                    : "the lab VM stopped during the run";
      print(stderr, "rxerun: {} ({}): {}\n", what, which, lab->detail);
      const auto& tail = lab->console_tail;
      if (!tail.empty()) {
        print(stderr, "the guest console's last lines:\n");
        for (std::size_t i = tail.size() > 12 ? tail.size() - 12 : 0; i < tail.size(); ++i)
          print(stderr, "  {}\n", tail[i]);
      }
      return kExitEnvironment;
    }
    case vm::LabOutcome::Finished: break;
  }
  return std::move(*lab);
}

// Copies what the guest's steps wrote under the share's output directory to
// the same relative paths under `to`, replacing files there (atomically,
// never through a symbolic link: base/files.h). Links the guest made are
// not followed: only regular files come back.
Result<void> bring_back_outputs(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file() || it->is_symlink()) continue;
    const fs::path target = to / fs::relative(it->path(), from);
    fs::create_directories(target.parent_path(), ec);
    if (ec) return make_error("cannot bring " + target.string() + " back from the lab VM: " + ec.message());
    if (auto r = copy_file_atomic(it->path(), target, "output file"); !r)
      return make_error("cannot bring " + target.string() + " back from the lab VM: " + r.error().message,
                        r.error().code);
  }
  if (ec) return make_error("cannot read the lab VM's output files: " + ec.message());
  return {};
}

}  // namespace

int run_in_lab_vm(const VmRunOptions& o, const Scenario& scenario, const Registry& registry,
                  const vm::PreparedKernel& kernel) {
  const std::vector<ReportTarget>& targets = o.reports;
  auto share = vm::ShareDir::create();
  if (!share) {
    print(stderr, "rxerun: {}{}\n", share.error().message, errno_suffix(share.error()));
    return kExitEnvironment;
  }
  // The guest runs the same command on its own kernel: `--host`, reports
  // into the share, the colour decided here.
  vm::GuestRequest request;
  auto& args = request.args;
  args = {"run", fs::absolute(o.scenario).string(), "--host", "--color", o.color ? "always" : "never"};
  for (const auto& v : o.vars) args.insert(args.end(), {"--var", v});
  for (const auto& t : o.only) args.insert(args.end(), {"--only", t});
  for (const auto& t : o.skip) args.insert(args.end(), {"--skip", t});
  if (o.force) args.push_back("--force");
  if (o.verbose) args.push_back("-v");
  if (o.quiet) args.push_back("-q");
  if (!o.kernel_health.empty()) args.insert(args.end(), {"--kernel-health", o.kernel_health});
  std::vector<std::string> guest_reports;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const bool json = targets[i].format == ReportTarget::Format::Json;
    guest_reports.push_back(fmt::format("report-{}.{}", i, json ? "json" : "xml"));
    args.insert(args.end(),
                {"--report", fmt::format("{}:{}/{}", json ? "json" : "junit", vm::kShareMount, guest_reports.back())});
  }
  // Files the steps write (captures) go into the share and come back here.
  const fs::path guest_output = share->path() / "output";
  std::error_code mkdir_ec;
  fs::create_directories(guest_output, mkdir_ec);
  args.insert(args.end(), {"--guest-output", fmt::format("{}/output", vm::kShareMount)});
  request.cwd = fs::current_path().string();
  const char* term = std::getenv("TERM");
  request.term = o.color && term && *term ? term : "dumb";

  // A guest kernel that died of a panic or an oops is a kernel health finding, not a lab VM error.
  const auto kernel_died = [&](const vm::LabRunResult& lab) {
    return report_lab_vm_death(lab, scenario, kernel, kernel_health_policy(o.kernel_health, scenario), share->path(),
                               targets, {o.color, o.quiet ? Verbosity::Quiet : Verbosity::Normal});
  };
  auto ran =
      boot_and_run(kernel, std::move(request), share->path(), lab_run_budget(scenario, registry), o.quiet, kernel_died);
  if (const int* failed = std::get_if<int>(&ran)) return *failed;
  const auto& lab = std::get<vm::LabRunResult>(ran);
  int code = lab.guest.exit_code;
  if (code != kExitOk && !lab.guest.dmesg.empty()) {
    print(stdout, "kernel messages of the RDMA stack in the lab VM:\n");
    for (const auto& line : lab.guest.dmesg) print(stdout, "  {}\n", line);
  }
  if (auto r = bring_back_outputs(guest_output, o.output_dir.empty() ? fs::path(".") : fs::path(o.output_dir)); !r) {
    print(stderr, "rxerun: {}\n", r.error().message);
    if (code == kExitOk || code == kExitFailed) code = kExitEnvironment;
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const fs::path from = share->path() / guest_reports[i];
    if (!fs::exists(from)) continue;  // the guest said why it wrote none
    if (targets[i].format == ReportTarget::Format::Json) {
      if (auto r = add_vm_facts(from, kernel, lab); !r)
        print(stderr, "rxerun: {}{}\n", r.error().message, errno_suffix(r.error()));
    }
    if (auto r = copy_file_atomic(from, targets[i].path, "report"); !r) {
      print(stderr, "rxerun: {}\n", r.error().message);
      if (code == kExitOk || code == kExitFailed) code = kExitEnvironment;
    }
  }
  return code;
}

int cmd_vm_exec(const VmExecOptions& o) {
  const auto prepared = vm::prepared_kernels(vm::search_dirs());
  const vm::PreparedKernel* kernel = prepared.empty() ? nullptr : &prepared.front();  // the newest
  if (!o.kernel.empty()) {
    kernel = nullptr;
    for (const auto& k : prepared)
      if (k.label == o.kernel) kernel = &k;
    if (!vm::find_kernel_source(o.kernel)) {
      print(stderr, "rxerun: unknown lab kernel '{}'\n", o.kernel);
      return kExitUsage;
    }
  }
  if (!kernel) {
    print(stderr, "rxerun: no lab kernel{} is prepared: run `rxerun vm setup{}`\n",
          o.kernel.empty() ? "" : " " + o.kernel, o.kernel.empty() ? "" : " --kernel " + o.kernel);
    return kExitEnvironment;
  }
  auto share = vm::ShareDir::create();
  if (!share) {
    print(stderr, "rxerun: {}{}\n", share.error().message, errno_suffix(share.error()));
    return kExitEnvironment;
  }
  vm::GuestRequest request;
  request.program = o.command.front();
  request.args.assign(o.command.begin() + 1, o.command.end());
  request.cwd = fs::current_path().string();
  const char* term = std::getenv("TERM");
  request.term = term && *term && sys::is_terminal(1) ? term : "dumb";
  auto ran = boot_and_run(*kernel, std::move(request), share->path(), o.timeout, o.quiet);
  if (const int* failed = std::get_if<int>(&ran)) return *failed;
  return std::get<vm::LabRunResult>(ran).guest.exit_code;
}

int cmd_vm_setup(const std::vector<std::string>& kernels) {
  std::vector<const vm::KernelSource*> sources;
  if (kernels.empty())
    for (const auto& s : vm::kernel_sources()) sources.push_back(&s);
  for (const auto& k : kernels) {
    const auto* s = vm::find_kernel_source(k);
    if (!s) {
      std::string known;
      for (const auto& x : vm::kernel_sources()) known += (known.empty() ? "" : ", ") + x.label;
      print(stderr, "rxerun: unknown lab kernel '{}': rxerun knows {}\n", k, known);
      return kExitUsage;
    }
    sources.push_back(s);
  }
  sys::Interrupt interrupt;
  interrupt.bind_signals();
  const fs::path cache = vm::cache_dir();
  for (const auto* s : sources) {
    auto r = vm::setup_kernel(
        cache, *s, [&](const std::string& line) { print(stdout, "kernel {}: {}\n", s->label, line); }, interrupt.fd());
    if (interrupt.requested()) {
      print(stderr, "rxerun: interrupted: nothing half-prepared was left behind\n");
      return kExitInterrupted;
    }
    if (!r) {
      print(stderr, "rxerun: kernel {}: {}{}\n", s->label, r.error().message, errno_suffix(r.error()));
      return kExitEnvironment;
    }
    print(stdout, "kernel {}: ready: {} in {}\n", s->label, r->release, r->dir.string());
  }
  return kExitOk;
}

int cmd_vm_status() {
  const auto prepared = vm::prepared_kernels(vm::search_dirs());
  print(stdout, "{:<6} {:<8} {:<24} {}\n", "KERNEL", "STATE", "RELEASE", "WHERE");
  for (const auto& s : vm::kernel_sources()) {
    const vm::PreparedKernel* k = nullptr;
    for (const auto& p : prepared)
      if (p.label == s.label) k = &p;
    if (k)
      print(stdout, "{:<6} {:<8} {:<24} {}\n", s.label, "ready", k->release, k->dir.string());
    else
      print(stdout, "{:<6} {:<8} {:<24} {}\n", s.label, "missing", "-", "rxerun vm setup --kernel " + s.label);
  }
  if (prepared.empty())
    print(stdout, "accelerator: {}\n",
          vm::kvm_usable() ? "KVM (/dev/kvm), unless a probe boot says otherwise"
                           : "software emulation (no usable /dev/kvm)");
  else
    print(stdout, "accelerator: {}\n", vm::choose_accel(vm::boot_image(prepared.front())).why);
  if (!prepared.empty()) {
    print(stdout, "siw (soft-iWARP; Debian builds its kernels without it, vm setup builds it where it can):\n");
    for (const auto& k : prepared) {
      auto siw = vm::load_siw_status(k.dir);
      const std::string what = !siw             ? "not tried yet: rxerun vm setup --kernel " + k.label + " builds it"
                               : siw->available ? siw->how
                                                : "none: " + siw->why_not;
      print(stdout, "  {:<6} {}\n", k.label, what);
    }
  }
  return kExitOk;
}

}  // namespace rxerun
