#pragma once
// YAML -> Scenario, with every problem reported as FILE:LINE:COL. The loader
// never touches the host; invalid input yields diagnostics, never a crash.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "engine/diag.h"
#include "engine/model.h"
#include "engine/registry.h"

namespace rxerun {

struct LoadOptions {
  std::map<std::string, std::string> var_overrides;  // --var KEY=VALUE
};

struct LoadResult {
  std::optional<Scenario> scenario;  // set only when diagnostics is empty
  Diagnostics diagnostics;
};

// Reads and checks a scenario file. Refuses directories, unreadable files,
// files over kMaxScenarioBytes, and bytes that are not UTF-8 text.
LoadResult load_scenario(const std::string& path, const Registry& registry, const LoadOptions& options);

// The same from text already in memory (`file` names it in diagnostics).
LoadResult load_scenario_text(std::string_view text, const std::string& file, const Registry& registry,
                              const LoadOptions& options);

inline constexpr std::size_t kMaxScenarioBytes = 1 << 20;  // 1 MiB: scenarios are small files

}  // namespace rxerun
