#pragma once
// `rxerun plan`: the scenario run against the model of sys/ in an open world
// (sys/model/system.h), its action log printed as the ordered actions with
// the shell command a person would type for each.

#include <cstdio>

#include "engine/report.h"
#include "sys/model/kernel.h"

namespace rxerun {

class PlanReporter final : public Reporter {
 public:
  PlanReporter(std::FILE* out, sys::ModelKernel& log) : out_(out), log_(log) {}
  void run_started(const Scenario& s) override;
  void step_started(const StepSpec& s) override;
  void step_finished(const StepReport& r) override;
  void cleanup_started(std::string_view phase, std::size_t pending) override;
  void undo_finished(const UndoReport& r) override;
  void run_finished(const RunReport& r) override;

 private:
  void print_actions(const char* indent);
  std::FILE* out_;
  sys::ModelKernel& log_;
  int actions_ = 0;
  int unpreviewable_ = 0;
};

}  // namespace rxerun
