#include "app/run_ledger.h"

#include "engine/exit_code.h"

namespace rxerun {

void RunLedger::settle(std::size_t index, RunReport report) {
  const bool bad = report.exit_code != kExitOk && !report.not_run;
  if (report.exit_code == kExitInterrupted) interrupted_ = true;
  if (report.exit_code == kExitInterrupted || (fail_fast_ && bad)) stop_ = true;
  results_[index] = std::move(report);
}

RunReport RunLedger::stopped_run(const Scenario& scenario, const std::string& kernel) const {
  return not_run_report(scenario, kernel,
                        interrupted_ ? "not run: interrupted" : "not run: --fail-fast stopped the suite", false);
}

SuiteReport RunLedger::report(bool suite) const {
  SuiteReport report;
  report.suite = suite;
  report.exit_code = kExitOk;
  for (const auto& r : results_) {
    if (!r) continue;
    report.runs.push_back(*r);
    if (!r->not_run) report.exit_code = worse_exit_code(report.exit_code, r->exit_code);
  }
  return report;
}

RunReport not_run_report(const Scenario& scenario, const std::string& kernel, std::string why, bool error) {
  RunReport r;
  r.file = scenario.file;
  r.scenario = scenario.name;
  r.description = scenario.description;
  r.lab_kernel = kernel;
  r.error = std::move(why);
  r.not_run = !error;
  r.exit_code = error ? kExitEnvironment : kExitOk;
  return r;
}

}  // namespace rxerun
