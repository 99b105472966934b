#pragma once
// nftables through libnftables: rxerun writes nft commands (the same text a
// person would type after `nft`) and reads JSON back. All of a run's rules
// live in rxerun's own tables; nothing here flushes or lists the host's
// ruleset beyond those tables.

#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace rxerun::sys {

class Nft {
 public:
  virtual ~Nft() = default;
  // Runs one nft command (e.g. "add rule inet rxerun-lab input udp dport 4791 counter drop")
  // with JSON output, echo and handles on; returns the parsed output (null when none).
  // Errors carry libnftables' own message.
  virtual Result<nlohmann::json> run(const std::string& command) = 0;
};

}  // namespace rxerun::sys
