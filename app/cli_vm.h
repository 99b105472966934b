#pragma once
// The lab VM's side of the command line: `rxerun vm setup|status` and a run
// placed in the lab VM (`--vm`, or by default when the host cannot).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "vm/kernel/kernels.h"

namespace rxerun {

// What `run` was asked, as the guest needs it again.
struct VmRunOptions {
  std::string scenario;  // as given
  std::vector<std::string> vars, only, skip;
  std::vector<ReportTarget> reports;
  bool force = false;
  bool verbose = false;
  bool quiet = false;
  bool color = false;
  std::string output_dir;     // where the guest's output files come back to; empty: here
  std::string kernel_health;  // --kernel-health; empty: the scenario's
};

// Runs the scenario in the lab VM with `kernel`; returns rxerun's exit code.
int run_in_lab_vm(const VmRunOptions& options, const Scenario& scenario, const Registry& registry,
                  const vm::PreparedKernel& kernel);

// The time the whole run may take in the lab VM once it has started: the
// scenario's vm.timeout, else every step's timeout (times its attempts) plus
// five minutes for preclean, cleanup and the rest.
std::chrono::seconds lab_run_budget(const Scenario& scenario, const Registry& registry);

// `rxerun vm exec [--kernel K] [--timeout D] -- PROGRAM [ARGS...]`: runs any
// program in the lab VM (the host's root, read-only, with a throwaway layer),
// its output live, and exits with its exit code (128+N for a signal).
struct VmExecOptions {
  std::string kernel;  // empty: the newest prepared
  std::chrono::seconds timeout{600};
  std::vector<std::string> command;  // PROGRAM ARGS...
  bool quiet = false;
};
int cmd_vm_exec(const VmExecOptions& options);

int cmd_vm_setup(const std::vector<std::string>& kernels);
int cmd_vm_status();

}  // namespace rxerun
