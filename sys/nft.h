#pragma once
// nftables, typed: the tables, base chains and counted rules of the block
// kind, in rxerun's own tables. The real implementation (sys/nft_lib.h)
// renders each operation as the nft command a person would type and runs it
// through libnftables; `plan` shows the same text (nft_command()). Nothing
// here flushes or lists the host's ruleset beyond the tables named.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

// A rule with a counter: what it matches, what it does, and its comment
// (which names it: a handle is known only once the rule exists).
struct NftRule {
  std::string chain;    // the base chain: "input", "output" or "forward"
  std::string iifname;  // "" any
  std::string oifname;  // "" any
  std::string proto;    // "udp", "tcp", "icmp", "icmpv6", ...; "" any
  std::optional<std::uint16_t> dport;
  std::string verdict;  // "drop" or "reject"
  std::string comment;
  // As a listing reads them back (0 before it exists). A listing reads back
  // the chain, comment, handle and counter, not the match.
  std::uint64_t handle = 0;
  std::uint64_t packets = 0, bytes = 0;
};

// A table as listed: its chains, its rules, and how many other objects
// (sets, maps, ...) it holds, which rxerun does not reason about.
struct NftTable {
  std::vector<std::string> chains;
  std::vector<NftRule> rules;
  int others = 0;
};

class Nft {
 public:
  virtual ~Nft() = default;
  // nullopt when there is no such table. Errors carry libnftables' message.
  virtual Result<std::optional<NftTable>> table(const std::string& family, const std::string& name) = 0;
  // Adding what exists is no error (nft's `add`).
  virtual Result<void> add_table(const std::string& family, const std::string& name) = 0;
  // A filter base chain named after its hook, priority 0, policy accept.
  virtual Result<void> add_base_chain(const std::string& family, const std::string& table, const std::string& hook) = 0;
  // Returns the new rule's handle (0 when not known: `plan`). ENOENT when
  // the table or chain is missing.
  virtual Result<std::uint64_t> add_rule(const std::string& family, const std::string& table, const NftRule& rule) = 0;
  // ENOENT when absent; deleting a chain that holds rules is EBUSY.
  virtual Result<void> delete_rule(const std::string& family, const std::string& table, const std::string& chain,
                                   std::uint64_t handle) = 0;
  virtual Result<void> delete_chain(const std::string& family, const std::string& table, const std::string& chain) = 0;
  virtual Result<void> delete_table(const std::string& family, const std::string& table) = 0;
};

// The rule as nft spells it after `add rule FAMILY TABLE CHAIN`:
// `iifname "vB" udp dport 4791 counter drop comment "rxerun step x"`.
std::string nft_rule_text(const NftRule& rule);

// The nft commands of the operations above, as a person would type them
// after `nft` (what the real implementation runs and `plan` shows).
namespace nft_command {
std::string list_table(const std::string& family, const std::string& table);
std::string add_table(const std::string& family, const std::string& table);
std::string add_base_chain(const std::string& family, const std::string& table, const std::string& hook);
std::string add_rule(const std::string& family, const std::string& table, const NftRule& rule);
std::string delete_rule(const std::string& family, const std::string& table, const std::string& chain,
                        std::uint64_t handle);
std::string delete_chain(const std::string& family, const std::string& table, const std::string& chain);
std::string delete_table(const std::string& family, const std::string& table);
}  // namespace nft_command

}  // namespace rxerun::sys
