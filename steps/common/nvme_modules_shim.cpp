#include "steps/common/nvme_modules_shim.h"

#include <algorithm>
#include <cerrno>

#include "base/strings.h"
#include "steps/common/journal_args.h"

namespace rxerun::steps {

Result<std::vector<std::string>> load_modules(StepContext& ctx, const std::vector<ModuleRequest>& wanted,
                                              const std::string& once, std::vector<std::string>* hints) {
  auto& rdma = ctx.sys().rdma;
  std::vector<std::string> heads, deps, loading;
  for (const auto& m : wanted) {
    auto need = rdma.modules_to_load(m.name);
    if (!need) {
      if (m.optional) {
        hints->push_back(need.error().message);
        continue;
      }
      return need.error();
    }
    if (need->empty()) continue;
    loading.push_back(m.name);
    for (const auto& n : *need) {
      if (std::count(heads.begin(), heads.end(), n) || std::count(deps.begin(), deps.end(), n)) continue;
      (n == m.name ? heads : deps).push_back(n);
    }
  }
  if (loading.empty()) return std::vector<std::string>{};
  std::vector<std::string> all = heads;
  all.insert(all.end(), deps.begin(), deps.end());
  if (auto r = ctx.will_change({{"modules", all}}, "unload " + join(heads, ", ") + " (loaded by this run) " + once); !r)
    return r.error();
  for (const auto& m : loading)
    if (auto r = rdma.load_module(m); !r) return r.error();
  return loading;
}

Result<nlohmann::json> unload_modules(const nlohmann::json& args, UndoContext& ctx,
                                      const std::function<Result<std::vector<std::string>>()>& still_used) {
  JournalArgs a(args, ctx);
  std::vector<std::string> remaining = a.texts("modules");
  if (!a.ok()) return a.error();
  auto users = still_used();
  if (!users) return users.error();
  if (!users->empty()) return nlohmann::json{{"modules_left", remaining}, {"left_for", *users}};
  auto& sys = ctx.sys();
  std::vector<std::string> unloaded;
  for (int round = 1; round <= 10 && !remaining.empty(); ++round) {
    for (bool progress = true; progress && !remaining.empty();) {
      progress = false;
      for (auto it = remaining.begin(); it != remaining.end();) {
        auto r = sys.rdma.unload_module(*it);
        const int code = r ? 0 : r.error().code;
        if (code == EBUSY || code == EAGAIN) {
          ++it;
          continue;
        }
        if (code != 0 && code != ENOENT && code != EPERM) return r.error();
        if (code == 0) unloaded.push_back(*it);
        it = remaining.erase(it);
        progress = true;
      }
    }
    if (remaining.empty()) break;
    if (sys.clock.wait_until(sys.clock.now() + Duration{200}, sys.interrupt) == sys::WaitResult::Interrupted) break;
  }
  return nlohmann::json{{"modules_unloaded", unloaded}, {"modules_left", remaining}};
}

}  // namespace rxerun::steps
