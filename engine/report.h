#pragma once
// What a run produced, and the one interface through which output leaves the
// engine (ninja habit): a streaming Reporter for the terminal, and functions
// that turn the final RunReport into JSON and JUnit files.

#include <cstdio>
#include <memory>
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

// One fact expectation of a step, as the last attempt met it: the fact's
// value next to the matcher. `verdict` is "ok" or "fail", or "unchecked" when
// the step did not get as far as its facts (an error, not run).
struct ExpectationReport {
  std::string fact;
  std::string matcher;    // as written: "> 0", "~ ^rxe", "4096"
  bool reported = false;  // the step reported the fact (its value may be null all the same)
  nlohmann::json value;   // as reported
  std::string verdict = "unchecked";
  std::string why;  // with "fail": "12 is not > 20", "not reported"
};

// The JSON report's report_version. 2 added each step's start, parameters
// and expectations, and the run's picture of the lab; version 1 reports are
// still read.
inline constexpr int kReportVersion = 2;

struct StepReport {
  int index = 0;
  std::string name;
  std::string kind;
  std::string netns;  // "" when the step ran in rxerun's own namespace
  std::string node;   // the node (lab VM) it ran on; "" in a scenario without nodes
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
  // When it started, from the run's start (the timeline of the report page);
  // unset in a report written before rxerun recorded it.
  std::optional<Duration> started;
  // When it ran on the kernel's clock (dmesg's, seconds since boot), so that
  // the kernel's messages can be placed at the step they belong to; unset
  // without kernel health (--kernel-health off) or before it ran.
  std::optional<std::pair<double, double>> kernel_time;
  nlohmann::json params = nlohmann::json::object();  // as it ran: {{steps.X.Y}} expanded
  std::vector<ExpectationReport> expectations;       // in the order of `expect:`
};

// A step's report before it runs (not run yet): what the scenario says of it.
StepReport step_report_for(const StepSpec& step);

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
  std::string node;                // in a two-node lab: the node whose kernel reported it; "" on one machine
  // "during step 'rping'", "during preclean", "during the run"; with a node:
  // "on node a during step 'rping'"
  std::string where() const;
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
  // Set on the host for a run in the lab VM: the kernel's label ("7.3") and
  // what the VM did (release, accelerator, boot time, the guest's RDMA
  // kernel messages). Reports name such a run NAME@KERNEL.
  std::string lab_kernel;
  nlohmann::json vm;  // null on the host
  // Why the run did not happen or did not end by itself (the lab VM did not
  // boot, --fail-fast stopped the suite before it); empty when it ran.
  std::string error;
  bool not_run = false;  // left out (--fail-fast); `error` says why
  // The lab as its scenario describes it (engine/picture.h, as JSON): the
  // report page draws it. Null when not known (a run that never started).
  nlohmann::json picture;
  // Set on a run read back from a report file: the report_version it was
  // written with (the page says when it lacks what a newer one carries).
  int report_version = kReportVersion;
};

// "veth-pair@7.3" for a run in the lab VM, "veth-pair" on the host.
std::string run_label(const RunReport& report);
// One word for a run's verdict: passed, failed, error, residue, interrupted,
// not-run (the summary table's RESULT column, the JSON suite's counts).
std::string_view run_verdict(const RunReport& report);

// What one command ran: a single scenario, or a suite (several scenarios,
// several kernels). `suite` decides the JSON report's shape: a suite's holds
// every run under "runs".
struct SuiteReport {
  std::vector<RunReport> runs;
  bool suite = false;
  int exit_code = 0;  // the worst of the runs' (engine/exit_code.h)
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void run_started(const Scenario&) {}
  virtual void step_started(const StepSpec&) {}
  // Before each attempt: the step now waits up to `timeout` (zero: none).
  virtual void step_waiting(const StepSpec&, Duration /*timeout*/) {}
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
  void step_waiting(const StepSpec& s, Duration timeout) override;
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
  void step_waiting(const StepSpec& s, Duration timeout) override;
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
  bool progress = false;  // a live status line for a step that takes over a second (a terminal only)
};

class ProgressLine;

// One line per step (status, name, duration, key facts), failures with their
// reasons and hints, the cleanup, a summary line.
class TerminalReporter final : public Reporter {
 public:
  TerminalReporter(std::FILE* out, TerminalStyle style);
  ~TerminalReporter() override;
  void run_started(const Scenario& s) override;
  void step_started(const StepSpec& s) override;
  void step_waiting(const StepSpec& s, Duration timeout) override;
  void step_finished(const StepReport& r) override;
  void cleanup_started(std::string_view phase, std::size_t pending) override;
  void undo_finished(const UndoReport& r) override;
  void cleanup_finished(const CleanupReport& r) override;
  void run_finished(const RunReport& r) override;
  void note(std::string_view text) override;

 private:
  std::FILE* out_;
  TerminalStyle style_;
  std::unique_ptr<ProgressLine> progress_;  // with style_.progress
};

// The kernel health findings as the terminal shows them after the steps: per
// finding "kernel health: WARNING during step 'rping' (kernel 6.1.0-...):"
// and its lines indented. Empty when there are none.
std::string kernel_health_text(const KernelHealth& health, const TerminalStyle& style);

nlohmann::json to_json(const RunReport& report);
// A suite's JSON report: {"report_version", "rxerun", "exit_code", "summary", "runs": [RUN...]}.
nlohmann::json to_json(const SuiteReport& suite);
// The run report to_json wrote, read back (the host reads the lab VM's this
// way); an error names the first key that is missing or of the wrong type.
Result<RunReport> run_report_from_json(const nlohmann::json& j);
// One step's entry of the run report, and back (a two-node lab's agents
// send their steps' reports to the host this way).
nlohmann::json to_json(const StepReport& step);
Result<StepReport> step_report_from_json(const nlohmann::json& j);
// The runs of a JSON report of either shape (one run, or a suite's "runs").
Result<std::vector<RunReport>> run_reports_from_json(const nlohmann::json& j);

std::string to_junit_xml(const RunReport& report);
// One <testsuite> per run, named as run_label() names it.
std::string to_junit_xml(const std::vector<RunReport>& runs);

// "json:PATH", "junit:PATH" or "html:PATH"; nullopt with `error` set when
// malformed. The engine writes JSON and JUnit; the page (html) is drawn by
// the app (app/report_page.h), which hands write_report the others.
struct ReportTarget {
  enum class Format { Json, Junit, Html } format;
  std::string path;
};
std::optional<ReportTarget> parse_report_target(std::string_view spec, std::string* error);
Result<void> write_report(const ReportTarget& target, const RunReport& report);
Result<void> write_report(const ReportTarget& target, const SuiteReport& suite);

}  // namespace rxerun
