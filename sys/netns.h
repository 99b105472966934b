#pragma once
// Entering a named network namespace (/run/netns/NAME, as `ip netns` makes
// them) for the duration of a scope: setns with RAII, back to the original
// namespace on every path.

#include <memory>
#include <string>

#include "engine/result.h"

namespace rxerun::sys {

class NetnsScope {
 public:
  virtual ~NetnsScope() = default;  // returns to the namespace it left
};

class Netns {
 public:
  virtual ~Netns() = default;
  virtual Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) = 0;
};

class RealNetns final : public Netns {
 public:
  Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) override;
};

}  // namespace rxerun::sys
