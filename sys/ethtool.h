#pragma once
// Netdev features (what `ethtool -k/-K` shows and sets), over the ethtool
// generic netlink family (libnl-genl). Names are the kernel's feature
// strings: rx-gro, tx-generic-segmentation, tx-tcp-segmentation, ...

#include <map>
#include <string>

#include "engine/result.h"

namespace rxerun::sys {

struct Feature {
  bool active = false;
  bool fixed = false;  // the driver does not let it change
};

class Ethtool {
 public:
  virtual ~Ethtool() = default;
  virtual Result<std::map<std::string, Feature>> features(const std::string& dev) = 0;
  // Requests these values; the error names features the kernel would not change.
  virtual Result<void> set_features(const std::string& dev, const std::map<std::string, bool>& wanted) = 0;
};

}  // namespace rxerun::sys
