#pragma once
// nftables in the model (sys/model/kernel.h), per namespace: tables, their
// base chains and rules, with handles numbered as the kernel does (per
// table, chains and rules from one counter, so the first rule of a fresh
// table with one chain is handle 2) and the kernel's refusals (ENOENT for
// what is not there, EBUSY for a chain that still holds rules). Each
// operation is logged as the nft command sys/nft.h renders.

#include <map>
#include <string>
#include <vector>

#include "sys/model/netns.h"
#include "sys/nft.h"

namespace rxerun::sys {

class ModelNft final : public Nft, public NetnsScoped {
 public:
  struct Table {
    std::uint64_t handle = 0;
    std::vector<std::string> chains;
    std::vector<NftRule> rules;
    int others = 0;  // sets, maps, ... (put there by a test)
    std::uint64_t next_handle = 1;
  };

  explicit ModelNft(ModelKernel& k) : k_(k) {}
  Result<std::optional<NftTable>> table(const std::string& family, const std::string& name) override;
  Result<void> add_table(const std::string& family, const std::string& name) override;
  Result<void> add_base_chain(const std::string& family, const std::string& table, const std::string& hook) override;
  Result<std::uint64_t> add_rule(const std::string& family, const std::string& table, const NftRule& rule) override;
  Result<void> delete_rule(const std::string& family, const std::string& table, const std::string& chain,
                           std::uint64_t handle) override;
  Result<void> delete_chain(const std::string& family, const std::string& table, const std::string& chain) override;
  Result<void> delete_table(const std::string& family, const std::string& table) override;
  void netns_deleted(const std::string& netns) override { by_netns.erase(netns); }

  // The rule carrying `comment` in a table of rxerun's own namespace
  // ("inet rxerun-test"); null when none. Tests move its counters as
  // traffic would.
  NftRule* find_rule(const std::string& table, const std::string& comment);

  std::map<std::string, std::map<std::string, Table>> by_netns;  // netns -> "FAMILY NAME" -> table
  std::map<std::string, Table>& tables = by_netns[""];

 private:
  // The table, or ENOENT (after the fault script and the log).
  Result<Table*> existing(const char* op, const std::string& family, const std::string& name,
                          const std::string& command);
  ModelKernel& k_;
  std::uint64_t next_table_handle_ = 1;
};

}  // namespace rxerun::sys
