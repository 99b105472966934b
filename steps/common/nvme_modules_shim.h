#pragma once
// TEMPORARY: the shared module loading (steps/common/modules.h) is landing
// on main; this stand-in has its announced API so that the NVMe kinds build
// meanwhile, and goes at the merge.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "engine/step.h"

namespace rxerun::steps {

struct ModuleRequest {
  std::string name;
  std::string params;
  bool optional = false;
};

Result<std::vector<std::string>> load_modules(StepContext& ctx, const std::vector<ModuleRequest>& wanted,
                                              const std::string& once, std::vector<std::string>* hints);
Result<nlohmann::json> unload_modules(const nlohmann::json& args, UndoContext& ctx,
                                      const std::function<Result<std::vector<std::string>>()>& still_used);

}  // namespace rxerun::steps
