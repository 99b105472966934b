#pragma once
// Kernel modules through libkmod (what modprobe does, without running it),
// in the running kernel's module tree (/lib/modules/RELEASE): the real
// sys::Modules.

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "sys/modules.h"

struct kmod_ctx;

namespace rxerun::sys {

class KmodModules final : public Modules {
 public:
  KmodModules() = default;
  KmodModules(const KmodModules&) = delete;
  KmodModules& operator=(const KmodModules&) = delete;
  ~KmodModules() override;

  Result<bool> loaded(const std::string& name) override;
  Result<std::vector<std::string>> to_load(const std::string& name) override;
  // With its dependencies (and softdeps), as modprobe does; `options` for
  // the module itself (after those of modprobe.d). Install commands of
  // modprobe.d are not run: rxerun starts no shell behind the user's back.
  Result<void> load(const std::string& name, const std::string& options) override;
  Result<std::map<std::string, std::string>> parameters(const std::string& name) override;
  Result<void> unload(const std::string& name) override;

 private:
  // The module tree's indexes, read once, on first use.
  Result<kmod_ctx*> context();
  kmod_ctx* ctx_ = nullptr;
};

}  // namespace rxerun::sys
