#pragma once
// An in-memory nftables for the commands rxerun's block kind sends: add,
// list and delete of tables, base chains and rules. It answers with the JSON
// libnftables prints (echo and handles on) and numbers handles the way the
// kernel does: per table, chains and rules from one counter, so the first
// rule of a fresh table with one chain is handle 2.
//
// One namespace's tables (sys/model/links.h says why sys/model/ exists):
// `rxerun plan` answers its reads from it (what the plan itself created, see
// sys/recording/nft.h); the tests' FakeNft is one too.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace rxerun::sys {

class NftModel {
 public:
  struct Rule {
    long long handle = 0;
    std::string chain;
    std::string text;     // as added, without the comment
    std::string comment;  // "" when none
    long long packets = 0;
    long long bytes = 0;
  };
  struct Table {
    long long handle = 0;
    std::vector<std::pair<std::string, std::string>> chains;  // name, hook ("" for a regular chain)
    std::vector<Rule> rules;
    long long next_handle = 1;
  };

  // Applies one nft command; errors as libnftables reports them (ENOENT for
  // what is not there, EBUSY for a chain that still holds rules). Commands it
  // does not model answer null.
  Result<nlohmann::json> apply(const std::string& command);

  // The rule carrying `comment` in a table ("inet rxerun-test"); null when none.
  Rule* find_rule(const std::string& table, const std::string& comment);

  std::map<std::string, Table> tables;  // "FAMILY NAME" -> contents
  long long next_table_handle = 1;
};

}  // namespace rxerun::sys
