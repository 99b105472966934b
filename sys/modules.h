#pragma once
// Kernel modules: what modprobe and modprobe -r do, natively (libkmod in
// the real implementation, sys/kernel_modules.h; never a modprobe process).

#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

class Modules {
 public:
  virtual ~Modules() = default;

  // Loaded, or built into the kernel.
  virtual Result<bool> loaded(const std::string& name) = 0;
  // What loading `name` would load: the module and those of its dependencies
  // not loaded yet, users before what they use (the order to unload them
  // in); empty when it is loaded. ENOENT: this kernel has no such module.
  virtual Result<std::vector<std::string>> to_load(const std::string& name) = 0;
  // Loads the module and its dependencies, `options` ("nr_devices=0
  // queue_mode=2", as modprobe takes them after the name) for the module
  // itself. EPERM without CAP_SYS_MODULE; ENOENT when the kernel has no such
  // module; EINVAL when it refuses an option.
  virtual Result<void> load(const std::string& name, const std::string& options) = 0;
  // A loaded module's parameters that it shows (/sys/module/NAME/parameters),
  // by name; `name` with dashes or underscores alike. ENOENT when it is not
  // loaded.
  virtual Result<std::map<std::string, std::string>> parameters(const std::string& name) = 0;
  // Unloads one module. EBUSY (or EAGAIN) while it is in use; ENOENT when it
  // is not loaded; EPERM when it is built in.
  virtual Result<void> unload(const std::string& name) = 0;
};

}  // namespace rxerun::sys
