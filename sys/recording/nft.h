#pragma once
// nftables for `rxerun plan` (sys/recording/system.h): records every command
// and answers from an in-memory nftables per namespace holding what the
// plan created, so that an undo lists, and then deletes, the rules its step
// added.

#include <map>
#include <string>

#include "sys/model/nft.h"
#include "sys/nft.h"

namespace rxerun::sys {

class ActionLog;

class RecordingNft final : public Nft {
 public:
  explicit RecordingNft(ActionLog& log) : log_(log) {}
  Result<nlohmann::json> run(const std::string& command) override;

 private:
  ActionLog& log_;
  std::map<std::string, NftModel> models_;  // by namespace
};

}  // namespace rxerun::sys
