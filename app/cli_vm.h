#pragma once
// The lab VM's side of the command line: `rxerun vm setup|status` and a run
// placed in the lab VM (`--vm`, or by default when the host cannot).

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/run_options.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "vm/kernel/kernels.h"
#include "vm/lab_vm.h"

namespace rxerun {

// What one lab VM's guest runs, and how this part of a suite shows its
// output.
struct VmRunOptions {
  // The guest's `rxerun run` (app/run_options.h, lab_vm_run_options): its
  // scenarios as the user named them, in order; run_in_lab_vm adds what
  // only the boot knows (--host, the kernel, the share's report and output).
  RunCommandOptions run;
  std::string output_dir;  // where the guest's output files come back to; empty: here
  // Where the guest's output and the boot line go (stdout when empty), and
  // what precedes rxerun's own notes on stderr ("[7.3] " when VMs run side
  // by side).
  std::function<void(std::string_view)> output;
  std::string prefix;
  bool spinner = true;     // a boot spinner on a terminal (never with lab VMs side by side)
  int interrupt_fd = -1;   // readable on Ctrl-C (the caller binds the signals)
  bool cold_boot = false;  // --cold-boot: boot the kernel, no snapshot
};

// What one lab VM ran: a report for every scenario it was given (those it
// could not run carry `error`, or `not_run`), each with the VM's facts.
struct VmGroupResult {
  std::vector<RunReport> runs;
  int exit_code = 0;
};

// Runs `scenarios` (loaded from options.run.scenarios) in one boot of the
// lab VM with `kernel`.
VmGroupResult run_in_lab_vm(const VmRunOptions& options, const std::vector<const Scenario*>& scenarios,
                            const Registry& registry, const vm::PreparedKernel& kernel);

// The time the whole run may take in the lab VM once it has started: the
// scenario's vm.timeout, else every step's timeout (times its attempts) plus
// five minutes for preclean, cleanup and the rest.
std::chrono::seconds lab_run_budget(const Scenario& scenario, const Registry& registry);

// Pieces a two-node lab (app/nodes.cpp) shares with a run in one lab VM:
// what a report says of the lab VM, the path of this binary (which the guest
// runs too; nullopt, with the reason printed, when it cannot be found), why
// a lab VM did not finish (with its console's last lines), and the files the
// guest's steps wrote, brought back from its share.
nlohmann::json vm_facts(const vm::PreparedKernel& kernel, const vm::LabRunResult& lab);
// The line that says the lab VM is up: "lab VM: kernel 7.3 (RELEASE, tcg),
// up in 0.4 s from its snapshot".
std::string up_line(const vm::PreparedKernel& kernel, const std::string& accel, double seconds, bool restored);
std::optional<std::string> own_binary();
std::string crash_message(const vm::LabRunResult& lab, const std::string& which);
Result<void> bring_back_outputs(const std::filesystem::path& from, const std::filesystem::path& to);

// `rxerun vm exec [--kernel K] [--timeout D] -- PROGRAM [ARGS...]`: runs any
// program in the lab VM (the host's root, read-only, with a throwaway layer),
// its output live, and exits with its exit code (128+N for a signal).
struct VmExecOptions {
  std::string kernel;  // empty: the newest prepared
  std::chrono::seconds timeout{600};
  std::vector<std::string> command;  // PROGRAM ARGS...
  bool quiet = false;
  bool cold_boot = false;  // boot the kernel instead of starting from its snapshot
};
int cmd_vm_exec(const VmExecOptions& options);

// `--kernel PATH [--modules DIR]`: a kernel of one's own for the lab VM. Its
// configuration is checked against what the lab VM and the scenario's steps
// need (every missing option named), then it is installed into the cache
// (reused while its files do not change). The kernel, or rxerun's exit code
// with the reason printed: 2 when PATH or DIR is no kernel, 3 when options
// are missing or the installation failed.
std::variant<vm::PreparedKernel, int> own_lab_kernel(const Scenario& scenario, const Registry& registry,
                                                     const std::string& path, const std::string& modules, bool quiet);

// The lab kernels rxerun ships labs for, which `vm setup` prepares by
// default (from vm::kernel_sources()): their labels, and them as help
// texts say them ("6.1, 7.3").
std::vector<std::string> known_kernels();
std::string known_kernel_labels();

int cmd_vm_setup(const std::vector<std::string>& kernels);
// `vm setup --remove-snapshots`: the snapshots of every prepared kernel
// (vm/snapshot.h) removed, and how much that freed said.
int cmd_vm_remove_snapshots();
// The prepared kernels and the known ones missing; with `json`, one JSON
// document (docs/running.md, "vm status --json").
int cmd_vm_status(bool json);

}  // namespace rxerun
