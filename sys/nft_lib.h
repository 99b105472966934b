#pragma once
// nftables through libnftables (nft_ctx with JSON output, echo and handles),
// each operation as the nft command sys/nft.h renders. A new context per
// call: libnftables contexts hold a netlink socket bound to the namespace
// they were created in.

#include <nlohmann/json.hpp>

#include "sys/nft.h"

namespace rxerun::sys {

class LibNft final : public Nft {
 public:
  Result<std::optional<NftTable>> table(const std::string& family, const std::string& name) override;
  Result<void> add_table(const std::string& family, const std::string& name) override;
  Result<void> add_base_chain(const std::string& family, const std::string& table, const std::string& hook) override;
  Result<std::uint64_t> add_rule(const std::string& family, const std::string& table, const NftRule& rule) override;
  Result<void> delete_rule(const std::string& family, const std::string& table, const std::string& chain,
                           std::uint64_t handle) override;
  Result<void> delete_chain(const std::string& family, const std::string& table, const std::string& chain) override;
  Result<void> delete_table(const std::string& family, const std::string& table) override;

  // One nft command with JSON output, echo and handles on; the parsed output
  // (null when none). Errors carry libnftables' own message.
  Result<nlohmann::json> run(const std::string& command);

 private:
  Result<nlohmann::json> run_once(const std::string& command);
};

// What a listing of one table holds ({"nftables": [...]}, as `nft -j -a list
// table` prints it); the handle an `add rule` echoed back (0 when none).
NftTable nft_table_from_json(const nlohmann::json& listing);
std::uint64_t nft_echoed_handle(const nlohmann::json& echo);

}  // namespace rxerun::sys
