// The parts of report.h that every reporter shares: status names, the cleanup
// verdict, fan-out, and writing a report file for --report FORMAT:PATH.

#include "engine/report.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "base/files.h"
#include "base/output.h"
#include "engine/exit_code.h"

namespace rxerun {

std::string_view to_string(StepStatus s) {
  switch (s) {
    case StepStatus::Passed: return "passed";
    case StepStatus::Flaky: return "flaky";
    case StepStatus::Failed: return "failed";
    case StepStatus::Error: return "error";
    case StepStatus::Skipped: return "skipped";
    case StepStatus::NotRun: return "not-run";
    case StepStatus::Interrupted: return "interrupted";
  }
  return "unknown";
}

StepReport step_report_for(const StepSpec& step) {
  StepReport r{.index = step.index,
               .name = step.name,
               .kind = step.kind,
               .netns = step.netns.value_or(""),
               .node = step.node.value_or(""),
               .tags = step.tags,
               .status = StepStatus::NotRun,
               .expected = step.expect.outcome,
               .params = step.params.is_null() ? nlohmann::json::object() : step.params};
  for (const auto& fe : step.expect.facts) r.expectations.push_back({.fact = fe.fact, .matcher = fe.matcher.text});
  return r;
}

std::string run_label(const RunReport& report) {
  return report.lab_kernel.empty() ? report.scenario : report.scenario + "@" + report.lab_kernel;
}

std::string_view run_verdict(const RunReport& report) {
  if (report.not_run) return "not-run";
  switch (report.exit_code) {
    case kExitOk: return "passed";
    case kExitFailed: return "failed";
    case kExitResidue: return "residue";
    case kExitInterrupted: return "interrupted";
    default: return "error";
  }
}

bool CleanupReport::clean() const {
  if (kept) return true;  // nothing was undone on purpose; `rxerun cleanup` judges later
  return std::all_of(undos.begin(), undos.end(), [](const UndoReport& u) { return u.ok; });
}

// ---- MultiReporter -------------------------------------------------------

void MultiReporter::run_started(const Scenario& s) {
  for (auto* r : reporters_) r->run_started(s);
}
void MultiReporter::step_started(const StepSpec& s) {
  for (auto* r : reporters_) r->step_started(s);
}
void MultiReporter::step_waiting(const StepSpec& s, Duration timeout) {
  for (auto* r : reporters_) r->step_waiting(s, timeout);
}
void MultiReporter::step_finished(const StepReport& s) {
  for (auto* r : reporters_) r->step_finished(s);
}
void MultiReporter::cleanup_started(std::string_view phase, std::size_t pending) {
  for (auto* r : reporters_) r->cleanup_started(phase, pending);
}
void MultiReporter::undo_finished(const UndoReport& u) {
  for (auto* r : reporters_) r->undo_finished(u);
}
void MultiReporter::cleanup_finished(const CleanupReport& c) {
  for (auto* r : reporters_) r->cleanup_finished(c);
}
void MultiReporter::run_finished(const RunReport& rr) {
  for (auto* r : reporters_) r->run_finished(rr);
}
void MultiReporter::note(std::string_view text) {
  for (auto* r : reporters_) r->note(text);
}

// ---- GuardedReporter -----------------------------------------------------

template <class F>
void GuardedReporter::pass(F&& call) {
  if (silenced_) return;
  try {
    call();
  } catch (const std::exception& e) {
    silenced_ = true;
    print(stderr, "rxerun: output stopped: {}\n", e.what());
  } catch (...) {
    silenced_ = true;
    print(stderr, "rxerun: output stopped\n");
  }
}

void GuardedReporter::run_started(const Scenario& s) {
  pass([&] { inner_.run_started(s); });
}
void GuardedReporter::step_started(const StepSpec& s) {
  pass([&] { inner_.step_started(s); });
}
void GuardedReporter::step_finished(const StepReport& r) {
  pass([&] { inner_.step_finished(r); });
}
void GuardedReporter::cleanup_started(std::string_view phase, std::size_t pending) {
  pass([&] { inner_.cleanup_started(phase, pending); });
}
void GuardedReporter::undo_finished(const UndoReport& r) {
  pass([&] { inner_.undo_finished(r); });
}
void GuardedReporter::cleanup_finished(const CleanupReport& r) {
  pass([&] { inner_.cleanup_finished(r); });
}
void GuardedReporter::run_finished(const RunReport& r) {
  pass([&] { inner_.run_finished(r); });
}
void GuardedReporter::step_waiting(const StepSpec& s, Duration timeout) {
  pass([&] { inner_.step_waiting(s, timeout); });
}
void GuardedReporter::note(std::string_view text) {
  pass([&] { inner_.note(text); });
}

// ---- --report FORMAT:PATH ------------------------------------------------

std::optional<ReportTarget> parse_report_target(std::string_view spec, std::string* error) {
  auto fail = [&](std::string message) -> std::optional<ReportTarget> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) {
    return fail(fmt::format(
        "--report '{}': expected FORMAT:PATH, e.g. json:report.json, junit:report.xml or html:report.html", spec));
  }
  const auto format = spec.substr(0, colon);
  const auto path = spec.substr(colon + 1);
  ReportTarget target{};
  if (format == "json") {
    target.format = ReportTarget::Format::Json;
  } else if (format == "junit") {
    target.format = ReportTarget::Format::Junit;
  } else if (format == "html") {
    target.format = ReportTarget::Format::Html;
  } else {
    return fail(fmt::format("--report '{}': unknown format '{}' (json, junit or html)", spec, format));
  }
  if (path.empty()) return fail(fmt::format("--report '{}': the path is empty", spec));
  target.path = std::string(path);
  return target;
}

Result<void> write_report(const ReportTarget& target, const RunReport& report) {
  SuiteReport one;
  one.runs.push_back(report);
  one.exit_code = report.exit_code;
  return write_report(target, one);
}

Result<void> write_report(const ReportTarget& target, const SuiteReport& suite) {
  std::string text;
  try {  // the barrier: a report that cannot be made is an error of the report, never the run's end
    if (target.format == ReportTarget::Format::Html) {
      return make_error(fmt::format("cannot write report {}: the page is drawn by the app", target.path));
    } else if (target.format == ReportTarget::Format::Json) {
      // Facts come from tools and may hold invalid UTF-8: replace, never throw.
      const nlohmann::json j = suite.suite || suite.runs.size() != 1 ? to_json(suite) : to_json(suite.runs.front());
      text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
      text += '\n';
    } else {
      text = to_junit_xml(suite.runs);
    }
  } catch (const std::exception& e) {
    return make_error(fmt::format("cannot write report {}: {}", target.path, e.what()));
  }
  // A reader (CI) never sees a half-written report, and a link planted at
  // the path is refused, not followed (base/files.h).
  return write_file_atomic(target.path, text, "report");
}

}  // namespace rxerun
