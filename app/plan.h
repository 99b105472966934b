#pragma once
// `rxerun plan`: the scenario run against the model of sys/ in an open world
// (sys/model/system.h), its action log printed as the ordered actions with
// the shell command a person would type for each.

#include <cstdio>
#include <string>
#include <vector>

#include "engine/diag.h"

#include "engine/report.h"
#include "sys/model/kernel.h"

namespace rxerun {

// The step each diagnostic is about, by place: the last step of its file
// that starts on or before its line; -1 for none (a top-level key above the
// steps, a --var-file).
std::vector<int> diagnostic_steps(const Scenario& s, const Diagnostics& diagnostics);

class PlanReporter final : public Reporter {
 public:
  // `where`: the first line's word on where the lab would run; `problems`:
  // what the loader or the lab check found, each shown under the step it
  // is about (diagnostic_steps).
  PlanReporter(std::FILE* out, sys::ModelKernel& log, std::string where = "", Diagnostics problems = {})
      : out_(out), log_(log), where_(std::move(where)), problems_(std::move(problems)) {}
  // The problems shown.
  int problems() const { return shown_problems_; }
  void run_started(const Scenario& s) override;
  void step_started(const StepSpec& s) override;
  void step_finished(const StepReport& r) override;
  void cleanup_started(std::string_view phase, std::size_t pending) override;
  void undo_finished(const UndoReport& r) override;
  void run_finished(const RunReport& r) override;

 private:
  void print_actions(const char* indent);
  void print_problems(int step);
  std::FILE* out_;
  sys::ModelKernel& log_;
  std::string where_;
  Diagnostics problems_;
  std::vector<int> problem_steps_;  // diagnostic_steps of problems_
  int shown_problems_ = 0;
  int actions_ = 0;
  int unpreviewable_ = 0;
};

}  // namespace rxerun
