#pragma once
// Named network namespaces, as `ip netns` makes them (a bind mount under
// /run/netns), and entering one for the duration of a scope: setns with
// RAII, back to the original namespace on every path.

#include <memory>
#include <string>
#include <vector>

#include "engine/result.h"

namespace rxerun::sys {

class NetnsScope {
 public:
  virtual ~NetnsScope() = default;  // returns to the namespace it left
};

class Netns {
 public:
  virtual ~Netns() = default;
  // Error code ENOENT when there is no such namespace.
  virtual Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) = 0;

  virtual Result<bool> exists(const std::string& name) = 0;
  // A new namespace bound at /run/netns/NAME, its loopback up. EEXIST when taken.
  virtual Result<void> create(const std::string& name) = 0;
  // Unbinds and removes /run/netns/NAME; the kernel frees the namespace (and
  // its interfaces) once no process is left in it. ENOENT when absent.
  virtual Result<void> remove(const std::string& name) = 0;
};

class RealNetns final : public Netns {
 public:
  Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) override;
  Result<bool> exists(const std::string& name) override;
  Result<void> create(const std::string& name) override;
  Result<void> remove(const std::string& name) override;
};

}  // namespace rxerun::sys
