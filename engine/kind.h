#pragma once
// A step kind: its declaration as data (KindSpec, in the plugin SDK's
// rxerun/kind.h: the loader validates against it, `rxerun steps` prints it
// and `rxerun schema` is generated from it) and what it does. One source of
// truth for built-in kinds and plugin kinds alike.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/result.h"
#include "rxerun/kind.h"

namespace rxerun {

class Params;
class StepContext;
class UndoContext;
struct LabPicture;
struct StepSpec;

std::string_view to_string(ParamType t);

// What a kind does. `run` acts through ctx.sys() only; `undo` receives the
// arguments the kind recorded with ctx.will_change() and must be idempotent
// ("already gone" is success). It runs in a later process after a crash, so
// it may rely on nothing but those arguments. It returns the facts observed
// just before undoing (a fault's final counters), which `revert` reports.
struct Kind {
  KindSpec spec;
  std::function<StepResult(const Params&, StepContext&)> run;
  std::function<Result<nlohmann::json>(const nlohmann::json& args, UndoContext&)> undo;

  // Optional. Undoes several of this kind's changes at once (the kernel
  // deletes many links in one grace period where one at a time costs one
  // each). Cleanup gathers such undos and runs them after the others: legal
  // because nothing a later undo does needs the thing to be gone. When the
  // batch fails, cleanup falls back to undo() one by one.
  std::function<Result<void>(const std::vector<nlohmann::json>& args, UndoContext&)> undo_batch;

  // Optional. Removes leftovers of a crashed run that the journal does not
  // know (things that carry the scenario's mark); run by preclean and by
  // `rxerun cleanup` in rxerun's own namespace and in every namespace the
  // scenario names. Returns what it removed, in words.
  std::function<Result<std::vector<std::string>>(UndoContext&)> preclean;

  // Optional. What a step of this kind adds to the picture of the lab
  // (`rxerun graph`, engine/picture.h): namespaces, interfaces, wires, RDMA
  // devices, faults, read from its parameters alone (as written; a
  // {{steps.X.Y}} reference stays as it is) and its `netns:`. It runs
  // nothing and touches nothing. A kind without one adds nothing.
  std::function<void(const nlohmann::json& params, const StepSpec& step, LabPicture& picture)> picture;

  // The plugin file the kind came from (an absolute path; "" for a kind
  // built into rxerun). Its journal entries carry it, so that a later
  // `rxerun cleanup` can load the plugin to undo them.
  std::string plugin;

  // A pair kind's parameters that name the node (lab VM) of each end, as
  // dotted paths into its parameters: rping {"server_node", "client_node"},
  // perftest and verbs {"server.node", "client.node"}. The loader checks that
  // each names a declared node (and refuses them in a scenario without
  // nodes); an end without one runs on the step's `node:`. Empty for every
  // other kind (engine/nodes.h: step_nodes). Not in the plugin SDK.
  std::vector<std::string> end_nodes;
};

}  // namespace rxerun
