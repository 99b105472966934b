#include "app/kernel_health.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string_view>

#include "base/output.h"
#include "engine/exit_code.h"
#include "sys/kernel_health.h"
#include "vm/boot_protocol.h"

namespace rxerun {

namespace {

// Notes each part of the guest's run in the share before it starts
// ("preclean", "step NAME", "cleanup"), and each step's status when it
// ends ("done NAME STATUS"), one line each.
class GuestRunningNote final : public Reporter {
 public:
  explicit GuestRunningNote(std::string path) : path_(std::move(path)) {}
  void run_started(const Scenario&) override { note("preclean", O_TRUNC); }
  void step_started(const StepSpec& s) override { note("step " + s.name); }
  void step_finished(const StepReport& r) override { note("done " + r.name + " " + std::string(to_string(r.status))); }
  void cleanup_started(std::string_view phase, std::size_t) override { note(std::string(phase)); }

 private:
  void note(const std::string& text, int flags = O_APPEND) {
    // Written straight through (the share has no cache): it must be on the
    // host before the part starts, since the kernel may die in it.
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | flags | O_CLOEXEC | O_NOFOLLOW, 0644);
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

  // The part of the run the guest noted last ("preclean", "step NAME",
  // "cleanup"), and the steps that had ended ("done NAME STATUS").
  std::string phase = "run", step;
  std::map<std::string, StepStatus> ended;
  {
    std::ifstream in(share / std::string(vm::kRunningFile));
    for (std::string line; in && std::getline(in, line);) {
      if (line.starts_with("step ")) {
        phase = "step";
        step = line.substr(5);
      } else if (line == "preclean" || line == "cleanup") {
        phase = line;
        step.clear();
      } else if (line.starts_with("done ") && line.rfind(' ') > 5) {
        const auto space = line.rfind(' ');
        for (auto s : {StepStatus::Passed, StepStatus::Flaky, StepStatus::Failed, StepStatus::Error,
                       StepStatus::Skipped, StepStatus::NotRun, StepStatus::Interrupted})
          if (to_string(s) == std::string_view(line).substr(space + 1)) ended[line.substr(5, space - 5)] = s;
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
    StepReport sr = step_report_for(s);
    if (auto it = ended.find(s.name); it != ended.end()) {
      sr.status = it->second;  // its own line came from the guest; its facts died with it
    } else if (phase == "step" && s.name == step) {
      sr.status = StepStatus::Failed;
      sr.failures = {"the lab VM's kernel died while it ran"};
    } else {
      sr.message = "not reached: the lab VM's kernel died";
    }
    r.steps.push_back(std::move(sr));
  }
  r.preclean.phase = "preclean";
  r.cleanup.phase = "cleanup";
  // The guest is gone, and nothing of the run is left on the host.
  r.exit_code = policy == KernelHealthPolicy::Fail ? kExitFailed : kExitEnvironment;
  return r;
}

}  // namespace rxerun
