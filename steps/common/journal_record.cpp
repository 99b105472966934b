#include "steps/common/journal_record.h"

#include <algorithm>

namespace rxerun::steps {

std::string record_op(JournalArgs& a, const std::vector<std::string_view>& ops, std::string_view inferred) {
  if (!a.has("op") && !inferred.empty()) return std::string(inferred);
  const std::string op = a.text("op");
  if (!a.ok()) return {};
  if (std::find(ops.begin(), ops.end(), op) != ops.end()) return op;
  std::string names;
  for (auto it = ops.begin(); it != ops.end(); ++it)
    names += (it == ops.begin() ? "" : it + 1 == ops.end() ? " or " : ", ") + std::string(*it);
  a.refuse("op", names);
  return {};
}

}  // namespace rxerun::steps
