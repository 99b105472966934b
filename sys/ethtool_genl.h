#pragma once
// Features over the ethtool generic netlink family (ETHTOOL_MSG_FEATURES_GET
// / _SET) with libnl-genl; opens its socket per call (see links_rtnl.h).

#include <optional>
#include <vector>

#include "sys/ethtool.h"

struct nlmsghdr;

namespace rxerun::sys {

class GenlEthtool final : public Ethtool {
 public:
  Result<std::map<std::string, Feature>> features(const std::string& dev) override;
  Result<std::map<std::string, bool>> set_features(const std::string& dev,
                                                   const std::map<std::string, bool>& wanted) override;
};

// What the kernel answers to ETHTOOL_MSG_FEATURES_SET (unless asked to omit
// it), both as bitsets with a mask: WANTED holds the requested features whose
// result differs from the request, with the values asked for; ACTIVE holds
// the features whose active value changed, with their new values.
struct FeaturesSetReply {
  std::map<std::string, bool> refused;
  std::map<std::string, bool> changed;
};

// The reply in `nlh` (a generic netlink message of the ethtool family), with
// bits named by `names` (the ETH_SS_FEATURES strings, by index); nullopt when
// it is not a FEATURES_SET reply. Exposed for its tests.
std::optional<FeaturesSetReply> parse_features_set_reply(const nlmsghdr* nlh, const std::vector<std::string>& names);

}  // namespace rxerun::sys
