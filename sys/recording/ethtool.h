#pragma once
// Offload features for `rxerun plan` (sys/recording/system.h): unknown in a
// plan, reads return none, so steps request everything asked for.

#include "sys/ethtool.h"

namespace rxerun::sys {

class ActionLog;

class RecordingEthtool final : public Ethtool {
 public:
  explicit RecordingEthtool(ActionLog& log) : log_(log) {}
  Result<std::map<std::string, Feature>> features(const std::string& dev) override;
  Result<std::map<std::string, bool>> set_features(const std::string& dev,
                                                   const std::map<std::string, bool>& wanted) override;

 private:
  ActionLog& log_;
};

}  // namespace rxerun::sys
