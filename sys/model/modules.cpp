#include "sys/model/modules.h"

#include <algorithm>
#include <cerrno>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

Error no_such_module(const std::string& name) {
  return make_error("the kernel has no module " + name, ENOENT);
}

}  // namespace

Result<bool> ModelModules::loaded(const std::string& name) {
  if (live.count(name)) return true;
  return k_.open_world && !gone_.count(name) && host_loaded && host_loaded(name);
}

Result<std::vector<std::string>> ModelModules::to_load(const std::string& name) {
  auto it = known.find(name);
  if (it == known.end() && !k_.open_world) return no_such_module(name);
  std::vector<std::string> out;
  if (*loaded(name)) return out;
  out.push_back(name);
  if (it != known.end())
    for (const auto& dep : it->second)
      if (!*loaded(dep)) out.push_back(dep);
  return out;
}

Result<void> ModelModules::load(const std::string& name, const std::string& options) {
  if (auto f = k_.fault("modules.load", name)) return *f;
  auto it = known.find(name);
  if (it == known.end() && !k_.open_world) return no_such_module(name);
  std::map<std::string, std::string> given;
  for (const auto& o : split_words(options)) {
    const auto eq = o.find('=');
    const std::string key = o.substr(0, eq);
    if (!k_.open_world && (eq == std::string::npos || !known_parameters[name].count(key)))
      return make_error("cannot load module " + name + ": Invalid argument", EINVAL);
    given[key] = eq == std::string::npos ? "1" : o.substr(eq + 1);
  }
  if (*loaded(name)) return {};
  if (it != known.end()) live.insert(it->second.begin(), it->second.end());
  live.insert(name);
  gone_.erase(name);
  auto& shown = shown_parameters[name] = known_parameters[name];
  for (const auto& [k, v] : given) {
    const bool is_bool = shown[k] == "Y" || shown[k] == "N";
    shown[k] = is_bool ? (v == "1" || v == "y" || v == "Y" ? "Y" : "N") : v;
  }
  std::vector<std::string> argv = {"modprobe", name};
  for (const auto& o : split_words(options)) argv.push_back(o);
  k_.did_anywhere("modules", "load kernel module " + name + (options.empty() ? "" : " with " + options),
                  shell_join(argv));
  return {};
}

Result<std::map<std::string, std::string>> ModelModules::parameters(const std::string& name) {
  if (!*loaded(name)) return make_error("module " + name + " is not loaded", ENOENT);
  return shown_parameters[name];  // the host's: not read by a plan
}

bool ModelModules::in_use(const std::string& name) const {
  return std::any_of(live.begin(), live.end(), [&](const std::string& m) {
    auto it = known.find(m);
    return it != known.end() && std::find(it->second.begin(), it->second.end(), name) != it->second.end();
  });
}

Result<void> ModelModules::unload(const std::string& name) {
  if (!*loaded(name)) return make_error("module " + name + " is not loaded", ENOENT);
  if (in_use(name)) return make_error("module " + name + " is in use", EBUSY);
  if (auto f = k_.fault("modules.unload", name)) return *f;  // a module the kernel would let go
  live.erase(name);
  shown_parameters.erase(name);
  if (k_.open_world) gone_.insert(name);
  if (unloaded) unloaded(name);
  k_.did_anywhere("modules", "unload kernel module " + name, shell_join({"modprobe", "-r", name}));
  return {};
}

}  // namespace rxerun::sys
