#pragma once
// `rxerun plan`: the scenario run against sys/recording/system.h, printed as the
// ordered actions with the shell command a person would type for each.

#include <cstdio>

#include "engine/report.h"
#include "sys/recording/system.h"

namespace rxerun {

class PlanReporter final : public Reporter {
 public:
  PlanReporter(std::FILE* out, sys::ActionLog& log) : out_(out), log_(log) {}
  void run_started(const Scenario& s) override;
  void step_started(const StepSpec& s) override;
  void step_finished(const StepReport& r) override;
  void cleanup_started(std::string_view phase, std::size_t pending) override;
  void undo_finished(const UndoReport& r) override;
  void run_finished(const RunReport& r) override;

 private:
  void print_actions(const char* indent);
  std::FILE* out_;
  sys::ActionLog& log_;
  int actions_ = 0;
  int unpreviewable_ = 0;
};

}  // namespace rxerun
