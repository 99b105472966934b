#include "app/cli_vm.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <variant>

#include "app/kernel_health.h"
#include "app/placement.h"
#include "base/duration.h"
#include "base/files.h"
#include "base/output.h"
#include "base/result.h"
#include "base/strings.h"
#include "engine/exit_code.h"
#include "engine/report.h"
#include "sys/host_info.h"
#include "sys/interrupt.h"
#include "vm/boot_protocol.h"
#include "vm/files.h"
#include "vm/kernel/siw_build.h"
#include "vm/lab_vm.h"
#include "vm/snapshot.h"

namespace rxerun {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::seconds kLabMargin{300};

}  // namespace

std::string up_line(const vm::PreparedKernel& kernel, const std::string& accel, double seconds, bool restored) {
  return fmt::format("lab VM: kernel {} ({}, {}), up in {:.1f} s{}\n", kernel.label, kernel.release, accel, seconds,
                     restored ? " from its snapshot" : "");
}

// What a report says about the lab VM a run had.
nlohmann::json vm_facts(const vm::PreparedKernel& kernel, const vm::LabRunResult& lab) {
  return {{"kernel", kernel.label},
          {"release", kernel.release},
          {"package_version", kernel.package_version},
          {"accel", lab.accel},
          {"start", lab.start},
          {"boot_s", lab.boot_seconds},
          {"guest_uptime_at_start_s", lab.guest.uptime_at_start},
          {"boots", lab.boots},
          {"dmesg", lab.guest.dmesg}};
}

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

// Why the lab VM did not finish the run, with the console's last lines.
std::string crash_message(const vm::LabRunResult& lab, const std::string& which) {
  const char* what = lab.outcome == vm::LabOutcome::BootFailed ? "the lab VM did not boot"
                     : lab.outcome == vm::LabOutcome::Hung     ? "the run in the lab VM hung"
                                                               : "the lab VM stopped during the run";
  std::string message = fmt::format("{} ({}): {}", what, which, lab.detail);
  const auto& tail = lab.console_tail;
  if (!tail.empty()) {
    message += "\nthe guest console's last lines:";
    for (std::size_t i = tail.size() > 12 ? tail.size() - 12 : 0; i < tail.size(); ++i) message += "\n  " + tail[i];
  }
  return message;
}

namespace {

struct BootIo {
  std::function<void(std::string_view)> output;  // the guest's output and the boot line; empty: stdout
  std::string prefix;                            // before rxerun's notes on stderr
  bool spinner = true;                           // on a terminal, unless quiet
  int interrupt_fd = -1;                         // -1: bind the signals here
  // A guest that died during the run comes back as it is (LabOutcome::
  // Crashed), unprinted: its kernel's death may be the run's result (a
  // kernel health finding), which the caller decides.
  bool return_crash = false;
  bool cold_boot = false;  // --cold-boot: boot the kernel, no snapshot (vm/snapshot.h)
};

// What the lab VM could not do, for the terminal and for the reports.
struct BootFailure {
  int exit_code = kExitEnvironment;
  std::string message;  // "the lab VM did not boot (kernel 6.1): ..." and the console's last lines
};

// Boots the lab VM with `kernel` and runs `request` in it, its output live on
// stdout, a spinner while it boots (on a terminal) and the boot line once it
// is up. Returns the finished run, or rxerun's exit code when the VM could
// not run it (the reason printed).
std::variant<vm::LabRunResult, BootFailure> boot_and_run(const vm::PreparedKernel& kernel, vm::GuestRequest request,
                                                         const fs::path& share, std::chrono::seconds budget, bool quiet,
                                                         const BootIo& io) {
  const auto exe = own_binary();
  if (!exe) return BootFailure{kExitEnvironment, "cannot find its own binary (/proc/self/exe)"};
  const auto out = [&](std::string_view text) {
    if (io.output)
      io.output(text);
    else
      write_out(stdout, text);
  };
  vm::LabRun run;
  run.kernel = kernel;
  const vm::Accel accel_choice = vm::choose_accel(vm::boot_image(kernel));
  run.kvm = accel_choice.kvm;
  const std::string accel = accel_choice.kvm ? "kvm" : "tcg";
  run.exe = *exe;
  run.share = share;
  run.run_timeout = budget;
  run.request = std::move(request);
  run.cold_boot = io.cold_boot;

  const bool spinner = io.spinner && !quiet && sys::is_terminal(2);
  const std::string which = "kernel " + kernel.label;
  run.booting = [&](double secs) {
    static const char frames[] = "|/-\\";
    if (spinner)
      print(stderr, "\r{} booting the lab VM ({}) {:.1f}s", frames[static_cast<int>(secs * 10) % 4], which, secs);
  };
  bool announced = false;
  run.started = [&](double secs, bool restored) {
    if (spinner) print(stderr, "\r\033[K");
    announced = true;
    // The boot time, in every log (CI's among them).
    if (!quiet) out(up_line(kernel, accel, secs, restored));
  };
  run.output = out;
  run.notice = [&](const std::string& line) {
    if (spinner) print(stderr, "\r\033[K");
    print(stderr, "{}rxerun: {}\n", io.prefix, line);
  };
  std::optional<sys::Interrupt> own_interrupt;
  if (io.interrupt_fd < 0) {
    own_interrupt.emplace();
    own_interrupt->bind_signals();
  }
  run.interrupt_fd = own_interrupt ? own_interrupt->fd() : io.interrupt_fd;

  auto lab = vm::run_lab(run);
  if (spinner && !announced) print(stderr, "\r\033[K");
  if (!lab) {
    const std::string message = fmt::format("cannot start the lab VM: {}", error_text(lab.error()));
    print(stderr, "{}rxerun: {}\n", io.prefix, message);
    return BootFailure{kExitEnvironment, message};
  }
  if (lab->outcome == vm::LabOutcome::Crashed && io.return_crash) return std::move(*lab);
  switch (lab->outcome) {
    case vm::LabOutcome::Interrupted:
      print(stderr, "{}rxerun: interrupted: the lab VM was stopped (nothing of it is left on the host)\n", io.prefix);
      return BootFailure{kExitInterrupted, "interrupted: the lab VM was stopped"};
    case vm::LabOutcome::BootFailed:
    case vm::LabOutcome::Hung:
    case vm::LabOutcome::Crashed: {
      const std::string message = crash_message(*lab, which);
      print(stderr, "{}rxerun: {}\n", io.prefix, message);
      return BootFailure{kExitEnvironment, message};
    }
    case vm::LabOutcome::Finished: break;
  }
  return std::move(*lab);
}

}  // namespace

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

namespace {

// A report for a scenario the lab VM did not run to its end.
RunReport unfinished_run(const Scenario& scenario, const vm::PreparedKernel& kernel, int exit_code, std::string error,
                         bool not_run) {
  RunReport r;
  r.file = scenario.file;
  r.scenario = scenario.name;
  r.description = scenario.description;
  r.lab_kernel = kernel.label;
  r.exit_code = not_run ? kExitOk : exit_code;
  r.interrupted = exit_code == kExitInterrupted && !not_run;
  r.error = std::move(error);
  r.not_run = not_run;
  return r;
}

// The guest's report, in the share (as the guest sees it: vm::kShareMount).
constexpr std::string_view kGuestReport = "runs.json";

// The guest runs the same command on its own kernel: `--host`, the
// scenarios by their absolute paths (its working directory may differ),
// its report and the files its steps write into the share.
vm::GuestRequest guest_request(const VmRunOptions& o, const vm::PreparedKernel& kernel) {
  RunCommandOptions guest = o.run;
  for (auto& file : guest.scenarios) file = fs::absolute(file).string();
  guest.host = true;
  guest.lab_kernel = kernel.label;
  guest.reports = {fmt::format("json:{}/{}", vm::kShareMount, kGuestReport)};
  guest.guest_output = fmt::format("{}/output", vm::kShareMount);
  vm::GuestRequest request;
  request.args = {"run"};
  for (auto& arg : run_arguments(guest)) request.args.push_back(std::move(arg));
  request.cwd = fs::current_path().string();
  const char* term = std::getenv("TERM");
  request.term = o.run.color == "always" && term && *term ? term : "dumb";
  return request;
}

// The scenarios of one boot and the reports they have so far.
class LabVmGroupRun {
 public:
  LabVmGroupRun(const VmRunOptions& o, const std::vector<const Scenario*>& scenarios, const vm::PreparedKernel& kernel)
      : o_(o), scenarios_(scenarios), kernel_(kernel) {}

  VmGroupResult take() { return std::move(result_); }

  // One of rxerun's own notes, on stderr, after the VM's prefix.
  void note(const std::string& message) const { print(stderr, "{}rxerun: {}\n", o_.prefix, message); }
  void worsen(int exit_code) { result_.exit_code = worse_exit_code(result_.exit_code, exit_code); }

  // Every scenario the VM could not finish gets a report that says why:
  // the first the error, the others not run.
  void finish_unrun(int exit_code, const std::string& error) {
    for (std::size_t i = result_.runs.size(); i < scenarios_.size(); ++i) {
      const bool first = i == result_.runs.size();
      result_.runs.push_back(unfinished_run(*scenarios_[i], kernel_, exit_code,
                                            first ? error : "not run: the lab VM stopped before it", !first));
    }
    worsen(exit_code);
  }

  // What the guest finished, even when the VM stopped later (it rewrites its
  // report after every run), with the VM's `facts` in each run that ran.
  void read_guest_reports(const fs::path& file, const nlohmann::json& facts) {
    if (std::error_code ec; !fs::exists(file, ec)) return;
    std::ifstream in(file);
    auto runs = [&]() -> Result<std::vector<RunReport>> {
      try {
        return run_reports_from_json(nlohmann::json::parse(in));
      } catch (const std::exception& e) {
        return make_error(std::string("it is not JSON: ") + e.what());
      }
    }();
    if (!runs) {
      note("cannot read the lab VM's report: " + runs.error().message);
      return;
    }
    for (auto& r : *runs) {
      if (result_.runs.size() == scenarios_.size()) break;
      r.file = o_.run.scenarios[result_.runs.size()];  // as the user named it, not the guest's absolute path
      r.lab_kernel = kernel_.label;
      if (!r.not_run) r.vm = facts;
      if (!r.not_run) worsen(r.exit_code);
      result_.runs.push_back(std::move(r));
    }
  }

  // The lab VM ended by itself (it finished, or its kernel died).
  void settle_end(const vm::LabRunResult& lab, const fs::path& share, const nlohmann::json& facts) {
    const bool all_reported = result_.runs.size() == scenarios_.size();
    if (lab.outcome == vm::LabOutcome::Crashed && !all_reported) return settle_kernel_death(lab, share, facts);
    if (lab.outcome == vm::LabOutcome::Crashed) {  // after its last run: the runs stand, the VM's end is an error
      note(crash_message(lab, "kernel " + kernel_.label));
      worsen(kExitEnvironment);
      return;
    }
    if (!all_reported)
      finish_unrun(kExitEnvironment, "the run in the lab VM ended (" + lab.guest.ended + ") without its report");
    worsen(lab.guest.exit_code);
    if (result_.exit_code != kExitOk && !lab.guest.dmesg.empty()) show_dmesg(lab.guest.dmesg);
  }

 private:
  // A guest kernel that died of a panic or an oops is a kernel health
  // finding of the scenario it was running, not a lab VM error; without
  // its report of the death on the console (or under policy off) it stays
  // one.
  void settle_kernel_death(const vm::LabRunResult& lab, const fs::path& share, const nlohmann::json& facts) {
    const Scenario& running = *scenarios_[result_.runs.size()];
    auto died = lab_vm_death_report(lab, running, kernel_, kernel_health_policy(o_.run.kernel_health, running), share);
    if (!died) {
      const std::string message = crash_message(lab, "kernel " + kernel_.label);
      note(message);
      finish_unrun(kExitEnvironment, message);
      return;
    }
    print(stdout, "{}the lab VM's kernel ({}) died {}\n", o_.prefix, kernel_.label,
          died->kernel_health.findings.front().where());
    TerminalReporter terminal(stdout, {o_.run.color == "always", o_.run.quiet ? Verbosity::Quiet : Verbosity::Normal});
    terminal.run_finished(*died);
    died->file = o_.run.scenarios[result_.runs.size()];
    died->lab_kernel = kernel_.label;
    died->vm = facts;
    worsen(died->exit_code);
    result_.runs.push_back(std::move(*died));
    for (std::size_t i = result_.runs.size(); i < scenarios_.size(); ++i)
      result_.runs.push_back(
          unfinished_run(*scenarios_[i], kernel_, kExitOk, "not run: the lab VM's kernel died before it", true));
  }

  void show_dmesg(const std::vector<std::string>& dmesg) const {
    std::string text = "kernel messages of the RDMA stack in the lab VM:\n";
    for (const auto& line : dmesg) text += "  " + line + "\n";
    if (o_.output)
      o_.output(text);
    else
      write_out(stdout, text);
  }

  const VmRunOptions& o_;
  const std::vector<const Scenario*>& scenarios_;
  const vm::PreparedKernel& kernel_;
  VmGroupResult result_;
};

}  // namespace

VmGroupResult run_in_lab_vm(const VmRunOptions& o, const std::vector<const Scenario*>& scenarios,
                            const Registry& registry, const vm::PreparedKernel& kernel) {
  LabVmGroupRun group(o, scenarios, kernel);
  auto share = vm::ShareDir::create();
  if (!share) {
    const std::string message = error_text(share.error());
    group.note(message);
    group.finish_unrun(kExitEnvironment, message);
    return group.take();
  }
  // Files the steps write (captures) go into the share and come back here.
  const fs::path guest_output = share->path() / "output";
  std::error_code mkdir_ec;
  fs::create_directories(guest_output, mkdir_ec);

  std::chrono::seconds budget{0};
  for (const Scenario* s : scenarios) budget += lab_run_budget(*s, registry);
  const BootIo io{.output = o.output,
                  .prefix = o.prefix,
                  .spinner = o.spinner,
                  .interrupt_fd = o.interrupt_fd,
                  .return_crash = true,
                  .cold_boot = o.cold_boot};
  auto ran = boot_and_run(kernel, guest_request(o, kernel), share->path(), budget, o.run.quiet, io);

  nlohmann::json facts;
  if (const auto* lab = std::get_if<vm::LabRunResult>(&ran)) facts = vm_facts(kernel, *lab);
  group.read_guest_reports(share->path() / kGuestReport, facts);
  // What the guest's steps wrote comes back whatever became of the VM.
  if (auto r = bring_back_outputs(guest_output, o.output_dir.empty() ? fs::path(".") : fs::path(o.output_dir)); !r) {
    group.note(r.error().message);
    group.worsen(kExitEnvironment);
  }
  if (const auto* failed = std::get_if<BootFailure>(&ran))
    group.finish_unrun(failed->exit_code, failed->message);
  else
    group.settle_end(std::get<vm::LabRunResult>(ran), share->path(), facts);
  return group.take();
}

int cmd_vm_exec(const VmExecOptions& o) {
  const auto prepared = vm::prepared_kernels(vm::search_dirs());
  const vm::PreparedKernel* kernel = prepared.empty() ? nullptr : &prepared.front();  // the newest
  if (!o.kernel.empty()) {
    kernel = nullptr;
    for (const auto& k : prepared)
      if (k.label == o.kernel) kernel = &k;
    if (!kernel && !vm::kernel_source_for(o.kernel)) {
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
    print(stderr, "rxerun: {}\n", error_text(share.error()));
    return kExitEnvironment;
  }
  vm::GuestRequest request;
  request.program = o.command.front();
  request.args.assign(o.command.begin() + 1, o.command.end());
  request.cwd = fs::current_path().string();
  const char* term = std::getenv("TERM");
  request.term = term && *term && sys::is_terminal(1) ? term : "dumb";
  auto ran =
      boot_and_run(*kernel, std::move(request), share->path(), o.timeout, o.quiet, BootIo{.cold_boot = o.cold_boot});
  if (const auto* failed = std::get_if<BootFailure>(&ran)) return failed->exit_code;
  return std::get<vm::LabRunResult>(ran).guest.exit_code;
}

std::variant<vm::PreparedKernel, int> own_lab_kernel(const Scenario& scenario, const Registry& registry,
                                                     const std::string& path, const std::string& modules, bool quiet) {
  const vm::OwnKernelRequest request{.path = path, .modules = modules};
  auto files = vm::locate_own_kernel(request);
  if (!files) {
    print(stderr, "rxerun: {}\n", files.error().message);
    return files.error().code == EINVAL ? kExitUsage : kExitEnvironment;
  }
  auto missing = vm::missing_kernel_options(files->config, lab_needs(scenario, registry));
  if (!missing) {
    print(stderr, "rxerun: cannot read {}: {}\n", files->config.string(), error_text(missing.error()));
    return kExitEnvironment;
  }
  if (!missing->empty()) {
    print(stderr, "rxerun: kernel {} ({}) lacks what the lab VM needs; not booted:\n", files->release,
          files->config.string());
    for (const auto& m : *missing) print(stderr, "  {}\n", m);
    print(stderr, "set them (scripts/config -e NAME, or -m NAME) and build it again\n");
    return kExitEnvironment;
  }
  sys::Interrupt interrupt;
  interrupt.bind_signals();
  auto kernel = vm::install_own_kernel(
      vm::cache_dir(), request,
      [&](const std::string& line) {
        if (!quiet) print(stdout, "kernel {}: {}\n", files->release, line);
      },
      interrupt.fd());
  if (interrupt.requested()) {
    print(stderr, "rxerun: interrupted: nothing half-installed was left behind\n");
    return kExitInterrupted;
  }
  if (!kernel) {
    print(stderr, "rxerun: kernel {}: {}\n", files->release, error_text(kernel.error()));
    return kernel.error().code == EINVAL ? kExitUsage : kExitEnvironment;
  }
  return std::move(*kernel);
}

std::vector<std::string> known_kernels() {
  std::vector<std::string> labels;
  for (const auto& s : vm::kernel_sources()) labels.push_back(s.label);
  return labels;
}

std::string known_kernel_labels() {
  return join(known_kernels(), ", ");
}

namespace {

// A ready kernel's snapshot (vm/snapshot.h), made by one start of its lab VM
// when it has none, so that the first lab of each kernel restores it. Not
// being able to is said and is no failure: the first start makes it then.
void make_first_snapshot(const vm::PreparedKernel& kernel, int interrupt_fd) {
  if (!kernel.initramfs_current || !vm::list_snapshots({kernel}).empty()) return;
  auto share = vm::ShareDir::create();
  if (!share) return;
  const auto t0 = std::chrono::steady_clock::now();
  auto ran = boot_and_run(kernel, vm::GuestRequest{.program = "/bin/true", .cwd = "/", .term = "dumb"}, share->path(),
                          std::chrono::seconds(120), true,
                          BootIo{.output = [](std::string_view) {}, .spinner = false, .interrupt_fd = interrupt_fd});
  const auto made = vm::list_snapshots({kernel});
  if (std::holds_alternative<vm::LabRunResult>(ran) && !made.empty())
    print(stdout, "kernel {}: made the lab VM's snapshot ({}) in {:.1f} s\n", kernel.label,
          vm::megabytes(made.front().bytes), seconds_since(t0));
  else
    print(stdout, "kernel {}: no snapshot made now (the first lab VM of this kernel makes it)\n", kernel.label);
}

}  // namespace

int cmd_vm_setup(const std::vector<std::string>& kernels) {
  std::vector<vm::KernelSource> sources;
  if (kernels.empty())
    for (const auto& s : vm::kernel_sources()) sources.push_back(s);
  for (const auto& k : kernels) {
    auto s = vm::kernel_source_for(k);
    if (!s) {
      print(stderr, "rxerun: unknown lab kernel '{}': rxerun knows {}, and any Debian kernel version (6.12, 7.2)\n", k,
            known_kernel_labels());
      return kExitUsage;
    }
    sources.push_back(std::move(*s));
  }
  sys::Interrupt interrupt;
  interrupt.bind_signals();
  const fs::path cache = vm::cache_dir();
  for (const auto& src : sources) {
    const vm::KernelSource* s = &src;
    auto r = vm::setup_kernel(
        cache, *s, [&](const std::string& line) { print(stdout, "kernel {}: {}\n", s->label, line); }, interrupt.fd());
    if (interrupt.requested()) {
      print(stderr, "rxerun: interrupted: nothing half-prepared was left behind\n");
      return kExitInterrupted;
    }
    if (!r) {
      print(stderr, "rxerun: kernel {}: {}\n", s->label, error_text(r.error()));
      return kExitEnvironment;
    }
    print(stdout, "kernel {}: ready: {} in {}\n", s->label, r->release, r->dir.string());
    make_first_snapshot(*r, interrupt.fd());
    if (interrupt.requested()) {
      print(stderr, "rxerun: interrupted: the lab VM was stopped\n");
      return kExitInterrupted;
    }
  }
  return kExitOk;
}

namespace {

// The bytes of the files under `dir` (links not followed); 0 when unreadable.
std::uintmax_t tree_bytes(const fs::path& dir) {
  std::uintmax_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) total += it->file_size(ec);
  return total;
}

// `vm status --json`: what the table says, as data; no accelerator probe
// (it may boot a VM), only whether /dev/kvm is usable.
// A kernel's snapshots: the file's name and its size.
nlohmann::json snapshots_json(const vm::PreparedKernel& k) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : vm::list_snapshots({k}))
    out.push_back({{"file", s.path.filename().string()}, {"bytes", s.bytes}});
  return out;
}

nlohmann::json vm_status_json(const std::vector<vm::PreparedKernel>& prepared) {
  const fs::path cache = vm::cache_dir();
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : prepared) {
    const fs::path relative = k.dir.lexically_relative(cache);
    const bool inside = !relative.empty() && *relative.begin() != "..";
    auto siw = vm::load_siw_status(k.dir);
    kernels.push_back({{"label", k.label},
                       {"state", "ready"},
                       {"release", k.release},
                       {"package_version", k.package_version},
                       {"path", inside ? relative.string() : k.dir.string()},
                       {"bytes", tree_bytes(k.dir)},
                       {"rxe_in_netns", k.rxe_in_netns},
                       {"siw", siw ? nlohmann::json(siw->available) : nlohmann::json()},
                       {"snapshots", snapshots_json(k)}});
  }
  for (const auto& s : vm::kernel_sources()) {
    const bool ready =
        std::any_of(prepared.begin(), prepared.end(), [&](const vm::PreparedKernel& p) { return p.label == s.label; });
    if (!ready)
      kernels.push_back({{"label", s.label}, {"state", "missing"}, {"setup", "rxerun vm setup --kernel " + s.label}});
  }
  return {{"cache", cache.string()},
          {"kernels", kernels},
          {"debian_suites", vm::debian_suites()},
          {"kvm_usable", vm::kvm_usable()}};
}

}  // namespace

int cmd_vm_remove_snapshots() {
  const auto prepared = vm::prepared_kernels(vm::search_dirs());
  std::uint64_t bytes = 0;
  for (const auto& s : vm::list_snapshots(prepared)) bytes += s.bytes;
  auto removed = vm::remove_snapshots(prepared);
  if (!removed) {
    print(stderr, "rxerun: {}\n", error_text(removed.error()));
    return kExitEnvironment;
  }
  print(stdout, "removed {} snapshot{} of the lab VM ({})\n", *removed, *removed == 1 ? "" : "s", vm::megabytes(bytes));
  return kExitOk;
}

int cmd_vm_status(bool json) {
  const auto prepared = vm::prepared_kernels(vm::search_dirs());
  if (json) {
    print(stdout, "{}\n", vm_status_json(prepared).dump(2));
    return kExitOk;
  }
  print(stdout, "{:<6} {:<8} {:<24} {}\n", "KERNEL", "STATE", "RELEASE", "WHERE");
  for (const auto& k : prepared) print(stdout, "{:<6} {:<8} {:<24} {}\n", k.label, "ready", k.release, k.dir.string());
  for (const auto& s : vm::kernel_sources()) {
    bool ready = false;
    for (const auto& p : prepared) ready = ready || p.label == s.label;
    if (!ready)
      print(stdout, "{:<6} {:<8} {:<24} {}\n", s.label, "missing", "-", "rxerun vm setup --kernel " + s.label);
  }
  print(stdout, "any other Debian kernel: rxerun vm setup --kernel VERSION (6.12, 7.2, ...; looked up in {})\n",
        join(vm::debian_suites(), ", "));
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
  const auto snapshots = vm::list_snapshots(prepared);
  std::uint64_t bytes = 0;
  for (const auto& s : snapshots) bytes += s.bytes;
  print(
      stdout, "snapshots (the lab VM starts from them instead of booting; one per kernel and machine): {}\n",
      snapshots.empty() ? "none yet (the first start of each kernel makes its own)" : vm::megabytes(bytes) + " in all");
  std::size_t width = 0;
  for (const auto& s : snapshots) width = std::max(width, s.path.filename().string().size());
  for (const auto& s : snapshots)
    print(stdout, "  {:<6} {:<{}} {:>7}\n", s.kernel, s.path.filename().string(), width, vm::megabytes(s.bytes));
  return kExitOk;
}

}  // namespace rxerun
