#pragma once
// The records a kind journals, typed: one struct per kind of record, which
// the step writes (to_args(), in its will_change()) and its undo reads back
// (read(), through JournalArgs, every value checked), so that writer and
// reader cannot drift apart. Every record names itself in "op":
//
//   {"op":"port_link","port_link":1,"subsystem":"nqn.2026-01.io.rxerun:lab",...}
//
// A kind that journals several records (nvmet) undoes each as its op says
// (dispatch_undo() over a table of undo_of<Record, undo>() entries, each
// undo taking its record typed);
// an op the kind does not write is refused, never guessed. A journal
// written before records named themselves has no "op": such an entry's
// record is told by its keys, as the version that wrote it did.
//
// The shape of a record, in the kind's own file:
//
//   // The port the step made; the undo removes it while it is the same one.
//   struct NvmetPortRecord {
//     static constexpr std::string_view kOp = "port";
//     unsigned id = 0;
//     ...
//     nlohmann::json to_args() const;                      // with "op"
//     static Result<NvmetPortRecord> read(JournalArgs& a);  // a.error() on any problem
//   };
//
// What StepContext::identify() records reaches the undo as args["identity"]:
// a record reads it with a.identity() whether the step wrote it or the
// journal added it.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/try.h"
#include "engine/step.h"
#include "steps/common/journal_args.h"

namespace rxerun::steps {

// Which record `a` holds: its "op", which must be one of `ops` (the records
// the kind writes); without one, `inferred` (what an entry written before
// records named themselves holds, told by its keys). On a problem ("op" is
// not a string, or names no record of `ops`; no "op" and nothing inferred)
// it is recorded in `a` and "" returned.
std::string record_op(JournalArgs& a, const std::vector<std::string_view>& ops, std::string_view inferred);

// The undo of one record of a kind that writes several: its op, and what
// undoes it.
struct RecordUndo {
  std::string_view op;
  Result<nlohmann::json> (*undo)(JournalArgs&, UndoContext&);
};

// The table's entry for record R, undone by `undo` once read from the
// entry (a problem in it is the undo's error):
//
//   const RecordUndo kNvmetUndos[] = {undo_of<NvmetPortRecord, undo_port>(), ...};
template <class R, Result<nlohmann::json> (*undo)(const R&, UndoContext&)>
constexpr RecordUndo undo_of() {
  return {R::kOp, [](JournalArgs& a, UndoContext& ctx) -> Result<nlohmann::json> {
            RXERUN_TRY_ASSIGN(const auto record, R::read(a));
            return undo(record, ctx);
          }};
}

// Undoes the entry `a` holds with the undo `table` gives its op (read by
// record_op() over the table's ops, `inferred` for an entry without one);
// an op the table lacks is `a`'s error.
Result<nlohmann::json> dispatch_undo(JournalArgs& a, UndoContext& ctx, std::span<const RecordUndo> table,
                                     std::string_view inferred = {});

// Reads an entry of a kind that writes one record, R: an "op" other than
// R's is refused.
template <class R>
Result<R> read_record(const nlohmann::json& args, const UndoContext& ctx) {
  JournalArgs a(args, ctx);
  (void)record_op(a, {R::kOp}, R::kOp);
  return R::read(a);
}

}  // namespace rxerun::steps
