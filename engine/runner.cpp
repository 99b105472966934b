// Running a scenario: preclean, each step with its retries, timeouts and
// expectations, `revert`, then cleanup (a Cleanup, engine/cleanup.h).

#include "engine/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include "base/strings.h"
#include "base/utf8.h"
#include "engine/barrier.h"
#include "engine/checks.h"
#include "engine/cleanup.h"
#include "engine/exit_code.h"
#include "engine/fact_names.h"
#include "engine/kernel_health.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "engine/vars.h"

namespace rxerun {

namespace {

bool intersects(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](const std::string& x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

// The first string inside `value` that is not UTF-8 text, if any: facts come
// from tools and the kernel, and a step's parameters must be text.
std::optional<std::string> not_utf8(const nlohmann::json& value) {
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (first_invalid_utf8(s)) return s;
  } else if (value.is_array() || value.is_object()) {
    for (const auto& item : value)
      if (auto bad = not_utf8(item)) return bad;
  }
  return std::nullopt;
}

// Each fact expectation as the result meets it; all unchecked when the step
// ended in an error (its facts are not what the expectations are about).
std::vector<ExpectationReport> expectation_reports(const Expectation& expect, const StepResult& result) {
  std::vector<ExpectationReport> out;
  for (const auto& fe : expect.facts) {
    ExpectationReport e{.fact = fe.fact, .matcher = fe.matcher.text};
    if (result.outcome != Outcome::Error) {
      if (auto value = reported_fact(result.facts, fe.fact); !value) {
        e.verdict = "fail";
        e.why = "was not reported (" + value.error().message + ")";
      } else {
        e.reported = true;
        e.value = std::move(*value);
        const auto why = fe.matcher.check(e.value);
        e.verdict = why ? "fail" : "ok";
        e.why = why.value_or("");
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Everything that keeps a step from passing, one line each.
std::vector<std::string> unmet(const Expectation& expect, const StepResult& result,
                               const std::vector<ExpectationReport>& facts) {
  std::vector<std::string> out;
  if (result.outcome != expect.outcome) {
    // The step's own message travels beside this line (StepReport::message).
    out.push_back(fmt::format("expected {}, got {}", to_string(expect.outcome), to_string(result.outcome)));
  }
  for (const auto& e : facts)
    if (e.verdict == "fail") out.push_back(fmt::format("fact {}{}{}", e.fact, e.reported ? ": " : " ", e.why));
  return out;
}

}  // namespace

// What a running step sees of the engine.
class Runner::Context final : public StepContext {
 public:
  Context(Runner& runner, const StepSpec& step, const Kind& kind, sys::SteadyTime deadline)
      : runner_(runner), step_(step), kind_(kind), deadline_(deadline) {}

  sys::System& sys() override { return runner_.sys_; }
  const std::string& scenario() const override { return runner_.scenario_name_; }
  const StepSpec& step() const override { return step_; }
  sys::SteadyTime deadline() const override { return deadline_; }

  Result<void> will_change(nlohmann::json args, std::string summary, Footprint footprint) override {
    JournalEntry e{
        0, step_.name, step_.kind, step_.netns.value_or(""), std::move(summary), std::move(args), std::move(footprint)};
    e.plugin = kind_.plugin;
    auto r = runner_.journal_.append(std::move(e));
    if (!r) return r.error();
    last_change_ = *r;
    return {};
  }

  Result<void> identify(nlohmann::json identity) override {
    if (!last_change_) return make_error("identify() before any will_change() of this step");
    return runner_.journal_.identify(last_change_, std::move(identity));
  }

  Result<nlohmann::json> revert(const std::string& step_name) override { return runner_.revert(step_name); }
  bool force() const override { return runner_.options_.force; }
  Result<OutputPath> output_path(const std::string& file) const override {
    const auto& o = runner_.options_;
    if (!file.empty() && file.front() == '/') {
      if (o.outputs_return)
        return make_error("'" + file +
                          "' is an absolute path: in the lab VM only files under --output-dir come "
                          "back to the host; name it relative to --output-dir");
      return OutputPath{file, file};
    }
    if (file.empty() || file == "." || file.back() == '/') return make_error("'" + file + "' names no file");
    const std::string path = o.output_dir.empty() ? file : o.output_dir + "/" + file;
    return OutputPath{path, o.outputs_return ? file : path};
  }
  void keep_running(std::unique_ptr<sys::RunningTool> tool) override { runner_.running_[step_.name] = std::move(tool); }
  std::unique_ptr<sys::RunningTool> take_running(const std::string& step_name) override {
    return rxerun::take_running(runner_.running_, step_name);
  }
  const nlohmann::json* facts_of(const std::string& step_name) const override {
    auto it = runner_.facts_.find(step_name);
    return it == runner_.facts_.end() ? nullptr : &it->second;
  }

 private:
  Runner& runner_;
  const StepSpec& step_;
  const Kind& kind_;
  sys::SteadyTime deadline_;
  long last_change_ = 0;  // the seq of this step's latest will_change()
};

Runner::Runner(const Registry& registry, sys::System& sys, Journal& journal, Reporter& reporter, RunOptions options)
    : registry_(registry), sys_(sys), journal_(journal), reporter_(reporter), options_(std::move(options)) {}

RunReport Runner::run(const Scenario& scenario) {
  RunReport report = start(scenario);
  bool stop = !report.preclean.clean();
  report.steps.reserve(scenario.steps.size());
  for (const auto& step : scenario.steps) {
    StepReport sr;
    if (stop || sys_.interrupt.requested()) {
      sr = not_reached(step, sys_.interrupt.requested());
    } else {
      sr = run_step(scenario, step);
    }
    if (!options_.planning && stops_run(sr.status)) stop = true;
    record(report, std::move(sr));
  }
  finish(scenario, report);
  return report;
}

RunReport Runner::start(const Scenario& scenario) {
  scenario_name_ = scenario.name;
  facts_.clear();
  statuses_.clear();

  RunReport report;
  report.file = scenario.file;
  report.scenario = scenario.name;
  report.description = scenario.description;
  report.picture = picture_json(picture_of(scenario, registry_));
  run_start_ = sys_.clock.now();
  // The kernel's log of the run's own time window: read after cleanup.
  report.kernel_health.policy =
      options_.planning ? KernelHealthPolicy::Off : options_.kernel_health.value_or(scenario.kernel_health);
  watch_kernel_ = report.kernel_health.policy != KernelHealthPolicy::Off;
  kernel_windows_.clear();
  kernel_since_ = kernel_now();
  reporter_.run_started(scenario);

  report.preclean.phase = "preclean";
  if (!options_.planning) {
    const auto kernel_start = kernel_now();
    report.preclean = cleanup(scenario.name, "preclean", &scenario);
    kernel_window("preclean", "", kernel_start);
  }
  return report;
}

StepReport Runner::step(const Scenario& scenario, const StepSpec& step,
                        const std::map<std::string, nlohmann::json>& facts_elsewhere) {
  for (const auto& [name, facts] : facts_elsewhere) facts_[name] = facts;
  return run_step(scenario, step);
}

StepReport Runner::not_reached(const StepSpec& step, bool interrupted) {
  StepReport sr = step_report_for(step);
  sr.message = interrupted ? "not reached: interrupted" : "not reached: an earlier step did not pass";
  return sr;
}

bool Runner::stops_run(StepStatus status) {
  return status == StepStatus::Failed || status == StepStatus::Error || status == StepStatus::Interrupted;
}

void Runner::record(RunReport& report, StepReport sr) {
  statuses_[sr.name] = sr.status;
  if (sr.status == StepStatus::Interrupted) report.interrupted = true;
  reporter_.step_finished(sr);
  report.steps.push_back(std::move(sr));
}

void Runner::finish(const Scenario& scenario, RunReport& report) {
  if (sys_.interrupt.requested()) report.interrupted = true;

  if (report.interrupted) {
    reporter_.note("interrupted: cleaning up");
    sys_.interrupt.clear();  // cleanup must still be able to wait for things
  }
  if (options_.keep) {
    report.cleanup.phase = "cleanup";
    report.cleanup.kept = true;
    reporter_.cleanup_finished(report.cleanup);
  } else {
    const auto kernel_start = kernel_now();
    report.cleanup = cleanup(scenario.name, "cleanup");
    kernel_window("cleanup", "", kernel_start);
  }
  if (sys_.interrupt.requested() || report.cleanup.interrupted) report.interrupted = true;
  if (watch_kernel_) {
    report.kernel_health.kernel = sys_.kernel_log.release();
    report.kernel_health.findings =
        place_kernel_reports(sys::find_kernel_reports(sys_.kernel_log.records(kernel_since_)), kernel_windows_);
  }
  report.duration = sys::elapsed_since(sys_.clock, run_start_);
  report.exit_code = exit_code_for(report);
  reporter_.run_finished(report);
}

std::optional<std::string> Runner::skip_reason(const Scenario& scenario, const StepSpec& step) const {
  if (std::find(options_.written_wrong.begin(), options_.written_wrong.end(), step.index) !=
      options_.written_wrong.end())
    return "not previewed: written wrong (below)";
  if (intersects(step.tags, options_.skip)) return "skipped by --skip";
  if (!options_.only.empty() && !step.tags.empty() && !intersects(step.tags, options_.only))
    return "skipped: not selected by --only";
  if (step.kind == "revert" && step.params.is_string()) {
    auto it = statuses_.find(step.params.get<std::string>());
    if (it != statuses_.end() && it->second == StepStatus::Skipped) return "skipped: the step it reverts was skipped";
  }
  (void)scenario;
  return std::nullopt;
}

StepReport Runner::run_step(const Scenario& scenario, const StepSpec& step) {
  StepReport sr = step_report_for(step);
  if (auto why = skip_reason(scenario, step)) {
    sr.status = StepStatus::Skipped;
    sr.message = *why;
    return sr;
  }
  const Kind* kind = registry_.find(step.kind);
  if (!kind) {  // the loader rejects unknown kinds; a journal or test may not
    sr.status = StepStatus::Error;
    sr.message = "unknown step kind '" + step.kind + "'";
    return sr;
  }
  reporter_.step_started(step);
  const auto kernel_start = kernel_now();
  try {
    sr = attempt_loop(scenario, step, *kind);
  } catch (const std::exception& e) {  // parameters checked at run time, a kind's validate(): see guarded()
    sr.status = StepStatus::Error;
    sr.outcome = Outcome::Error;
    sr.message = fmt::format("step kind '{}' failed unexpectedly: {}", step.kind, e.what());
    sr.attempts = 1;
  }
  kernel_window("step", step.name, kernel_start);
  if (watch_kernel_) sr.kernel_time = std::pair{kernel_start / 1e6, kernel_now() / 1e6};
  return sr;
}

std::uint64_t Runner::kernel_now() {
  return watch_kernel_ ? sys_.kernel_log.now() : 0;
}

void Runner::kernel_window(std::string phase, std::string step, std::uint64_t start) {
  if (watch_kernel_) kernel_windows_.push_back({std::move(phase), std::move(step), start, sys_.kernel_log.now()});
}

Duration Runner::timeout_for(const StepSpec& step, const Kind& kind) const {
  const Duration timeout = step.timeout.value_or(kind.spec.default_timeout.value_or(options_.default_timeout));
  return timeout <= Duration::zero() ? Duration::zero() : timeout;
}

sys::SteadyTime Runner::deadline_for(const StepSpec& step, const Kind& kind) {
  const Duration timeout = timeout_for(step, kind);
  if (timeout == Duration::zero()) return sys::SteadyTime::max();
  return saturating_deadline(sys_.clock.now(), timeout);
}

StepReport Runner::attempt_loop(const Scenario& scenario, const StepSpec& step, const Kind& kind) {
  StepReport sr = step_report_for(step);
  const auto start = sys_.clock.now();
  sr.started = std::chrono::duration_cast<Duration>(start - run_start_);
  if (auto why = options_.planning ? not_previewed(step, kind) : std::nullopt) {
    sr.status = StepStatus::Skipped;
    sr.message = *why;
    if (sys_.recorder) sys_.recorder->record({sr.message, ""});
    return sr;
  }
  // Parameters that read earlier steps' facts are expanded and checked now.
  nlohmann::json params = step.params;
  if (has_step_references(params)) {
    if (auto problem = expand_facts(scenario, step, kind, params)) {
      sr.status = StepStatus::Error;
      sr.outcome = Outcome::Error;
      sr.message = problem->to_string();
      sr.duration = sys::elapsed_since(sys_.clock, start);
      return sr;
    }
  }

  const int max_attempts = 1 + std::max(0, step.retries);
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    sr.attempts = attempt;
    const StepResult result = run_attempt(scenario, step, kind, params);
    sr.outcome = result.outcome;
    sr.facts = result.facts;
    sr.params = params;
    sr.message = result.message;
    sr.hints = result.hints;
    facts_[step.name] = result.facts;

    if (sys_.interrupt.requested()) {
      sr.status = StepStatus::Interrupted;
      sr.failures = {"interrupted"};
      break;
    }
    sr.expectations = expectation_reports(step.expect, result);
    sr.failures = unmet(step.expect, result, sr.expectations);
    if (sr.failures.empty()) {
      sr.status = attempt == 1 ? StepStatus::Passed : StepStatus::Flaky;
      break;
    }
    if (result.outcome == Outcome::Error) {
      sr.status = StepStatus::Error;
      break;
    }
    sr.status = StepStatus::Failed;
    if (attempt < max_attempts && sys_.clock.wait_until(saturating_deadline(sys_.clock.now(), step.delay),
                                                        sys_.interrupt) == sys::WaitResult::Interrupted) {
      sr.status = StepStatus::Interrupted;
      break;
    }
  }
  sr.duration = sys::elapsed_since(sys_.clock, start);
  return sr;
}

std::optional<std::string> Runner::not_previewed(const StepSpec& step, const Kind& kind) const {
  // A plugin's kind acts by its own means, not through sys: `plan` cannot
  // record what it would do, and must not let it act.
  if (!kind.plugin.empty())
    return "step kind '" + kind.spec.name + "' comes from a plugin, which acts by its own means: not previewed";
  if (has_step_references(step.params))
    return std::string("its parameters use facts of earlier steps, known only at run time: not previewed");
  return std::nullopt;
}

std::optional<Diagnostic> Runner::expand_facts(const Scenario& scenario, const StepSpec& step, const Kind& kind,
                                               nlohmann::json& params) const {
  FactLookup lookup = [this](const std::string& s, const std::string& f) -> Result<nlohmann::json> {
    auto it = facts_.find(s);
    if (it == facts_.end()) return make_error("it did not run");
    return reported_fact(it->second, f);
  };
  std::vector<std::string> earlier;
  for (const auto& s : scenario.steps)
    if (s.index < step.index) earlier.push_back(s.name);
  Diagnostics diags;
  if (auto r = expand_json(params, {}, &lookup); !r) {
    Mark m = step.mark_of("");
    diags.push_back({scenario.file_of(step), m, r.error().message});
  } else if (auto bad = not_utf8(params)) {
    diags.push_back({scenario.file_of(step), step.mark_of(""),
                     fmt::format("a fact of an earlier step put bytes that are not UTF-8 into '{}'", excerpt(*bad))});
  } else {
    diags = check_params(kind.spec, params, step, scenario.file_of(step), earlier);
  }
  if (diags.empty()) return std::nullopt;
  return diags.front();
}

StepResult Runner::run_attempt(const Scenario& scenario, const StepSpec& step, const Kind& kind,
                               const nlohmann::json& params) {
  std::unique_ptr<sys::NetnsScope> scope;
  if (step.netns) {
    auto entered = sys_.netns.enter(*step.netns);
    if (!entered) return StepResult::error(entered.error());
    scope = std::move(entered).value();
  }
  const auto deadline = deadline_for(step, kind);
  reporter_.step_waiting(step, timeout_for(step, kind));
  Context ctx(*this, step, kind, deadline);
  Params p(params, step, scenario.file_of(step));
  StepResult result = guarded("step kind '" + step.kind + "'", [&] { return kind.run(p, ctx); });
  // A step that overran its deadline timed out, whatever it says.
  if (result.outcome != Outcome::Error && deadline != sys::SteadyTime::max() && sys_.clock.now() > deadline)
    result.outcome = Outcome::Timeout;
  return result;
}

CleanupReport Runner::cleanup(const std::string& scenario_name, std::string_view phase, const Scenario* marked) {
  scenario_name_ = scenario_name;
  return Cleanup(registry_, sys_, journal_, reporter_, scenario_name_, &running_).run(phase, marked);
}

Result<nlohmann::json> Runner::revert(const std::string& step_name) {
  Cleanup cleanup(registry_, sys_, journal_, reporter_, scenario_name_, &running_);
  std::vector<JournalEntry> mine;
  for (const auto& e : journal_.pending())
    if (e.step == step_name) mine.push_back(e);
  nlohmann::json facts = nlohmann::json::object();
  for (auto it = mine.rbegin(); it != mine.rend(); ++it) {
    UndoReport ur = cleanup.undo(*it, &facts);
    if (!ur.ok) return make_error("could not undo '" + ur.summary + "': " + ur.error);
  }
  return facts;
}

int exit_code_for(const RunReport& report) {
  auto any = [&](StepStatus s) {
    return std::any_of(report.steps.begin(), report.steps.end(), [&](const StepReport& r) { return r.status == s; });
  };
  if (report.interrupted) return kExitInterrupted;
  if (!report.preclean.clean() || any(StepStatus::Error)) return kExitEnvironment;
  if (!report.cleanup.clean()) return kExitResidue;
  // A report of the kernel's own trouble fails the run as an unmet expectation does.
  if (any(StepStatus::Failed) || report.kernel_health.fails_run()) return kExitFailed;
  return kExitOk;
}

}  // namespace rxerun
