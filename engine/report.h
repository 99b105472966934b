#pragma once
// What a run produced, and the one interface through which output leaves the
// engine (ninja habit): a streaming Reporter for the terminal, and functions
// that turn the final RunReport into JSON and JUnit files.

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/result.h"
#include "engine/model.h"

namespace rxerun {

enum class StepStatus {
  Passed,       // the expectation held at the first attempt
  Flaky,        // the expectation held, but only after retries
  Failed,       // the expectation did not hold
  Error,        // the step could not run (environment, permission, bad value at run time)
  Skipped,      // left out by --only/--skip
  NotRun,       // not reached: an earlier step failed or the run was interrupted
  Interrupted,  // Ctrl-C/SIGTERM arrived while it ran
};
std::string_view to_string(StepStatus s);

struct StepReport {
  int index = 0;
  std::string name;
  std::string kind;
  std::string netns;  // "" when the step ran in rxerun's own namespace
  std::vector<std::string> tags;
  StepStatus status = StepStatus::NotRun;
  Outcome outcome = Outcome::Ok;   // what the step did (last attempt)
  Outcome expected = Outcome::Ok;  // what the scenario expected
  nlohmann::json facts = nlohmann::json::object();
  std::vector<std::string> failures;  // each unmet expectation, one line each
  std::string message;                // the step's own word on a failure or error
  std::vector<std::string> hints;     // likely causes of a failure; on a step that passed, warnings
  int attempts = 0;
  Duration duration{0};
};

struct UndoReport {
  std::string step;  // the step whose change this undoes
  std::string kind;
  std::string summary;  // "delete veth vA"
  bool ok = true;
  std::string error;  // when !ok: what was left behind and why
  Duration duration{0};
  std::string covered_by;  // not undone on its own: went with this undo ("delete veth pair vA/vB")
  // When !ok: what the journal holds for it ("line 7: {...}"), for undoing
  // it by hand; damaged lines, one a line.
  std::string journal_text;
};

struct CleanupReport {
  std::string phase;         // "preclean" or "cleanup"
  bool kept = false;         // --keep: nothing undone on purpose
  bool interrupted = false;  // stopped by a signal after the undo in progress; the rest stays in the journal
  std::vector<UndoReport> undos;
  bool clean() const;  // every undo succeeded (or kept)
};

// A report of the kernel's own trouble (sys/kernel_health.h) that appeared
// during the run, and when.
struct KernelFinding {
  std::string kind;                // "WARNING", "BUG", "Oops", "KASAN", ..., "kernel panic"
  std::string phase;               // "preclean", "step", "cleanup"; "run" when not known (a lab VM that died)
  std::string step;                // with phase "step": the step it appeared during
  std::vector<std::string> lines;  // the header first, then a bounded excerpt, as dmesg prints them
  double time = 0;                 // the header's time on the kernel's clock, seconds since boot
  std::string where() const;       // "during step 'rping'", "during preclean", "during the run"
};

struct KernelHealth {
  KernelHealthPolicy policy = KernelHealthPolicy::Fail;
  std::string kernel;  // the release the findings are of
  std::vector<KernelFinding> findings;
  bool fails_run() const { return policy == KernelHealthPolicy::Fail && !findings.empty(); }
};

struct RunReport {
  std::string file;
  std::string scenario;
  std::string description;
  std::string started_at;  // ISO 8601, UTC
  Duration duration{0};
  nlohmann::json host = nlohmann::json::object();  // kernel, hostname, rxerun version
  std::vector<StepReport> steps;
  CleanupReport preclean;
  CleanupReport cleanup;
  KernelHealth kernel_health;
  bool interrupted = false;
  int exit_code = 0;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void run_started(const Scenario&) {}
  virtual void step_started(const StepSpec&) {}
  virtual void step_finished(const StepReport&) {}
  virtual void cleanup_started(std::string_view /*phase*/, std::size_t /*pending*/) {}
  virtual void undo_finished(const UndoReport&) {}
  virtual void cleanup_finished(const CleanupReport&) {}
  virtual void run_finished(const RunReport&) {}
  virtual void note(std::string_view /*text*/) {}  // "interrupted: cleaning up"
};

// Fans every call out to several reporters.
class MultiReporter final : public Reporter {
 public:
  void add(Reporter& r) { reporters_.push_back(&r); }
  void run_started(const Scenario& s) override;
  void step_started(const StepSpec& s) override;
  void step_finished(const StepReport& r) override;
  void cleanup_started(std::string_view phase, std::size_t pending) override;
  void undo_finished(const UndoReport& r) override;
  void cleanup_finished(const CleanupReport& r) override;
  void run_finished(const RunReport& r) override;
  void note(std::string_view text) override;

 private:
  std::vector<Reporter*> reporters_;
};

// Passes every call on to `inner`. An exception from it (a reporter's bug,
// output that cannot be formatted) silences that reporter for the rest of the
// run, said once on stderr: output never stands in the way of cleanup.
class GuardedReporter final : public Reporter {
 public:
  explicit GuardedReporter(Reporter& inner) : inner_(inner) {}
  void run_started(const Scenario& s) override;
  void step_started(const StepSpec& s) override;
  void step_finished(const StepReport& r) override;
  void cleanup_started(std::string_view phase, std::size_t pending) override;
  void undo_finished(const UndoReport& r) override;
  void cleanup_finished(const CleanupReport& r) override;
  void run_finished(const RunReport& r) override;
  void note(std::string_view text) override;

 private:
  template <class F>
  void pass(F&& call);
  Reporter& inner_;
  bool silenced_ = false;
};

enum class Verbosity { Quiet, Normal, Verbose };

struct TerminalStyle {
  bool color = false;
  Verbosity verbosity = Verbosity::Normal;
};

// One line per step (status, name, duration, key facts), failures with their
// reasons and hints, the cleanup, a summary line.
class TerminalReporter final : public Reporter {
 public:
  TerminalReporter(std::FILE* out, TerminalStyle style);
  void run_started(const Scenario& s) override;
  void step_started(const StepSpec& s) override;
  void step_finished(const StepReport& r) override;
  void cleanup_started(std::string_view phase, std::size_t pending) override;
  void undo_finished(const UndoReport& r) override;
  void cleanup_finished(const CleanupReport& r) override;
  void run_finished(const RunReport& r) override;
  void note(std::string_view text) override;

 private:
  std::FILE* out_;
  TerminalStyle style_;
};

// The kernel health findings as the terminal shows them after the steps: per
// finding "kernel health: WARNING during step 'rping' (kernel 6.1.0-...):"
// and its lines indented. Empty when there are none.
std::string kernel_health_text(const KernelHealth& health, const TerminalStyle& style);

nlohmann::json to_json(const RunReport& report);
std::string to_junit_xml(const RunReport& report);

// "json:PATH" or "junit:PATH"; nullopt with `error` set when malformed.
struct ReportTarget {
  enum class Format { Json, Junit } format;
  std::string path;
};
std::optional<ReportTarget> parse_report_target(std::string_view spec, std::string* error);
Result<void> write_report(const ReportTarget& target, const RunReport& report);

}  // namespace rxerun
