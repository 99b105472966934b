#pragma once
// What the runs of a plan came to, as they finish (from several threads
// when lab VMs run side by side), and whether the runs not yet started are
// to stop: --fail-fast after a run that did not pass, or Ctrl-C. The
// summary and the reports are made from it.

#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/report.h"

namespace rxerun {

class RunLedger {
 public:
  RunLedger(std::size_t runs, bool fail_fast) : results_(runs), fail_fast_(fail_fast) {}

  // The report of the run at `index` (of the plan's runs). Each run is
  // settled once; distinct runs may be settled at once.
  void settle(std::size_t index, RunReport report);
  // Ctrl-C: the runs not yet started stop, as not run: interrupted.
  void interrupt() { interrupted_ = stop_ = true; }
  // The runs not yet started stop (a lab VM was interrupted).
  void stop() { stop_ = true; }
  bool stopping() const { return stop_; }

  // The report of a run that does not start because the runs stopped.
  RunReport stopped_run(const Scenario& scenario, const std::string& kernel) const;

  // Every run settled so far, in the plan's order, and the worst exit code
  // of those that ran.
  SuiteReport report(bool suite) const;

 private:
  std::vector<std::optional<RunReport>> results_;
  bool fail_fast_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> interrupted_{false};
};

// A report for a run that did not happen: not run (`error` false), or an
// error of its own (no lab kernel can run it).
RunReport not_run_report(const Scenario& scenario, const std::string& kernel, std::string why, bool error);

}  // namespace rxerun
