#pragma once
// The commands that need no file of their own: `validate`, `plan`,
// `cleanup`, `steps` and `schema`. Each returns rxerun's exit code.

#include <string>
#include <vector>

#include "app/placement.h"
#include "app/run_options.h"
#include "engine/registry.h"

namespace rxerun {

// Loads and checks each file (a directory: its *.yaml, as `run` takes
// them); says ok for each good one, or with `json` prints one document of
// every file's result (docs/running.md, "validate --json").
int cmd_validate(const std::vector<std::string>& files, const CommonOptions& common, bool json,
                 const PlacementRequest& where, Registry& registry);
// Each scenario (a directory: its *.yaml) run against the model in an open
// world: the ordered actions, each with its shell equivalent (app/plan.h).
int cmd_plan(const std::vector<std::string>& files, const CommonOptions& common, const PlacementRequest& where,
             Registry& registry);
// One scenario's plan.
int plan_one(const std::string& file, const CommonOptions& common, const PlacementRequest& where, Registry& registry);
// The Runner's cleanup alone: the journal replayed, the marked leftovers removed.
int cmd_cleanup(const std::string& file, const RunCommandOptions& options, Registry& registry);
// The step kinds, one line each; with a kind, its reference; with
// `markdown`, every kind's reference as Markdown.
int cmd_steps(const std::string& kind, bool markdown, const Registry& registry);
// The JSON Schema of scenario files.
int cmd_schema(const Registry& registry);

}  // namespace rxerun
