#include "app/plan.h"

#include <fmt/format.h>

#include "base/output.h"

namespace rxerun {

void PlanReporter::run_started(const Scenario& s) {
  print(out_, "plan for {} ({}), {} step{}; nothing is changed\n", s.name, s.file, s.steps.size(),
        s.steps.size() == 1 ? "" : "s");
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
  print(out_, "{:>3}. {} ({}{})\n", r.index + 1, r.name, r.kind, where);
  auto before = actions_;
  print_actions("       ");
  if (actions_ == before)
    print(out_, "       # {}\n", r.status == StepStatus::Skipped ? r.message : "no change to the host");
  std::fflush(out_);
}

void PlanReporter::cleanup_started(std::string_view, std::size_t pending) {
  print(out_, "cleanup, newest first ({} undo{}):\n", pending, pending == 1 ? "" : "s");
}

void PlanReporter::undo_finished(const UndoReport&) {
  print_actions("       ");
}

void PlanReporter::run_finished(const RunReport&) {
  print(out_, "{} action{}, {} of them not previewable\n", actions_, actions_ == 1 ? "" : "s", unpreviewable_);
  std::fflush(out_);
}

}  // namespace rxerun
