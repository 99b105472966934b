#pragma once
// netem through libnl-route's qdisc API.

#include "sys/qdisc.h"

namespace rxerun::sys {

class RtnlQdiscs final : public Qdiscs {
 public:
  Result<bool> netem_available() override;
  Result<std::optional<std::string>> root_kind(const std::string& dev) override;
  Result<void> add_netem(const std::string& dev, const NetemSpec& spec) override;
  Result<QdiscStats> root_stats(const std::string& dev) override;
  Result<void> remove_root(const std::string& dev) override;
};

}  // namespace rxerun::sys
