#pragma once
// The runner: preclean, the steps in order, cleanup. It owns what steps must
// not: timeouts, retries and delays, expectations, tags, `revert`, the
// journal of changes, Ctrl-C, and the exit code.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/journal.h"
#include "engine/kernel_health.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "engine/running_tools.h"
#include "sys/system.h"

namespace rxerun {

struct RunOptions {
  bool keep = false;                 // leave the lab up; `rxerun cleanup` removes it later
  std::vector<std::string> only;     // run tagged steps only when they carry one of these (untagged steps always run)
  std::vector<std::string> skip;     // never run steps carrying one of these
  Duration default_timeout{30'000};  // for kinds that declare none
  bool planning = false;             // `plan`: go on past failures; leave out steps that need run-time facts
  std::vector<int> written_wrong;    // `plan` of a scenario the loader refused: these steps are shown, not run
  bool force = false;                // --force: steps may replace existing interfaces without rxerun's mark
  std::string output_dir;            // where relative output files go; empty: the current directory
  bool outputs_return = false;       // in the lab VM: output_dir is the share; absolute paths would be lost
  // --kernel-health: wins over the scenario's kernel_health (unset: the scenario's).
  std::optional<KernelHealthPolicy> kernel_health;
};

class Runner {
 public:
  Runner(const Registry& registry, sys::System& sys, Journal& journal, Reporter& reporter, RunOptions options = {});

  // Preclean, steps, cleanup; the report carries the exit code.
  RunReport run(const Scenario& scenario);

  // run() in its parts, for a run driven step by step from outside: a node
  // of a two-node lab, whose steps the host's rxerun hands out one at a time
  // with the facts of steps that ran on other nodes. start() begins the run
  // (preclean), step() runs one step, record() adds its report, finish()
  // cleans up, reads the kernel's health and sets the exit code.
  RunReport start(const Scenario& scenario);
  StepReport step(const Scenario& scenario, const StepSpec& step,
                  const std::map<std::string, nlohmann::json>& facts_elsewhere);
  void record(RunReport& report, StepReport step_report);
  void finish(const Scenario& scenario, RunReport& report);
  // The report of a step that is not reached (after Ctrl-C, or after a
  // step that did not pass), and whether a step's status stops the run.
  static StepReport not_reached(const StepSpec& step, bool interrupted);
  static bool stops_run(StepStatus status);

  // Undoes every change pending in the journal, newest first (the cleanup
  // command, and a run's preclean and cleanup), through a Cleanup
  // (engine/cleanup.h), which says how. With `marked`, then removes the
  // leftovers of a crashed run that carry that scenario's mark.
  CleanupReport cleanup(const std::string& scenario_name, std::string_view phase, const Scenario* marked = nullptr);

 private:
  class Context;
  friend class Context;

  StepReport run_step(const Scenario& scenario, const StepSpec& step);
  StepReport attempt_loop(const Scenario& scenario, const StepSpec& step, const Kind& kind);
  // Why `plan` leaves the step out (a plugin's kind, parameters that read
  // facts known only at run time), or nullopt.
  std::optional<std::string> not_previewed(const StepSpec& step, const Kind& kind) const;
  // Puts earlier steps' facts into `params` and checks them again; the first
  // problem, if any.
  std::optional<Diagnostic> expand_facts(const Scenario& scenario, const StepSpec& step, const Kind& kind,
                                         nlohmann::json& params) const;
  // One attempt: the kind's run, in the step's namespace, against its deadline.
  StepResult run_attempt(const Scenario& scenario, const StepSpec& step, const Kind& kind,
                         const nlohmann::json& params);
  std::optional<std::string> skip_reason(const Scenario& scenario, const StepSpec& step) const;
  // Undoes the changes of an earlier step now, newest first; the facts its
  // undos observed (a fault's final counters).
  Result<nlohmann::json> revert(const std::string& step_name);
  Duration timeout_for(const StepSpec& step, const Kind& kind) const;  // zero: none
  sys::SteadyTime deadline_for(const StepSpec& step, const Kind& kind);
  // The kernel log's clock while the run watches the kernel (else 0), and
  // the part of the run that began at `start` on it, noted when it ends.
  std::uint64_t kernel_now();
  void kernel_window(std::string phase, std::string step, std::uint64_t start);

  const Registry& registry_;
  sys::System& sys_;
  Journal& journal_;
  GuardedReporter reporter_;
  RunOptions options_;
  std::string scenario_name_;
  std::map<std::string, nlohmann::json> facts_;  // by step name, for {{steps.NAME.FACT}}
  std::map<std::string, StepStatus> statuses_;   // by step name
  // Programs steps left running (exec background), by step name.
  RunningTools running_;
  // Kernel health: whether this run reads the kernel's log, and when each part of it ran.
  bool watch_kernel_ = false;
  std::uint64_t kernel_since_ = 0;
  sys::SteadyTime run_start_{};
  std::vector<KernelWindow> kernel_windows_;
};

// The exit code (engine/exit_code.h) from what the run did.
int exit_code_for(const RunReport& report);

}  // namespace rxerun
