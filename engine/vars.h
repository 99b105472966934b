#pragma once
// {{name}} variables (from `vars:` and --var) and {{steps.NAME.FACT}}
// references to the facts of earlier steps.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/result.h"

namespace rxerun {

using Vars = std::map<std::string, std::string>;

// Returns a fact of an earlier step, or nullopt when that step did not report it.
using FactLookup = std::function<std::optional<nlohmann::json>(const std::string& step, const std::string& fact)>;

struct StepReference {
  std::string step;
  std::string fact;
};

// Expands {{name}} from `vars`. {{steps.NAME.FACT}} is expanded through
// `facts` when given and left as written otherwise. Whitespace inside the
// braces is allowed ({{ a }}). Errors: "undefined variable 'x'", an
// unterminated "{{", an empty name, a fact missing at run time.
Result<std::string> expand(std::string_view text, const Vars& vars, const FactLookup* facts = nullptr);

// expand() applied to every string inside `value`, recursively (keys stay).
Result<void> expand_json(nlohmann::json& value, const Vars& vars, const FactLookup* facts = nullptr);

// The {{steps.NAME.FACT}} references in `text`, in order.
std::vector<StepReference> step_references(std::string_view text);

// True when `value` (recursively) still holds a {{steps...}} reference.
bool has_step_references(const nlohmann::json& value);

}  // namespace rxerun
