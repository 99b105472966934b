#pragma once
// Loading and unloading kernel modules through libkmod (what modprobe does,
// without running it), in the running kernel's module tree
// (/lib/modules/RELEASE). Used by HostRdma; not part of sys/'s interface.

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

struct kmod_ctx;

namespace rxerun::sys {

class KernelModules {
 public:
  // Reads the module tree's indexes once.
  static Result<KernelModules> open();

  KernelModules(KernelModules&&) noexcept;
  KernelModules& operator=(KernelModules&&) noexcept;
  ~KernelModules();

  // Loaded (live or on its way in) or built into the kernel.
  Result<bool> loaded(const std::string& name);
  // The module and those of its dependencies not loaded yet, the module
  // first (users before what they use). Empty when it is loaded. ENOENT: no
  // such module in this kernel.
  Result<std::vector<std::string>> to_load(const std::string& name);
  // With its dependencies (and softdeps), as modprobe does; `options` for
  // the module itself (after those of modprobe.d). Install commands of
  // modprobe.d are not run: rxerun starts no shell behind the user's back.
  Result<void> load(const std::string& name, const std::string& options);
  // The module alone. EBUSY/EAGAIN in use, ENOENT not loaded, EPERM built in.
  Result<void> unload(const std::string& name);

 private:
  KernelModules() = default;
  kmod_ctx* ctx_ = nullptr;
};

}  // namespace rxerun::sys
