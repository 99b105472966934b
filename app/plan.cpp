#include "app/plan.h"

#include <fmt/format.h>

#include "base/output.h"

namespace rxerun {

std::vector<int> diagnostic_steps(const Scenario& s, const Diagnostics& diagnostics) {
  std::vector<int> steps;
  for (const auto& d : diagnostics) {
    int owner = -1;
    for (const auto& step : s.steps)
      if ((step.file.empty() ? s.file : step.file) == d.file && step.mark.line <= d.mark.line &&
          (owner < 0 || step.mark.line >= s.steps[static_cast<std::size_t>(owner)].mark.line))
        owner = step.index;
    steps.push_back(owner);
  }
  return steps;
}

void PlanReporter::run_started(const Scenario& s) {
  print(out_, "plan for {} ({}), {} step{}; nothing is changed\n", s.name, s.file, s.steps.size(),
        s.steps.size() == 1 ? "" : "s");
  if (!where_.empty()) print(out_, "where: {}\n", where_);
  problem_steps_ = diagnostic_steps(s, problems_);
  print_problems(-1);  // the top-level keys', another file's
}

void PlanReporter::print_problems(int step) {
  for (std::size_t i = 0; i < problems_.size(); ++i)
    if (problem_steps_[i] == step) {
      print(out_, "       error: {}\n", problems_[i].to_string());
      ++shown_problems_;
    }
}

void PlanReporter::step_started(const StepSpec&) {
  log_.take();
}

void PlanReporter::print_actions(const char* indent) {
  for (const auto& a : log_.take()) {
    ++actions_;
    if (a.shell.empty()) {
      ++unpreviewable_;
      print(out_, "{}# {}\n", indent, a.what);
    } else {
      print(out_, "{}{:<44} # {}\n", indent, a.shell, a.what);
    }
  }
}

void PlanReporter::step_finished(const StepReport& r) {
  std::string where = r.netns.empty() ? "" : ", in netns " + r.netns;
  if (!r.node.empty()) where += ", on node " + r.node;
  print(out_, "{:>3}. {} ({}{})\n", r.index + 1, r.name, r.kind.empty() ? "no kind" : r.kind, where);
  auto before = actions_;
  print_actions("       ");
  // The model's world is not the run's (no wires' NICs, no facts of steps
  // it could not preview): what it refuses is said, not counted as wrong.
  if (r.status == StepStatus::Error) {
    print(out_, "       # not previewable: {}\n", r.message);
    ++unpreviewable_;
  } else if (actions_ == before) {
    print(out_, "       # {}\n", r.status == StepStatus::Skipped ? r.message : "no change to the host");
  }
  print_problems(r.index);
  std::fflush(out_);
}

void PlanReporter::cleanup_started(std::string_view, std::size_t pending) {
  print(out_, "cleanup, newest first ({} undo{}):\n", pending, pending == 1 ? "" : "s");
}

void PlanReporter::undo_finished(const UndoReport&) {
  print_actions("       ");
}

void PlanReporter::run_finished(const RunReport&) {
  print(out_, "{} action{}, {} of them not previewable", actions_, actions_ == 1 ? "" : "s", unpreviewable_);
  print(out_, "{}\n",
        shown_problems_ ? fmt::format("; {} error{}: the lab would not run as written", shown_problems_,
                                      shown_problems_ == 1 ? "" : "s")
                        : "");
  std::fflush(out_);
}

}  // namespace rxerun
