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

Result<nlohmann::json> dispatch_undo(JournalArgs& a, UndoContext& ctx, std::span<const RecordUndo> table,
                                     std::string_view inferred) {
  std::vector<std::string_view> ops;
  for (const auto& u : table) ops.push_back(u.op);
  const std::string op = record_op(a, ops, inferred);
  for (const auto& u : table)
    if (op == u.op) return u.undo(a, ctx);
  return a.error();  // record_op refused the op
}

}  // namespace rxerun::steps
