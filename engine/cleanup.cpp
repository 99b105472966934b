#include "engine/cleanup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "base/result.h"
#include "engine/barrier.h"
#include "engine/report_journal.h"
#include "engine/step.h"

namespace rxerun {

namespace {

// The arguments an undo receives: what the step recorded, plus what
// identifies the object it made, when known.
nlohmann::json undo_args(const JournalEntry& entry) {
  if (entry.identity.is_null()) return entry.args;
  nlohmann::json args = entry.args;
  if (args.is_object()) args["identity"] = entry.identity;
  return args;
}

class SimpleUndoContext final : public UndoContext {
 public:
  SimpleUndoContext(sys::System& sys, const std::string& scenario, std::string step = {}, std::string netns = {},
                    RunningTools* running = nullptr, UndoTry attempt = UndoTry::Only)
      : sys_(sys),
        scenario_(scenario),
        step_(std::move(step)),
        netns_(std::move(netns)),
        running_(running),
        attempt_(attempt) {}
  sys::System& sys() override { return sys_; }
  const std::string& scenario() const override { return scenario_; }
  std::string step() const override { return step_; }
  std::string netns() const override { return netns_; }
  std::unique_ptr<sys::RunningTool> take_running() override {
    return running_ ? rxerun::take_running(*running_, step_) : nullptr;
  }
  UndoTry attempt() const override { return attempt_; }

 private:
  sys::System& sys_;
  const std::string& scenario_;
  std::string step_;
  std::string netns_;
  RunningTools* running_;
  UndoTry attempt_;
};

// A change that lives on something an older pending change made (an
// address on the run's veth, a rule in the run's namespace) rides on the
// oldest such change: when that one's undo removes the thing, the rider
// went with it and is not undone on its own. By the owner's seq, oldest
// first; pointers into `pending`.
std::map<long, std::vector<const JournalEntry*>> riders_of(const std::vector<JournalEntry>& pending) {
  std::map<long, std::vector<const JournalEntry*>> riders;
  std::map<std::string, long> maker;  // object -> the oldest pending change that makes it
  for (const auto& e : pending) {
    long owner = 0;
    for (const auto& o : e.footprint.on)
      if (auto it = maker.find(o); it != maker.end() && it->second != e.seq && (!owner || it->second < owner))
        owner = it->second;
    if (owner) riders[owner].push_back(&e);
    for (const auto& o : e.footprint.makes) maker.emplace(o, e.seq);
  }
  return riders;
}

}  // namespace

CleanupReport Cleanup::run(std::string_view phase, const Scenario* marked) {
  CleanupReport report;
  report.phase = std::string(phase);
  const std::vector<JournalEntry> pending = journal_.pending();  // copy: undo() shrinks it
  reporter_.cleanup_started(phase, pending.size());
  const Riders riders = riders_of(pending);
  std::vector<JournalEntry> put_off;
  undo_batches(undo_one_by_one(pending, riders, report, put_off), riders, report);
  // Last, what had to wait for the others (a module in use until then).
  for (const auto& e : put_off) {
    if (sys_.interrupt.requested()) break;
    record(report, undo(e, nullptr, UndoTry::Last));
    settle_riders(e, report.undos.back().ok, riders, report);
  }
  // Interrupted (Ctrl-C during `rxerun cleanup`, a second one during a
  // run's cleanup): the undo in progress finished and was recorded; what is
  // left stays in the journal for the next cleanup, and is reported.
  if (sys_.interrupt.requested()) {
    report_interrupted(report);
  } else if (marked && report.clean()) {
    // Not after an undo that left something behind: it may have refused a
    // namesake that copied the mark, which the mark alone cannot tell from
    // a leftover. The next cleanup looks again.
    remove_marked(*marked, report);
  }
  // Lines the journal could not read may have recorded changes nobody
  // undid: residue, with the file kept for a person to read.
  if (!journal_.damaged().empty()) report_damage(report);
  journal_.remove_if_clean();
  reporter_.cleanup_finished(report);
  return report;
}

std::vector<Cleanup::Batch> Cleanup::undo_one_by_one(const std::vector<JournalEntry>& pending, const Riders& riders,
                                                     CleanupReport& report, std::vector<JournalEntry>& put_off) {
  std::set<long> riding;
  for (const auto& [owner, list] : riders)
    for (const auto* e : list) riding.insert(e->seq);
  // Newest first; changes of kinds that can undo many at once are gathered
  // (by kind and namespace, in order of first appearance) and undone last.
  std::vector<Batch> batches;
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    if (riding.count(it->seq)) continue;
    const Kind* kind = registry_.find(it->kind);
    if (kind && kind->undo_batch && it->unreadable.empty()) {
      auto b = std::find_if(batches.begin(), batches.end(),
                            [&](const auto& x) { return x.first == kind && x.second.front().netns == it->netns; });
      if (b == batches.end()) {
        batches.push_back({kind, {*it}});
      } else {
        b->second.push_back(*it);
      }
      continue;
    }
    if (sys_.interrupt.requested()) break;
    bool later = false;
    UndoReport ur = undo(*it, nullptr, UndoTry::First, &later);
    if (later) {
      put_off.push_back(*it);
      continue;
    }
    record(report, std::move(ur));
    settle_riders(*it, report.undos.back().ok, riders, report);
  }
  return batches;
}

void Cleanup::undo_batches(const std::vector<Batch>& batches, const Riders& riders, CleanupReport& report) {
  for (const auto& [kind, entries] : batches) {
    if (sys_.interrupt.requested()) break;
    auto results = undo_batch(*kind, entries);
    for (std::size_t i = 0; i < results.size(); ++i) {
      record(report, std::move(results[i]));
      settle_riders(entries[i], report.undos.back().ok, riders, report);
    }
  }
}

UndoReport Cleanup::undo(const JournalEntry& entry, nlohmann::json* facts, UndoTry attempt, bool* put_off) {
  UndoReport ur{.step = entry.step, .kind = entry.kind, .summary = entry.summary};
  const auto start = sys_.clock.now();
  const Kind* kind = registry_.find(entry.kind);
  auto finish = [&](Result<void> r) {
    if (r) {
      if (auto m = guarded("the journal", [&] { return journal_.mark_undone(entry.seq); }); !m) r = m;
    }
    if (!r) {
      ur.ok = false;
      ur.error = error_text(r.error());
      ur.journal_text = journal_text(entry);
    }
    ur.duration = sys::elapsed_since(sys_.clock, start);
    return ur;
  };
  if (!entry.unreadable.empty())
    return finish(make_error("cannot read this journal entry: " + entry.unreadable +
                             " (written by another rxerun version, or edited?)"));
  if (!kind && !entry.plugin.empty()) {
    const auto why = registry_.plugin_failure(entry.plugin);
    return finish(
        make_error(why ? "step kind '" + entry.kind + "' comes from a plugin that could not be loaded: " + *why
                       : "step kind '" + entry.kind + "' comes from plugin " + entry.plugin + ", which is not loaded"));
  }
  if (!kind || !kind->undo) {
    return finish(
        make_error("no undo for step kind '" + entry.kind + "' (journal written by another rxerun version?)"));
  }
  bool gone = false;
  auto scope = enter(entry.netns, &gone);
  // A namespace that is gone took everything inside it along; what is the
  // whole kernel's (a module, the undos put off) is undone from rxerun's own.
  if (gone && attempt != UndoTry::Last) return finish({});
  if (!gone && !scope) return finish(scope.error());
  SimpleUndoContext uctx(sys_, scenario_, entry.step, gone ? "" : entry.netns, running_, attempt);
  auto r = guarded(
      "undo of step kind '" + entry.kind + "'", [&] { return kind->undo(undo_args(entry), uctx); }, kUnreadableArgs);
  if (!r && r.error().code == EAGAIN && attempt == UndoTry::First && put_off) {
    *put_off = true;  // neither marked undone nor reported: tried again last
    return ur;
  }
  if (!r) return finish(r.error());
  if (facts && r->is_object()) facts->update(*r);
  return finish({});
}

Result<std::unique_ptr<sys::NetnsScope>> Cleanup::enter(const std::string& netns, bool* gone) {
  *gone = false;
  if (netns.empty()) return std::unique_ptr<sys::NetnsScope>();
  auto entered = sys_.netns.enter(netns);
  if (!entered && entered.error().code == ENOENT) *gone = true;
  return entered;
}

std::vector<UndoReport> Cleanup::undo_batch(const Kind& kind, const std::vector<JournalEntry>& entries) {
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
        SimpleUndoContext uctx(sys_, scenario_, "", entries.front().netns);
        r = guarded(
            "undo of step kind '" + kind.spec.name + "'", [&] { return kind.undo_batch(args, uctx); }, kUnreadableArgs);
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
  return mark_all_undone(done, sys::elapsed_since(sys_.clock, start) / static_cast<long>(entries.size()), "");
}

void Cleanup::settle_riders(const JournalEntry& owner, bool owner_undone, const Riders& riders, CleanupReport& report) {
  auto it = riders.find(owner.seq);
  if (it == riders.end()) return;
  if (!owner_undone) {  // the thing is still there: undo what rides on it, one by one, newest first
    for (auto r = it->second.rbegin(); r != it->second.rend(); ++r) {
      record(report, undo(**r, nullptr));
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
  for (auto& ur : mark_all_undone(gone, Duration{0}, owner.summary)) record(report, std::move(ur));
}

std::vector<UndoReport> Cleanup::mark_all_undone(const std::vector<const JournalEntry*>& entries, Duration each,
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

void Cleanup::report_interrupted(CleanupReport& report) {
  report.interrupted = true;
  for (const auto& e : journal_.pending()) {
    record(report, {.step = e.step,
                    .kind = e.kind,
                    .summary = e.summary,
                    .ok = false,
                    .error = "not undone: interrupted (it stays in the journal for `rxerun cleanup`)"});
  }
}

void Cleanup::remove_marked(const Scenario& scenario, CleanupReport& report) {
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
    for (const auto& ns : namespaces) remove_marked_in(kind, ns, scenario, report);
  }
}

void Cleanup::remove_marked_in(const Kind& kind, const std::string& netns, const Scenario& scenario,
                               CleanupReport& report) {
  bool gone = false;
  auto scope = enter(netns, &gone);
  if (gone) return;
  const auto start = sys_.clock.now();
  if (!scope) {
    record(report, {.kind = kind.spec.name,
                    .summary = "look for leftovers in netns " + netns,
                    .ok = false,
                    .error = scope.error().message});
    return;
  }
  SimpleUndoContext uctx(sys_, scenario.name);
  auto removed = guarded("preclean of step kind '" + kind.spec.name + "'", [&] { return kind.preclean(uctx); });
  if (!removed) {
    record(report, {.kind = kind.spec.name,
                    .summary = "remove marked leftovers" + (netns.empty() ? "" : " in netns " + netns),
                    .ok = false,
                    .error = removed.error().message,
                    .duration = sys::elapsed_since(sys_.clock, start)});
    return;
  }
  for (const auto& what : *removed)
    record(report, {.kind = kind.spec.name, .summary = what, .duration = sys::elapsed_since(sys_.clock, start)});
}

void Cleanup::report_damage(CleanupReport& report) {
  UndoReport ur{.kind = "journal", .summary = damaged_line_numbers(journal_.damaged()), .ok = false};
  ur.journal_text = journal_text(journal_.damaged());
  auto kept = journal_.keep_damaged_aside();
  ur.error = kept ? "unreadable: whatever they recorded was not undone (check by hand); the journal is kept as " + *kept
                  : "unreadable: whatever they recorded was not undone (check by hand); " + error_text(kept.error());
  record(report, std::move(ur));
}

void Cleanup::record(CleanupReport& report, UndoReport undo) {
  report.undos.push_back(std::move(undo));
  reporter_.undo_finished(report.undos.back());
}

}  // namespace rxerun
