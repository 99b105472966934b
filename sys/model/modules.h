#pragma once
// Kernel modules in the model (sys/model/kernel.h): the modules this kernel
// has with their dependencies (as modules.dep lists them: all of them), the
// loaded ones and their parameters. A module another loaded module depends
// on cannot go (EBUSY); a driver that goes takes its devices along (the
// `unloaded` hook: sys/model/rdma.h).

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sys/model/kernel.h"
#include "sys/modules.h"

namespace rxerun::sys {

class ModelModules final : public Modules {
 public:
  explicit ModelModules(ModelKernel& k) : k_(k) {}
  Result<bool> loaded(const std::string& name) override;
  // ENOENT for a module `known` does not list (open world: its
  // dependencies are not known, the module alone is listed).
  Result<std::vector<std::string>> to_load(const std::string& name) override;
  // EINVAL for a parameter `known_parameters` does not list for it (open
  // world: any); a bool parameter shows as Y or N, whatever it was given as.
  Result<void> load(const std::string& name, const std::string& options) override;
  Result<std::map<std::string, std::string>> parameters(const std::string& name) override;
  // ENOENT when not loaded, EBUSY while a loaded module depends on it.
  Result<void> unload(const std::string& name) override;

  // This kernel's modules -> what they depend on.
  std::map<std::string, std::vector<std::string>> known;
  std::set<std::string> live;  // loaded (live, in the kernel's terms)
  // module -> the parameters it has, with their defaults.
  std::map<std::string, std::map<std::string, std::string>> known_parameters;
  // module -> its parameters while loaded.
  std::map<std::string, std::map<std::string, std::string>> shown_parameters;
  // Open world: whether the host has a module loaded (reading /sys/module changes nothing).
  std::function<bool(const std::string&)> host_loaded;
  // Called with each module unloaded.
  std::function<void(const std::string&)> unloaded;

 private:
  bool in_use(const std::string& name) const;
  ModelKernel& k_;
  std::set<std::string> gone_;  // open world: the host's, unloaded by the plan
};

}  // namespace rxerun::sys
