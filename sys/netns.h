#pragma once
// Named network namespaces, as `ip netns` makes them (a bind mount under
// /run/netns), and entering one for the duration of a scope: setns with
// RAII, back to the original namespace on every path.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

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

  // What tells a namespace from another one made later under its name: the
  // inode of its nsfs file (stat of /run/netns/NAME), unique while the
  // namespace lives. ENOENT when there is no such namespace; 0 when unknown
  // (`plan`).
  virtual Result<std::uint64_t> inode(const std::string& name) = 0;
  // The inode of the calling thread's namespace (/proc/thread-self/ns/net).
  virtual Result<std::uint64_t> current_inode() = 0;
};

class RealNetns final : public Netns {
 public:
  Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) override;
  Result<bool> exists(const std::string& name) override;
  Result<void> create(const std::string& name) override;
  Result<void> remove(const std::string& name) override;
  Result<std::uint64_t> inode(const std::string& name) override;
  Result<std::uint64_t> current_inode() override;
};

}  // namespace rxerun::sys
