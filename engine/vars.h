#pragma once
// {{name}} variables (from `vars:` and --var) and {{steps.NAME.FACT}}
// references to the facts of earlier steps.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace rxerun {

using Vars = std::map<std::string, std::string>;

// Returns a fact of an earlier step, or why that step did not report it
// ("reported: sent, acked", "'acls' has 1 item").
using FactLookup = std::function<Result<nlohmann::json>(const std::string& step, const std::string& fact)>;

struct StepReference {
  std::string step;
  std::string fact;
};

// What expansion may produce. Variables cannot hold "{{", so nothing nests,
// but one large `vars:` value or --var used many times would still grow
// memory without bound: a value may hold 64 KiB once expanded, and the
// values substituted over a whole scenario may total 4 MiB. Checked before
// each substitution is appended, so the memory stays within the caps.
constexpr std::size_t kMaxExpandedValue = 64 * 1024;
constexpr std::size_t kMaxExpandedScenario = 4 * 1024 * 1024;

// The bytes substituted so far in one scenario, against kMaxExpandedScenario.
struct ExpansionBudget {
  std::size_t used = 0;
  int refused = 0;  // expansions refused for crossing the cap
};

// Expands {{name}} from `vars`. {{steps.NAME.FACT}} is expanded through
// `facts` when given and left as written otherwise; so is a literal,
// {{ 'TEXT' }} or {{ "TEXT" }}, which stands for TEXT as it is (a value's
// '{{': {{ '{{' }}). Without `facts` this is the loader's pass, and a value
// that reads no facts then goes through resolve_literals(); with them, the
// run time's. Whitespace inside the braces is allowed ({{ a }}). Errors:
// "undefined variable 'x'", an
// unterminated "{{", an empty name, a fact missing at run time, a result
// over kMaxExpandedValue, or substitutions that take `budget` (when given)
// past kMaxExpandedScenario.
Result<std::string> expand(std::string_view text, const Vars& vars, const FactLookup* facts = nullptr,
                           ExpansionBudget* budget = nullptr);

// The literals of a value that holds no {{steps.NAME.FACT}} (the run
// time's pass of expand(), with no variables and no facts to read).
Result<std::string> resolve_literals(std::string_view text);
// The same for every string inside `value`.
Result<void> resolve_literals(nlohmann::json& value);

// expand() applied to every string inside `value`, recursively (keys stay).
Result<void> expand_json(nlohmann::json& value, const Vars& vars, const FactLookup* facts = nullptr,
                         ExpansionBudget* budget = nullptr);

// The {{steps.NAME.FACT}} references in `text`, in order.
std::vector<StepReference> step_references(std::string_view text);

// The {{name}} variables `text` reads, in order (not the steps' facts, not
// literals).
std::vector<std::string> variable_references(std::string_view text);

// True when `value` (recursively) still holds a {{steps...}} reference.
bool has_step_references(const nlohmann::json& value);

}  // namespace rxerun
