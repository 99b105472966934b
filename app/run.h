#pragma once
// `rxerun run`: one scenario, or a suite (several files, directories, a
// kernel matrix), on the host or in the lab VM, one boot per kernel, up to
// -j lab VMs at once; a summary and the reports at the end. The options are
// read and every scenario loaded before anything runs; the runs are planned
// by a pure function (app/run_plan.h), then carried out lane by lane
// (app/run_lanes.h). Also the pieces `cleanup` and the lanes share with it.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/placement.h"
#include "app/run_options.h"
#include "engine/journal.h"
#include "engine/loader.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"

namespace rxerun {

int cmd_run(const RunCommandOptions& options, Registry& registry);

// Whether to colour: --color, NO_COLOR, TERM=dumb, a terminal on stdout.
bool want_color(const std::string& mode);
// Whether a step that waits shows a live status line: on a terminal
// (TERM other than dumb) and without -q.
bool want_progress(const RunCommandOptions& options);
// The terminal's look from -v/-q/--color, and the status line.
TerminalStyle terminal_style(const RunCommandOptions& options);
// The --var and --var-file names that no scenario a command loads reads:
// each scenario's (LoadResult::unused_vars) kept while every one so far
// has it, shown on stderr once, after the last.
class UnusedVars {
 public:
  void add(const std::map<std::string, std::string>& unused);
  void show() const;

 private:
  std::optional<std::map<std::string, std::string>> unused_;
};

// What load() is asked besides the file: where the lab would run (for the
// lab check, engine/lab_check.h), where its problems go, and where the
// variables it does not read go.
struct LoadRequest {
  PlacementRequest where;           // --vm, --host, --kernel
  Diagnostics* problems = nullptr;  // set: the lab check's problems go here (plan shows them in place)
  UnusedVars* unused = nullptr;     // set: the variables it does not read go here; unset: shown now
  // The lab VM's guest: the host checked the lab for its kernels already,
  // and this run says what its own kernel refuses.
  bool in_guest = false;
};

// Loads and checks one file, and the plugins it names, then the lab as a
// whole; prints its diagnostics to stderr. `plugins_may_fail` (cleanup): a
// plugin that cannot be loaded is a warning, and the lab is not checked
// (cleanup goes on whatever the scenario holds). Unused variables are
// shown neither way when common.handed_on.
std::optional<Scenario> load(const std::string& file, Registry& registry, const CommonOptions& common,
                             bool plugins_may_fail = false, const LoadRequest& request = {});
// The same, its diagnostics and warnings returned instead of printed.
LoadResult load_result(const std::string& file, Registry& registry, const CommonOptions& common,
                       bool plugins_may_fail = false, const LoadRequest& request = {});
// What load() does after load_result(): prints the result's diagnostics
// and warnings, and returns its scenario when there is no diagnostic.
std::optional<Scenario> loaded(LoadResult r, const CommonOptions& common, const LoadRequest& request = {});
// A report's `host`: this machine's facts (kernel, hostname, ...) and this
// rxerun's version.
nlohmann::json host_record();
// Now, in UTC, as ISO 8601 ("2026-12-05T16:21:52Z"): a report's started_at.
std::string now_iso8601();
// The scenario's journal, locked for this process; prints why not.
std::optional<Journal> open_journal(const std::string& scenario);

}  // namespace rxerun
