#pragma once
// Kernel health where it touches the command line: `--kernel-health`, and
// the lab VM's side of it. The runner itself reads the kernel's log of every
// run (engine/kernel_health.h), in the lab VM too: there the guest runs
// rxerun on its own kernel. What the guest cannot report is its kernel's
// death (a panic): the host finds it on the guest's console and makes it a
// finding of the step the guest noted it was running (vm::kRunningFile).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/report.h"
#include "vm/kernel/kernels.h"
#include "vm/lab_vm.h"

namespace rxerun {

// The policy of a run: `--kernel-health` when given (already checked to be
// fail, warn or off), else the scenario's kernel_health.
KernelHealthPolicy kernel_health_policy(const std::string& option, const Scenario& scenario);

// In the lab VM's guest: a reporter that notes in the share which part of
// the run is about to start (vm::kRunningFile). Null outside the lab VM.
std::unique_ptr<Reporter> guest_running_note(const std::string& guest_output);

// For a lab VM run that ended with the guest gone (vm::LabOutcome::Crashed):
// the run's report when the guest's console shows its kernel's own report of
// the death (a panic, an oops), the findings placed in the part of the run
// the guest noted in `share` (vm::kRunningFile), the steps with the status
// the guest noted (the one it was running failed, later ones not run); exit 1
// under policy fail, 3 under warn (the run has no result). nullopt when the
// console shows no report, or under policy off: then it stays a lab VM error.
std::optional<RunReport> lab_vm_death_report(const vm::LabRunResult& lab, const Scenario& scenario,
                                             const vm::PreparedKernel& kernel, KernelHealthPolicy policy,
                                             const std::filesystem::path& share);

}  // namespace rxerun
