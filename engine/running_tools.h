#pragma once
// Programs steps left running (exec background), by step name, for `wait`,
// `revert` and cleanup to take.

#include <map>
#include <memory>
#include <string>

#include "sys/system.h"

namespace rxerun {

using RunningTools = std::map<std::string, std::unique_ptr<sys::RunningTool>>;

// Takes the step's program out of `running`: null when it has none.
inline std::unique_ptr<sys::RunningTool> take_running(RunningTools& running, const std::string& step) {
  auto it = running.find(step);
  if (it == running.end()) return nullptr;
  auto tool = std::move(it->second);
  running.erase(it);
  return tool;
}

}  // namespace rxerun
