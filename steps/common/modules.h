#pragma once
// The kernel modules a step needs (rdma_rxe, siw, nvmet, a user's own):
// loaded through ctx.sys().rdma (libkmod, as modprobe would), and unloaded by
// the step's undo, users before what they use, once nothing needs them.
//
// Before it loads anything, load_modules() journals one change, a
// ModulesRecord ({"op": "modules", "modules": [...]}): the modules it is
// about to load with the dependencies they pull in, in the order to unload
// them. The kind's undo reads it back (its op, or in an older entry its
// "modules" key, tells it from the kind's other records) and hands it to
// unload_modules(). A change journalled before the step's device (or
// target, or connection) is undone after it, so by then this run's own
// users are gone; what else still uses a module keeps it loaded.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "engine/step.h"
#include "steps/common/journal_args.h"

namespace rxerun::steps {

struct ModuleRequest {
  std::string name;       // "rdma_rxe", "nvmet-rdma" (dashes and underscores are one)
  std::string params;     // for the module itself, as modprobe takes them: "nr_devices=0 queue_mode=2"
  bool optional = false;  // a kernel without it is no error: a hint says what is missing
  std::string missing;    // optional: what a kernel without it lacks, for that hint
};

// Loads what is missing of `wanted` with what it needs, journalled first
// ("unload A, B (loaded by this run) " + `once`). Returns the names of
// `wanted` that this step loaded. A module loaded already keeps its
// parameters: when it shows one of `params` with another value, that is an
// error (code EEXIST) naming both. Error code ENOENT: the kernel has no such
// module (and it is not optional); EPERM: not root.
Result<std::vector<std::string>> load_modules(StepContext& ctx, const std::vector<ModuleRequest>& wanted,
                                              const std::string& once, std::vector<std::string>* hints);

// What load_modules() journals: the modules to unload, users first. A
// record of every kind that loads modules (journal_record.h).
struct ModulesRecord {
  static constexpr std::string_view kOp = "modules";
  std::vector<std::string> modules;

  nlohmann::json to_args() const;
  static Result<ModulesRecord> read(JournalArgs& a);
  // Whether an entry without "op" (an older journal) holds this record.
  static bool in_older_entry(const JournalArgs& a) { return a.has("modules"); }
};

// What of others still needs the modules ("rxe device rxe3"): then they stay
// loaded, reported as facts. Empty: the kernel's use counts decide.
using ModuleUsers = std::function<Result<std::vector<std::string>>(UndoContext&)>;

// Unloads the journalled modules that are still loaded, users first,
// retrying while the kernel says they are briefly busy. Those still in use
// after that are tried again, for longer, once the cleanup's other undos
// are done (the undo asks to be put off); still in use then, they stay
// loaded and are reported (`modules_left`). Only `must_go` (rdma_rxe: it
// would keep a device's memory) staying is an error.
Result<nlohmann::json> unload_modules(const ModulesRecord& record, UndoContext& ctx, const ModuleUsers& users,
                                      std::string_view must_go = {});

// A kernel module's name as modules.dep spells it (after the path and suffix).
bool is_module_name(std::string_view name);

}  // namespace rxerun::steps
