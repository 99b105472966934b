#pragma once
// Cleanup: undoing what the journal holds, an object of its own over the
// kinds, the system, the journal and the reporter (as ninja's Cleaner). The
// runner's preclean and cleanup and `rxerun cleanup` replay the whole
// journal with it; `revert` undoes one step's changes through it.
//
// The journal is undone newest first. Undos of kinds that can undo many
// changes in one kernel operation are gathered (by kind and namespace) and
// run after the others, in one request. A change that lives on something an
// older pending change made rides on it: when that undo succeeds, the rider
// went with it and is only marked undone; when it fails, the riders are
// undone one by one. An undo that needs the others done first (a module
// that something a later undo removes still holds) asks to be tried again
// after them, once. A signal lets the undo in progress finish, then stops;
// the rest stays in the journal and is reported. Damaged lines are reported
// as residue and the journal kept aside.

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/journal.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "engine/running_tools.h"
#include "engine/step.h"
#include "sys/system.h"

namespace rxerun {

class Cleanup {
 public:
  // `scenario` names the run's scenario to the undos; `running` holds the
  // programs its steps left running, which their undos take (null: none).
  Cleanup(const Registry& registry, sys::System& sys, Journal& journal, Reporter& reporter, std::string scenario,
          RunningTools* running = nullptr)
      : registry_(registry),
        sys_(sys),
        journal_(journal),
        reporter_(reporter),
        scenario_(std::move(scenario)),
        running_(running) {}

  // Undoes every change pending in the journal, newest first, reporting
  // each. With `marked`, then asks every kind of that scenario with a
  // preclean hook to remove what carries its mark but is missing from the
  // journal (leftovers of a crashed run), in rxerun's own namespace and in
  // each namespace the scenario names.
  CleanupReport run(std::string_view phase, const Scenario* marked = nullptr);

  // Undoes one entry now and marks it undone in the journal (not reported);
  // what its undo observed is added to `facts`, when given. On its first
  // try an undo may ask to be tried again last (EAGAIN): `put_off` is then
  // set and nothing is marked.
  UndoReport undo(const JournalEntry& entry, nlohmann::json* facts, UndoTry attempt = UndoTry::Only,
                  bool* put_off = nullptr);

 private:
  // The changes that ride on each pending change, by the owner's seq.
  using Riders = std::map<long, std::vector<const JournalEntry*>>;
  // Entries of one kind and namespace, undone in one call of the kind's undo_batch.
  using Batch = std::pair<const Kind*, std::vector<JournalEntry>>;

  // Undoes the entries one by one, newest first, but for riders and those
  // of kinds that undo in batches, which it returns gathered, and those
  // whose undo asks to wait for the others, which it adds to `put_off`.
  std::vector<Batch> undo_one_by_one(const std::vector<JournalEntry>& pending, const Riders& riders,
                                     CleanupReport& report, std::vector<JournalEntry>& put_off);
  void undo_batches(const std::vector<Batch>& batches, const Riders& riders, CleanupReport& report);
  std::vector<UndoReport> undo_batch(const Kind& kind, const std::vector<JournalEntry>& entries);
  // After `owner`'s undo: what rode on it went with it (marked undone), or,
  // when the undo failed, is undone on its own.
  void settle_riders(const JournalEntry& owner, bool owner_undone, const Riders& riders, CleanupReport& report);
  // Records entries whose changes are gone (one journal write) and reports them.
  std::vector<UndoReport> mark_all_undone(const std::vector<const JournalEntry*>& entries, Duration each,
                                          const std::string& covered_by);
  // What a signal left in the journal, each as not undone.
  void report_interrupted(CleanupReport& report);
  void remove_marked(const Scenario& scenario, CleanupReport& report);
  void remove_marked_in(const Kind& kind, const std::string& netns, const Scenario& scenario, CleanupReport& report);
  // The journal's damaged lines, as residue; the journal is kept aside.
  void report_damage(CleanupReport& report);
  // Adds `undo` to the report and tells the reporter.
  void record(CleanupReport& report, UndoReport undo);
  // Enters `netns` ("" stays); `gone` when it no longer exists.
  Result<std::unique_ptr<sys::NetnsScope>> enter(const std::string& netns, bool* gone);

  const Registry& registry_;
  sys::System& sys_;
  Journal& journal_;
  Reporter& reporter_;
  std::string scenario_;
  RunningTools* running_;
};

}  // namespace rxerun
