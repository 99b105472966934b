#pragma once
// A plan (app/run_plan.h) carried out, lane by lane: first the runs on this
// machine, one at a time, each numbered [i/N] in a suite (in this process,
// in a child rxerun, a two-node lab, or the error of a run nothing can
// run), the reports rewritten after each; then the lab VM groups, one boot
// per kernel, up to -j at once, their output prefixed with their kernel
// when side by side. Every run's report is settled in the ledger; once it
// says stop (--fail-fast, Ctrl-C) the runs not yet started are reported as
// not run.

#include <vector>

#include "app/run_ledger.h"
#include "app/run_options.h"
#include "app/run_plan.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "vm/kernel/kernels.h"

namespace rxerun {

// What carrying out a plan needs besides the plan.
struct PlanContext {
  const RunCommandOptions& options;
  const RunPlan& plan;
  const std::vector<Scenario>& scenarios;           // the plan's runs index them
  const std::vector<vm::PreparedKernel>& prepared;  // for a two-node lab's nodes
  Registry& registry;
};

void run_host_lanes(const PlanContext& context, RunLedger& ledger);
void run_lab_vm_lanes(const PlanContext& context, RunLedger& ledger);

// Writes `suite` to every report target; a report that cannot be written
// makes a passing or failing run an error (the reason on stderr unless
// `quietly`). `quietly` is also the rewrite after each run of a suite, which
// leaves the page (html) to the end. Captures are looked for under
// `output_dir` (--output-dir).
int write_reports(const std::vector<ReportTarget>& targets, const SuiteReport& suite, bool quietly,
                  const std::string& output_dir);

}  // namespace rxerun
