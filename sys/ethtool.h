#pragma once
// Netdev features (what `ethtool -k/-K` shows and sets), over the ethtool
// generic netlink family (libnl-genl). Names are the kernel's feature
// strings: rx-gro, tx-generic-segmentation, tx-tcp-segmentation, ...

#include <map>
#include <string>

#include "base/result.h"

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
  // Returns the active value, after the change, of at least every feature
  // that changed, asked for or not (turning one feature off can take others
  // with it): a feature it leaves out kept its value. Saves reading all
  // features again.
  virtual Result<std::map<std::string, bool>> set_features(const std::string& dev,
                                                           const std::map<std::string, bool>& wanted) = 0;
};

}  // namespace rxerun::sys
