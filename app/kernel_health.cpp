#include "app/kernel_health.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string_view>

#include "base/output.h"
#include "engine/exit_code.h"
#include "sys/kernel_health.h"
#include "vm/boot_protocol.h"

namespace rxerun {

namespace {

// Notes each part of the guest's run in the share before it starts.
class GuestRunningNote final : public Reporter {
 public:
  explicit GuestRunningNote(std::string path) : path_(std::move(path)) {}
  void run_started(const Scenario&) override { note("preclean"); }
  void step_started(const StepSpec& s) override { note("step " + s.name); }
  void cleanup_started(std::string_view phase, std::size_t) override { note(std::string(phase)); }

 private:
  void note(const std::string& text) {
    // Written straight through (the share has no cache): it must be on the
    // host before the part starts, since the kernel may die in it.
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return;
    const std::string line = text + "\n";
    [[maybe_unused]] const ssize_t n = ::write(fd, line.data(), line.size());
    ::close(fd);
  }
  std::string path_;
};

}  // namespace

KernelHealthPolicy kernel_health_policy(const std::string& option, const Scenario& scenario) {
  if (auto p = parse_kernel_health_policy(option)) return *p;
  return scenario.kernel_health;
}

std::unique_ptr<Reporter> guest_running_note(const std::string& guest_output) {
  if (guest_output.empty()) return nullptr;
  return std::make_unique<GuestRunningNote>(std::string(vm::kShareMount) + "/" + std::string(vm::kRunningFile));
}

std::optional<RunReport> lab_vm_death_report(const vm::LabRunResult& lab, const Scenario& scenario,
                                             const vm::PreparedKernel& kernel, KernelHealthPolicy policy,
                                             const std::filesystem::path& share) {
  if (policy == KernelHealthPolicy::Off || lab.outcome != vm::LabOutcome::Crashed) return std::nullopt;
  const auto reports = sys::find_kernel_reports_in_console(lab.console_tail);
  if (reports.empty()) return std::nullopt;

  // The part of the run the guest noted last: "preclean", "step NAME", "cleanup".
  std::string phase = "run", step;
  {
    std::ifstream in(share / std::string(vm::kRunningFile));
    std::string line;
    if (in && std::getline(in, line)) {
      if (line.starts_with("step ")) {
        phase = "step";
        step = line.substr(5);
      } else if (line == "preclean" || line == "cleanup") {
        phase = line;
      }
    }
  }

  RunReport r;
  r.file = scenario.file;
  r.scenario = scenario.name;
  r.description = scenario.description;
  r.host = {{"kernel", kernel.release}};
  r.kernel_health.policy = policy;
  r.kernel_health.kernel = kernel.release;
  for (const auto& k : reports)
    r.kernel_health.findings.push_back({.kind = std::string(sys::to_string(k.kind)),
                                        .phase = phase,
                                        .step = step,
                                        .lines = k.lines,
                                        .time = static_cast<double>(k.usec) / 1e6});
  for (const auto& s : scenario.steps) {
    StepReport sr{.index = s.index,
                  .name = s.name,
                  .kind = s.kind,
                  .netns = s.netns.value_or(""),
                  .tags = s.tags,
                  .status = StepStatus::NotRun,
                  .expected = s.expect.outcome};
    sr.message = phase == "step" && s.name == step ? "the lab VM's kernel died while it ran"
                                                   : "not known: the lab VM's kernel died during the run";
    r.steps.push_back(std::move(sr));
  }
  r.preclean.phase = "preclean";
  r.cleanup.phase = "cleanup";
  // The guest is gone, and nothing of the run is left on the host.
  r.exit_code = policy == KernelHealthPolicy::Fail ? kExitFailed : kExitEnvironment;
  return r;
}

std::optional<int> report_lab_vm_death(const vm::LabRunResult& lab, const Scenario& scenario,
                                       const vm::PreparedKernel& kernel, KernelHealthPolicy policy,
                                       const std::filesystem::path& share, const std::vector<ReportTarget>& reports,
                                       const TerminalStyle& style) {
  auto report = lab_vm_death_report(lab, scenario, kernel, policy, share);
  if (!report) return std::nullopt;
  const auto& first = report->kernel_health.findings.front();
  print(stdout, "the lab VM's kernel ({}) died {}; the steps' results died with it\n", kernel.label, first.where());
  TerminalReporter terminal(stdout, style);
  terminal.run_finished(*report);
  int code = report->exit_code;
  for (const auto& t : reports) {
    if (auto w = write_report(t, *report); !w) {
      print(stderr, "rxerun: {}\n", w.error().message);
      if (code == kExitOk || code == kExitFailed) code = kExitEnvironment;
    }
  }
  return code;
}

}  // namespace rxerun
