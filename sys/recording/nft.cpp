#include "sys/recording/nft.h"

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

Result<nlohmann::json> RecordingNft::run(const std::string& command) {
  log_.record("nftables: " + command, shell_join({"nft", command}));
  return models_[log_.netns()].apply(command);
}

}  // namespace rxerun::sys
