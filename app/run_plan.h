#pragma once
// `rxerun run` planned before anything runs: which scenario runs on which
// kernel, in which lane (this process, a child rxerun, a lab VM's boot, a
// two-node lab), in which order and under which number; and every refusal
// of options that do not go together. Pure: the scenarios, the prepared lab
// kernels and what the host can do are given; nothing is read, probed or
// printed. app/run.cpp carries the plan out.

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "app/placement.h"
#include "app/run_options.h"
#include "app/suite.h"
#include "engine/exit_code.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "vm/kernel/kernels.h"

namespace rxerun {

// Why a run does not start: the line printed after "rxerun: ", and the exit
// code (2 for options that do not go together, 3 when the machine lacks
// what they ask for).
struct Refusal {
  std::string message;
  int exit_code = kExitUsage;
};

// --report's targets; the first malformed one refused. Checked first of all.
std::variant<std::vector<ReportTarget>, Refusal> read_report_targets(const std::vector<std::string>& specs);

// What the options ask for of kernels and parts, checked before any
// scenario is read, so that bad options touch nothing.
struct RunRequest {
  KernelChoice kernels;
  std::optional<Shard> shard;
  bool own_kernel = false;  // --kernel PATH (--modules DIR): a kernel of one's own, installed before planning
};
std::variant<RunRequest, Refusal> read_run_request(const RunCommandOptions& options);

// Where a run happens.
enum class Lane {
  Host,     // in this process: one scenario, not a suite
  Child,    // a suite's run on this machine's kernel, in a child rxerun (app/run_host.h)
  Nodes,    // a two-node lab: a lab VM per node, driven from here (app/nodes.h)
  Nowhere,  // neither the host nor a prepared lab kernel can run it: an error of its own
  LabVm,    // in a lab VM's boot, with the other runs on that kernel (app/cli_vm.h)
};

struct PlannedRun {
  std::size_t scenario = 0;  // into the scenarios planned
  Lane lane = Lane::Host;
  std::optional<vm::PreparedKernel> kernel;  // LabVm
  std::string kernel_label;                  // as its report names its kernel; "" for this machine's own
  std::string label;                         // NAME or NAME@KERNEL: its line in a suite
  std::string unavailable;                   // Nowhere: why
  std::string placement;                     // LabVm by default: the line that says why it is not the host
  std::size_t position = 0;                  // its number in the suite, [position/total]
};

// The runs on one lab kernel: one boot.
struct LabVmGroup {
  vm::PreparedKernel kernel;
  std::vector<std::size_t> runs;   // into RunPlan::runs, in order
  std::size_t first_position = 0;  // its first run's number; the guest numbers the rest
  std::string output_dir;          // where its steps' files come back to (a matrix: one directory per kernel)
};

struct RunPlan {
  std::vector<ReportTarget> reports;  // --report's targets, rewritten as runs finish
  bool suite = false;  // numbered runs and a summary table (several runs, a directory, --shard, the guest's part)
  std::vector<PlannedRun> runs;        // in the order of the arguments, which the summary keeps; --shard's part only
  std::vector<std::size_t> host_runs;  // run first, one at a time, in order: Host, Child, Nodes, Nowhere
  std::vector<LabVmGroup> groups;      // then one boot per kernel, in the order the kernels first appear
  std::size_t total = 0;               // N of [i/N]: the whole suite's (the host's count in the lab VM's guest)
};

// What planning is given besides the options.
struct PlanInputs {
  const std::vector<Scenario>& scenarios;           // loaded, in the order of the arguments
  const std::vector<vm::PreparedKernel>& prepared;  // newest first; a kernel of one's own alone; none with --host
  HostAbilities host;                               // probed unless --vm or --host decides
  bool directory = false;                           // an argument is a directory: a suite, even of one file
};

// Each scenario on each of its kernels (--kernel's list or all, else the
// scenario's vm.kernels, else one), placed (app/placement.h), cut to
// --shard's part, put in lanes and numbered. Refused: --kernel all with no
// lab kernel prepared, --host with a matrix, a scenario with nodes with
// --host, --kernel, --modules or --keep, an unknown kernel label, --keep
// with a lab VM or a suite, and a single run that nothing can run (exit 3,
// its reason); before them, what read_report_targets and read_run_request
// refuse, in that order.
std::variant<RunPlan, Refusal> plan_runs(const RunCommandOptions& options, const PlanInputs& inputs,
                                         const Registry& registry);

}  // namespace rxerun
