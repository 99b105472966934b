#pragma once
// nftables through libnftables (nft_ctx with JSON output, echo and handles).
// A new context per call: libnftables contexts hold a netlink socket bound
// to the namespace they were created in.

#include "sys/nft.h"

namespace rxerun::sys {

class LibNft final : public Nft {
 public:
  Result<nlohmann::json> run(const std::string& command) override;

 private:
  Result<nlohmann::json> run_once(const std::string& command);
};

}  // namespace rxerun::sys
