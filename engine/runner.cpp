#include "engine/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/utf8.h"
#include "engine/exit_code.h"
#include "engine/checks.h"
#include "engine/step.h"
#include "engine/vars.h"

namespace rxerun {

namespace {

Duration since(sys::Clock& clock, sys::SteadyTime start) {
  return std::chrono::duration_cast<Duration>(clock.now() - start);
}

bool intersects(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

std::string join_keys(const nlohmann::json& facts) {
  std::string out;
  for (const auto& [k, v] : facts.items()) out += (out.empty() ? "" : ", ") + k;
  return out.empty() ? "none" : out;
}

// The exception barrier: whatever a kind or the journal throws becomes the
// error of that step, undo or preclean, and the run goes on to its cleanup.
// `what` names the call for the message ("step kind 'veth'").
template <class F>
auto guarded(std::string_view what, F&& call, std::string_view on_bad_json = {}) -> decltype(call()) {
  using R = decltype(call());
  std::string message;
  try {
    return call();
  } catch (const nlohmann::json::exception& e) {
    message = on_bad_json.empty() ? fmt::format("{} failed unexpectedly: {}", what, e.what())
                                  : fmt::format("{}: {}", on_bad_json, e.what());
  } catch (const std::exception& e) {
    message = fmt::format("{} failed unexpectedly: {}", what, e.what());
  } catch (...) {
    message = fmt::format("{} failed unexpectedly", what);
  }
  Error error = make_error(std::move(message));
  if constexpr (std::is_same_v<R, StepResult>) {
    return StepResult::error(error);
  } else {
    return R(std::move(error));
  }
}

// What an undo's exception from nlohmann::json most likely means.
constexpr std::string_view kUnreadableArgs =
    "cannot read this journal entry's args (written by another rxerun version, or edited?)";

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

// The arguments an undo receives: what the step recorded, plus what
// identifies the object it made, when known.
nlohmann::json undo_args(const JournalEntry& entry) {
  if (entry.identity.is_null()) return entry.args;
  nlohmann::json args = entry.args;
  if (args.is_object()) args["identity"] = entry.identity;
  return args;
}

// Everything that keeps a step from passing, one line each.
std::vector<std::string> unmet(const Expectation& expect, const StepResult& result) {
  std::vector<std::string> out;
  if (result.outcome != expect.outcome) {
    // The step's own message travels beside this line (StepReport::message).
    out.push_back(fmt::format("expected {}, got {}", to_string(expect.outcome), to_string(result.outcome)));
  }
  if (result.outcome == Outcome::Error) return out;
  for (const auto& fe : expect.facts) {
    if (!result.facts.contains(fe.fact)) {
      out.push_back(fmt::format("fact {} was not reported (reported: {})", fe.fact, join_keys(result.facts)));
    } else if (auto why = fe.matcher.check(result.facts.at(fe.fact))) {
      out.push_back(fmt::format("fact {}: {}", fe.fact, *why));
    }
  }
  return out;
}

}  // namespace

// What a running step sees of the engine.
class Runner::Context final : public StepContext {
 public:
  Context(Runner& runner, const StepSpec& step, sys::SteadyTime deadline)
      : runner_(runner), step_(step), deadline_(deadline) {}

  sys::System& sys() override { return runner_.sys_; }
  const std::string& scenario() const override { return runner_.scenario_name_; }
  const StepSpec& step() const override { return step_; }
  sys::SteadyTime deadline() const override { return deadline_; }

  Result<void> will_change(nlohmann::json args, std::string summary, Footprint footprint) override {
    JournalEntry e{0,       step_.name,      step_.kind, step_.netns.value_or(""), std::move(summary),
                   std::move(args), std::move(footprint)};
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
        return make_error("'" + file + "' is an absolute path: in the lab VM only files under --output-dir come "
                          "back to the host; name it relative to --output-dir");
      return OutputPath{file, file};
    }
    if (file.empty() || file == "." || file.back() == '/') return make_error("'" + file + "' names no file");
    const std::string path = o.output_dir.empty() ? file : o.output_dir + "/" + file;
    return OutputPath{path, o.outputs_return ? file : path};
  }
  const nlohmann::json* facts_of(const std::string& step_name) const override {
    auto it = runner_.facts_.find(step_name);
    return it == runner_.facts_.end() ? nullptr : &it->second;
  }

 private:
  Runner& runner_;
  const StepSpec& step_;
  sys::SteadyTime deadline_;
  long last_change_ = 0;  // the seq of this step's latest will_change()
};

namespace {
class SimpleUndoContext final : public UndoContext {
 public:
  SimpleUndoContext(sys::System& sys, const std::string& scenario, std::string step = {}, std::string netns = {})
      : sys_(sys), scenario_(scenario), step_(std::move(step)), netns_(std::move(netns)) {}
  sys::System& sys() override { return sys_; }
  const std::string& scenario() const override { return scenario_; }
  std::string step() const override { return step_; }
  std::string netns() const override { return netns_; }

 private:
  sys::System& sys_;
  const std::string& scenario_;
  std::string step_;
  std::string netns_;
};
}  // namespace

Runner::Runner(const Registry& registry, sys::System& sys, Journal& journal, Reporter& reporter, RunOptions options)
    : registry_(registry), sys_(sys), journal_(journal), reporter_(reporter), options_(std::move(options)) {}

RunReport Runner::run(const Scenario& scenario) {
  scenario_name_ = scenario.name;
  facts_.clear();
  statuses_.clear();

  RunReport report;
  report.file = scenario.file;
  report.scenario = scenario.name;
  report.description = scenario.description;
  const auto start = sys_.clock.now();
  reporter_.run_started(scenario);

  report.preclean.phase = "preclean";
  if (!options_.planning) report.preclean = cleanup(scenario.name, "preclean", &scenario);

  bool stop = !report.preclean.clean();
  report.steps.reserve(scenario.steps.size());
  for (const auto& step : scenario.steps) {
    StepReport sr;
    if (stop || sys_.interrupt.requested()) {
      sr = StepReport{.index = step.index, .name = step.name, .kind = step.kind, .netns = step.netns.value_or(""),
                      .tags = step.tags, .status = StepStatus::NotRun, .expected = step.expect.outcome};
      sr.message = sys_.interrupt.requested() ? "not reached: interrupted" : "not reached: an earlier step did not pass";
    } else {
      sr = run_step(scenario, step);
    }
    statuses_[step.name] = sr.status;
    if (sr.status == StepStatus::Interrupted) report.interrupted = true;
    if (!options_.planning && (sr.status == StepStatus::Failed || sr.status == StepStatus::Error ||
                               sr.status == StepStatus::Interrupted))
      stop = true;
    reporter_.step_finished(sr);
    report.steps.push_back(std::move(sr));
  }
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
    report.cleanup = cleanup(scenario.name, "cleanup");
  }
  if (sys_.interrupt.requested() || report.cleanup.interrupted) report.interrupted = true;
  report.duration = since(sys_.clock, start);
  report.exit_code = exit_code_for(report);
  reporter_.run_finished(report);
  return report;
}

std::optional<std::string> Runner::skip_reason(const Scenario& scenario, const StepSpec& step) const {
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
  StepReport sr{.index = step.index, .name = step.name, .kind = step.kind, .netns = step.netns.value_or(""),
                .tags = step.tags, .expected = step.expect.outcome};
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
  try {
    return attempt_loop(scenario, step, *kind);
  } catch (const std::exception& e) {  // parameters checked at run time, a kind's validate(): see guarded()
    sr.status = StepStatus::Error;
    sr.outcome = Outcome::Error;
    sr.message = fmt::format("step kind '{}' failed unexpectedly: {}", step.kind, e.what());
    sr.attempts = 1;
    return sr;
  }
}

sys::SteadyTime Runner::deadline_for(const StepSpec& step, const Kind& kind) {
  Duration timeout = step.timeout.value_or(kind.spec.default_timeout.value_or(options_.default_timeout));
  if (timeout <= Duration::zero()) return sys::SteadyTime::max();
  return saturating_deadline(sys_.clock.now(), timeout);
}

StepReport Runner::attempt_loop(const Scenario& scenario, const StepSpec& step, const Kind& kind) {
  StepReport sr{.index = step.index, .name = step.name, .kind = step.kind, .netns = step.netns.value_or(""),
                .tags = step.tags, .expected = step.expect.outcome};
  const auto start = sys_.clock.now();

  // Parameters that read earlier steps' facts are expanded and checked now.
  nlohmann::json params = step.params;
  if (has_step_references(params)) {
    if (options_.planning) {
      sr.status = StepStatus::Skipped;
      sr.message = "its parameters use facts of earlier steps, known only at run time: not previewed";
      if (sys_.recorder) sys_.recorder->record({sr.message, ""});
      return sr;
    }
    FactLookup lookup = [this](const std::string& s, const std::string& f) -> std::optional<nlohmann::json> {
      auto it = facts_.find(s);
      if (it == facts_.end() || !it->second.contains(f)) return std::nullopt;
      return it->second.at(f);
    };
    std::vector<std::string> earlier;
    for (const auto& s : scenario.steps)
      if (s.index < step.index) earlier.push_back(s.name);
    Diagnostics diags;
    if (auto r = expand_json(params, {}, &lookup); !r) {
      Mark m = step.mark_of("");
      diags.push_back({scenario.file, m, r.error().message});
    } else if (auto bad = not_utf8(params)) {
      diags.push_back({scenario.file, step.mark_of(""),
                       fmt::format("a fact of an earlier step put bytes that are not UTF-8 into '{}'", excerpt(*bad))});
    } else {
      diags = check_params(kind.spec, params, step, scenario.file, earlier);
    }
    if (!diags.empty()) {
      sr.status = StepStatus::Error;
      sr.outcome = Outcome::Error;
      sr.message = diags.front().to_string();
      sr.duration = since(sys_.clock, start);
      return sr;
    }
  }

  const int max_attempts = 1 + std::max(0, step.retries);
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    sr.attempts = attempt;
    StepResult result;
    {
      std::unique_ptr<sys::NetnsScope> scope;
      if (step.netns) {
        auto entered = sys_.netns.enter(*step.netns);
        if (!entered) {
          result = StepResult::error(entered.error());
        } else {
          scope = std::move(entered).value();
        }
      }
      if (result.outcome != Outcome::Error) {
        const auto deadline = deadline_for(step, kind);
        Context ctx(*this, step, deadline);
        Params p(params, step, scenario.file);
        result = guarded("step kind '" + step.kind + "'", [&] { return kind.run(p, ctx); });
        // A step that overran its deadline timed out, whatever it says.
        if (result.outcome != Outcome::Error && deadline != sys::SteadyTime::max() && sys_.clock.now() > deadline)
          result.outcome = Outcome::Timeout;
      }
    }
    sr.outcome = result.outcome;
    sr.facts = result.facts;
    sr.message = result.message;
    sr.hints = result.hints;
    facts_[step.name] = result.facts;

    if (sys_.interrupt.requested()) {
      sr.status = StepStatus::Interrupted;
      sr.failures = {"interrupted"};
      break;
    }
    sr.failures = unmet(step.expect, result);
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
  sr.duration = since(sys_.clock, start);
  return sr;
}

UndoReport Runner::undo(const JournalEntry& entry, nlohmann::json* facts) {
  UndoReport ur{.step = entry.step, .kind = entry.kind, .summary = entry.summary};
  const auto start = sys_.clock.now();
  const Kind* kind = registry_.find(entry.kind);
  auto finish = [&](Result<void> r) {
    if (r) {
      if (auto m = guarded("the journal", [&] { return journal_.mark_undone(entry.seq); }); !m) r = m;
    }
    if (!r) {
      ur.ok = false;
      ur.error = r.error().message;
      if (r.error().code) ur.error += std::string(": ") + std::strerror(r.error().code);
      ur.journal_text = journal_text(entry);
    }
    ur.duration = since(sys_.clock, start);
    return ur;
  };
  if (!entry.unreadable.empty())
    return finish(make_error("cannot read this journal entry: " + entry.unreadable +
                             " (written by another rxerun version, or edited?)"));
  if (!kind || !kind->undo) {
    return finish(make_error("no undo for step kind '" + entry.kind + "' (journal written by another rxerun version?)"));
  }
  bool gone = false;
  auto scope = enter(entry.netns, &gone);
  if (gone) return finish({});  // a namespace that is gone took everything inside it along
  if (!scope) return finish(scope.error());
  SimpleUndoContext uctx(sys_, scenario_name_, entry.step, entry.netns);
  auto r = guarded("undo of step kind '" + entry.kind + "'", [&] { return kind->undo(undo_args(entry), uctx); },
                   kUnreadableArgs);
  if (!r) return finish(r.error());
  if (facts && r->is_object()) facts->update(*r);
  return finish({});
}

Result<std::unique_ptr<sys::NetnsScope>> Runner::enter(const std::string& netns, bool* gone) {
  *gone = false;
  if (netns.empty()) return std::unique_ptr<sys::NetnsScope>();
  auto entered = sys_.netns.enter(netns);
  if (!entered && entered.error().code == ENOENT) *gone = true;
  return entered;
}

std::vector<UndoReport> Runner::undo_batch(const Kind& kind, const std::vector<JournalEntry>& entries) {
  const auto start = sys_.clock.now();
  Result<void> r;
  {
    bool gone = false;
    auto scope = enter(entries.front().netns, &gone);
    if (!gone) {
      if (!scope) {
        r = scope.error();
      } else {
        std::vector<nlohmann::json> args;
        for (const auto& e : entries) args.push_back(undo_args(e));
        SimpleUndoContext uctx(sys_, scenario_name_, "", entries.front().netns);
        r = guarded("undo of step kind '" + kind.spec.name + "'", [&] { return kind.undo_batch(args, uctx); },
                    kUnreadableArgs);
      }
    }
  }
  std::vector<UndoReport> out;
  if (!r) {  // find out which one fails, and undo the others anyway
    for (const auto& e : entries) out.push_back(undo(e, nullptr));
    return out;
  }
  std::vector<const JournalEntry*> done;
  for (const auto& e : entries) done.push_back(&e);
  return mark_all_undone(done, since(sys_.clock, start) / static_cast<long>(entries.size()), "");
}

void Runner::remove_marked(const Scenario& scenario, CleanupReport& report) {
  scenario_name_ = scenario.name;
  std::vector<std::string> namespaces = {""};
  for (const auto& s : scenario.steps)
    if (s.netns && std::find(namespaces.begin(), namespaces.end(), *s.netns) == namespaces.end())
      namespaces.push_back(*s.netns);
  for (const auto& kind : registry_.kinds()) {
    if (!kind.preclean) continue;
    // Only the kinds the scenario uses can have left marked things behind;
    // asking the others costs time and may need rights the scenario does not
    // (a sleep-only lab run by a user without CAP_NET_ADMIN).
    const bool used = std::any_of(scenario.steps.begin(), scenario.steps.end(),
                                  [&](const StepSpec& s) { return s.kind == kind.spec.name; });
    if (!used) continue;
    for (const auto& ns : namespaces) {
      bool gone = false;
      auto scope = enter(ns, &gone);
      if (gone) continue;
      const auto start = sys_.clock.now();
      if (!scope) {
        report.undos.push_back({.kind = kind.spec.name, .summary = "look for leftovers in netns " + ns, .ok = false,
                                .error = scope.error().message});
        reporter_.undo_finished(report.undos.back());
        continue;
      }
      SimpleUndoContext uctx(sys_, scenario_name_);
      auto removed = guarded("preclean of step kind '" + kind.spec.name + "'", [&] { return kind.preclean(uctx); });
      if (!removed) {
        report.undos.push_back({.kind = kind.spec.name,
                                .summary = "remove marked leftovers" + (ns.empty() ? "" : " in netns " + ns),
                                .ok = false, .error = removed.error().message, .duration = since(sys_.clock, start)});
        reporter_.undo_finished(report.undos.back());
        continue;
      }
      for (const auto& what : *removed) {
        report.undos.push_back({.kind = kind.spec.name, .summary = what, .duration = since(sys_.clock, start)});
        reporter_.undo_finished(report.undos.back());
      }
    }
  }
}

Result<nlohmann::json> Runner::revert(const std::string& step_name) {
  std::vector<JournalEntry> mine;
  for (const auto& e : journal_.pending())
    if (e.step == step_name) mine.push_back(e);
  nlohmann::json facts = nlohmann::json::object();
  for (auto it = mine.rbegin(); it != mine.rend(); ++it) {
    UndoReport ur = undo(*it, &facts);
    if (!ur.ok) return make_error("could not undo '" + ur.summary + "': " + ur.error);
  }
  return facts;
}

CleanupReport Runner::cleanup(const std::string& scenario_name, std::string_view phase, const Scenario* marked) {
  scenario_name_ = scenario_name;
  CleanupReport report;
  report.phase = std::string(phase);
  std::vector<JournalEntry> pending = journal_.pending();  // copy: undo() shrinks it
  reporter_.cleanup_started(phase, pending.size());

  // A change that lives on something an older pending change made (an
  // address on the run's veth, a rule in the run's namespace) rides on the
  // oldest such change: when that one's undo removes the thing, the rider
  // went with it and is not undone on its own.
  std::map<long, std::vector<const JournalEntry*>> riders;  // by the owner's seq, oldest first
  {
    std::map<std::string, long> maker;  // object -> the oldest pending change that makes it
    for (const auto& e : pending) {
      long owner = 0;
      for (const auto& o : e.footprint.on)
        if (auto it = maker.find(o); it != maker.end() && it->second != e.seq && (!owner || it->second < owner))
          owner = it->second;
      if (owner) riders[owner].push_back(&e);
      for (const auto& o : e.footprint.makes) maker.emplace(o, e.seq);
    }
  }
  std::set<long> riding;
  for (const auto& [owner, list] : riders)
    for (const auto* e : list) riding.insert(e->seq);

  // Newest first; changes of kinds that can undo many at once are gathered
  // (by kind and namespace, in order of first appearance) and undone last.
  std::vector<std::pair<const Kind*, std::vector<JournalEntry>>> batches;
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    if (riding.count(it->seq)) continue;
    const Kind* kind = registry_.find(it->kind);
    if (kind && kind->undo_batch && it->unreadable.empty()) {
      auto b = std::find_if(batches.begin(), batches.end(), [&](const auto& x) {
        return x.first == kind && x.second.front().netns == it->netns;
      });
      if (b == batches.end()) {
        batches.push_back({kind, {*it}});
      } else {
        b->second.push_back(*it);
      }
      continue;
    }
    if (sys_.interrupt.requested()) break;
    report.undos.push_back(undo(*it, nullptr));
    reporter_.undo_finished(report.undos.back());
    settle_riders(*it, report.undos.back().ok, riders, report);
  }
  for (const auto& [kind, entries] : batches) {
    if (sys_.interrupt.requested()) break;
    auto results = undo_batch(*kind, entries);
    for (std::size_t i = 0; i < results.size(); ++i) {
      report.undos.push_back(std::move(results[i]));
      reporter_.undo_finished(report.undos.back());
      settle_riders(entries[i], report.undos.back().ok, riders, report);
    }
  }
  // Interrupted (Ctrl-C during `rxerun cleanup`, a second one during a
  // run's cleanup): the undo in progress finished and was recorded; what is
  // left stays in the journal for the next cleanup, and is reported.
  if (sys_.interrupt.requested()) {
    report.interrupted = true;
    for (const auto& e : journal_.pending()) {
      report.undos.push_back({.step = e.step,
                              .kind = e.kind,
                              .summary = e.summary,
                              .ok = false,
                              .error = "not undone: interrupted (it stays in the journal for `rxerun cleanup`)"});
      reporter_.undo_finished(report.undos.back());
    }
  } else if (marked && report.clean()) {
    // Not after an undo that left something behind: it may have refused a
    // namesake that copied the mark, which the mark alone cannot tell from
    // a leftover. The next cleanup looks again.
    remove_marked(*marked, report);
  }
  // Lines the journal could not read may have recorded changes nobody
  // undid: residue, with the file kept for a person to read.
  if (!journal_.damaged().empty()) {
    UndoReport ur{.kind = "journal", .summary = damaged_line_numbers(journal_.damaged()), .ok = false};
    ur.journal_text = journal_text(journal_.damaged());
    auto kept = journal_.keep_damaged_aside();
    ur.error =
        kept ? "unreadable: whatever they recorded was not undone (check by hand); the journal is kept as " + *kept
             : "unreadable: whatever they recorded was not undone (check by hand); " + kept.error().message +
                   (kept.error().code ? std::string(": ") + std::strerror(kept.error().code) : "");
    report.undos.push_back(std::move(ur));
    reporter_.undo_finished(report.undos.back());
  }
  journal_.remove_if_clean();
  reporter_.cleanup_finished(report);
  return report;
}

void Runner::settle_riders(const JournalEntry& owner, bool owner_undone,
                           const std::map<long, std::vector<const JournalEntry*>>& riders, CleanupReport& report) {
  auto it = riders.find(owner.seq);
  if (it == riders.end()) return;
  if (!owner_undone) {  // the thing is still there: undo what rides on it, one by one, newest first
    for (auto r = it->second.rbegin(); r != it->second.rend(); ++r) {
      report.undos.push_back(undo(**r, nullptr));
      reporter_.undo_finished(report.undos.back());
      settle_riders(**r, report.undos.back().ok, riders, report);
    }
    return;
  }
  // Gone with the owner, and so is whatever rode on them: one journal write for all.
  std::vector<const JournalEntry*> gone;
  std::vector<const JournalEntry*> todo(it->second.rbegin(), it->second.rend());
  while (!todo.empty()) {
    const JournalEntry* e = todo.front();
    todo.erase(todo.begin());
    gone.push_back(e);
    if (auto more = riders.find(e->seq); more != riders.end())
      todo.insert(todo.end(), more->second.rbegin(), more->second.rend());
  }
  for (auto& ur : mark_all_undone(gone, Duration{0}, owner.summary)) {
    report.undos.push_back(std::move(ur));
    reporter_.undo_finished(report.undos.back());
  }
}

std::vector<UndoReport> Runner::mark_all_undone(const std::vector<const JournalEntry*>& entries, Duration each,
                                                const std::string& covered_by) {
  std::vector<long> seqs;
  for (const auto* e : entries) seqs.push_back(e->seq);
  auto marked = guarded("the journal", [&] { return journal_.mark_undone(seqs); });
  std::vector<UndoReport> out;
  for (const auto* e : entries) {
    UndoReport ur{.step = e->step, .kind = e->kind, .summary = e->summary, .duration = each, .covered_by = covered_by};
    if (!marked) {
      ur.ok = false;
      ur.error = marked.error().message;
      ur.journal_text = journal_text(*e);
    }
    out.push_back(std::move(ur));
  }
  return out;
}

int exit_code_for(const RunReport& report) {
  auto any = [&](StepStatus s) {
    return std::any_of(report.steps.begin(), report.steps.end(), [&](const StepReport& r) { return r.status == s; });
  };
  if (report.interrupted) return kExitInterrupted;
  if (!report.preclean.clean() || any(StepStatus::Error)) return kExitEnvironment;
  if (!report.cleanup.clean()) return kExitResidue;
  if (any(StepStatus::Failed)) return kExitFailed;
  return kExitOk;
}

}  // namespace rxerun
