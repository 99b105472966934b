#pragma once
// Features over the ethtool generic netlink family (ETHTOOL_MSG_FEATURES_GET
// / _SET) with libnl-genl; opens its socket per call (see links_rtnl.h).

#include "sys/ethtool.h"

namespace rxerun::sys {

class GenlEthtool final : public Ethtool {
 public:
  Result<std::map<std::string, Feature>> features(const std::string& dev) override;
  Result<void> set_features(const std::string& dev, const std::map<std::string, bool>& wanted) override;
};

}  // namespace rxerun::sys
