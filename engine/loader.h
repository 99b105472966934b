#pragma once
// YAML -> Scenario, with every problem reported as FILE:LINE:COL. The loader
// never touches the host; invalid input yields diagnostics, never a crash.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "engine/diag.h"
#include "engine/model.h"
#include "engine/registry.h"

namespace rxerun {

struct LoadOptions {
  std::map<std::string, std::string> var_overrides;  // --var KEY=VALUE
  // --var-file FILE, in order: each a YAML mapping of names to values, over
  // `vars:` and under var_overrides. A problem in one is a diagnostic at
  // FILE:LINE:COL of that file.
  std::vector<std::string> var_files;
  // Loads a plugin the scenario names in `plugins:` (its absolute path), so
  // that the steps after it may use its kinds; an error is a diagnostic at
  // the path. Unset: the paths are checked and kept, nothing is loaded.
  std::function<Result<void>(const std::string& path)> load_plugin;
  // `rxerun cleanup`: a plugin that cannot be loaded is a warning, and a
  // step of a kind nobody knows is kept without its parameters (its `netns`
  // still counts), so that cleanup can go on. (Without this, such steps are
  // not reported on top of the plugin's error.)
  bool plugins_may_fail = false;
};

struct LoadResult {
  std::optional<Scenario> scenario;  // set only when diagnostics is empty
  Diagnostics diagnostics;
  Diagnostics warnings;  // plugins that could not be loaded, under plugins_may_fail
  // The names of --var and --var-file the scenario never reads, each with
  // the warning to show ("vars.yaml:3:1: warning: no scenario reads ...");
  // a command that loads several scenarios shows those that none reads.
  std::map<std::string, std::string> unused_vars;
  // With diagnostics: what could be read of a file that is one YAML
  // document, every step as far as it was right (`plan` shows the
  // diagnostics under their steps). Never to be run.
  std::optional<Scenario> partial;
};

// Reads and checks a scenario file. Refuses directories, unreadable files,
// files over kMaxScenarioBytes, and bytes that are not UTF-8 text.
LoadResult load_scenario(const std::string& path, const Registry& registry, const LoadOptions& options);

// The same from text already in memory (`file` names it in diagnostics).
LoadResult load_scenario_text(std::string_view text, const std::string& file, const Registry& registry,
                              const LoadOptions& options);

inline constexpr std::size_t kMaxScenarioBytes = 1 << 20;  // 1 MiB: scenarios are small files

}  // namespace rxerun
