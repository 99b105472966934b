#include "steps/common/modules.h"

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "base/strings.h"
#include "base/try.h"

namespace rxerun::steps {

namespace {

// Unload attempts while a module is busy, and the pause between them
// (blktests tries ten times): the one that must go gets them all.
constexpr int kMustGoTries = 10;
constexpr int kOtherTries = 3;
constexpr Duration kUnloadPause{200};

bool module_listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// Bool parameters show as Y or N; a user writes 1, y, true, on.
std::string shown_as(const std::string& given, const std::string& shown) {
  if (shown != "Y" && shown != "N") return given;
  std::string v = given;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "1" || v == "y" || v == "yes" || v == "true" || v == "on") return "Y";
  if (v == "0" || v == "n" || v == "no" || v == "false" || v == "off") return "N";
  return given;
}

// A module loaded already cannot take other parameters: an error when it
// shows one with another value, a hint when it does not show it.
Result<void> check_parameters(StepContext& ctx, const ModuleRequest& m, std::vector<std::string>* hints) {
  if (m.params.empty()) return {};
  RXERUN_TRY_ASSIGN(const auto shown, ctx.sys().modules.parameters(m.name));
  for (const auto& word : split_words(m.params)) {
    const auto eq = word.find('=');
    const std::string key = word.substr(0, eq);
    const std::string value = eq == std::string::npos ? "1" : word.substr(eq + 1);
    auto it = shown.find(key);
    if (it == shown.end()) {
      hints->push_back("module " + m.name + " was loaded already (not by this run); it does not show " + key +
                       ", so whether it has " + word + " cannot be told");
      continue;
    }
    if (shown_as(value, it->second) != it->second)
      return make_error("module " + m.name + " is loaded already (not by this run) with " + key + "=" + it->second +
                            "; it cannot take " + key + "=" + value +
                            " without being unloaded first (a loaded module keeps its parameters)",
                        EEXIST);
  }
  return {};
}

}  // namespace

bool is_module_name(std::string_view m) {
  return !m.empty() && m.size() < 64 && std::all_of(m.begin(), m.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

Result<std::vector<std::string>> load_modules(StepContext& ctx, const std::vector<ModuleRequest>& wanted,
                                              const std::string& once, std::vector<std::string>* hints) {
  auto& modules = ctx.sys().modules;
  std::vector<std::string> heads, deps;  // unload order: the modules asked for, then what they pulled in
  std::vector<const ModuleRequest*> to_load;
  for (const auto& m : wanted) {
    auto need = modules.to_load(m.name);
    if (!need) {
      if (need.error().code == ENOENT && m.optional) {
        hints->push_back("this kernel has no " + m.name + (m.missing.empty() ? "" : ": " + m.missing));
        continue;
      }
      return need.error();
    }
    if (need->empty()) {
      RXERUN_TRY(check_parameters(ctx, m, hints));
      continue;
    }
    to_load.push_back(&m);
    for (const auto& n : *need) {
      if (module_listed(heads, n) || module_listed(deps, n)) continue;
      (n == need->front() ? heads : deps).push_back(n);
    }
  }
  std::vector<std::string> loaded;
  if (to_load.empty()) return loaded;
  std::vector<std::string> all = heads;
  all.insert(all.end(), deps.begin(), deps.end());
  std::string summary = "unload " + join(heads, ", ");
  if (!deps.empty())
    summary += " and " + std::to_string(deps.size()) + (deps.size() == 1 ? " module it" : " modules they") + " needed";
  summary += " (loaded by this run)";
  if (!once.empty()) summary += " " + once;
  RXERUN_TRY(ctx.will_change(ModulesRecord{all}.to_args(), summary));
  for (const auto* m : to_load) {
    RXERUN_TRY(modules.load(m->name, m->params));
    loaded.push_back(m->name);
  }
  return loaded;
}

nlohmann::json ModulesRecord::to_args() const {
  return {{"op", kOp}, {"modules", modules}};
}

Result<ModulesRecord> ModulesRecord::read(JournalArgs& a) {
  ModulesRecord r{a.texts("modules")};
  if (a.ok() &&
      !std::all_of(r.modules.begin(), r.modules.end(), [](const std::string& m) { return is_module_name(m); }))
    a.refuse("modules", "a list of kernel module names");
  if (!a.ok()) return a.error();
  return r;
}

Result<nlohmann::json> unload_modules(const ModulesRecord& record, UndoContext& ctx, const ModuleUsers& users,
                                      std::string_view must_go) {
  std::vector<std::string> remaining = record.modules;
  auto& sys = ctx.sys();
  if (users) {
    RXERUN_TRY_ASSIGN(const auto in_use, users(ctx));
    // Somebody else's still needs them (this run's own went first).
    if (!in_use.empty()) return nlohmann::json{{"modules_left", remaining}, {"left_for", in_use}};
  }
  std::vector<std::string> unloaded;
  const auto must_go_left = [&] { return !must_go.empty() && module_listed(remaining, std::string(must_go)); };
  for (int round = 1;; ++round) {
    // Passes without a pause while they make progress: a module goes once its users have.
    for (bool progress = true; progress && !remaining.empty();) {
      progress = false;
      for (auto it = remaining.begin(); it != remaining.end();) {
        auto r = sys.modules.unload(*it);
        const int code = r ? 0 : r.error().code;
        if (code == EBUSY || code == EAGAIN) {
          ++it;
          continue;
        }
        if (code != 0 && code != ENOENT && code != EPERM) return r.error();  // ENOENT gone, EPERM built in
        if (code == 0) unloaded.push_back(*it);
        it = remaining.erase(it);
        progress = true;
      }
    }
    if (remaining.empty()) break;
    // A last try (after the other undos) waits as long as for what must go.
    if (round >= (must_go_left() || ctx.attempt() == UndoTry::Last ? kMustGoTries : kOtherTries)) break;
    if (sys.clock.wait_until(sys.clock.now() + kUnloadPause, sys.interrupt) == sys::WaitResult::Interrupted) break;
  }
  if (must_go_left())
    return make_error(std::string(must_go) + " is still in use after " + std::to_string(kMustGoTries) +
                          " tries (a process holding an RDMA device?): left loaded",
                      EBUSY);
  // In use: maybe by something of the run's that a later undo takes away
  // (an rxe device whose deletion ends the kernel's last RDMA connection
  // over it), so tried again after the others; after that, by somebody else.
  if (!remaining.empty() && ctx.attempt() == UndoTry::First)
    return make_error("still in use: " + join(remaining, ", ") + ", tried again after the other undos", EAGAIN);
  return nlohmann::json{{"modules_unloaded", unloaded}, {"modules_left", remaining}};
}

}  // namespace rxerun::steps
