#include "app/plan.h"

#include <fmt/format.h>

#include "base/output.h"

namespace rxerun {

void PlanReporter::run_started(const Scenario& s) {
  file_ = s.file;
  print(out_, "plan for {} ({}), {} step{}; nothing is changed\n", s.name, s.file, s.steps.size(),
        s.steps.size() == 1 ? "" : "s");
  if (!where_.empty()) print(out_, "where: {}\n", where_);
  for (const auto& step : s.steps) step_lines_.push_back(step.mark.line);
  if (!step_lines_.empty()) print_problems(0, step_lines_.front());  // the top-level keys'
}

// The lab check's problems on the lines [first_line, end_line).
void PlanReporter::print_problems(int first_line, int end_line) {
  for (const auto& d : problems_)
    if ((d.file == file_ && d.mark.line >= first_line && d.mark.line < end_line) ||
        (d.file != file_ && first_line == 0)) {  // another file's (an included one): at the top
      print(out_, "       error: {}\n", d.to_string());
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
  print(out_, "{:>3}. {} ({}{})\n", r.index + 1, r.name, r.kind, where);
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
  const auto i = static_cast<std::size_t>(r.index);
  if (i < step_lines_.size()) print_problems(step_lines_[i], i + 1 < step_lines_.size() ? step_lines_[i + 1] : 1 << 30);
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
