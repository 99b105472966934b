#pragma once
// Kernel parameters under /proc/sys, named as sysctl(8) names them:
// "net.ipv4.conf.vB.rp_filter". A key may use '/' instead of '.' as its
// separator, for interface names that hold a dot ("net/ipv4/conf/eth0.100/rp_filter").

#include <string>

#include "base/result.h"

namespace rxerun::sys {

class Sysctl {
 public:
  virtual ~Sysctl() = default;
  // The value with surrounding whitespace trimmed (tabs inside kept). ENOENT when no such key.
  virtual Result<std::string> read(const std::string& key) = 0;
  virtual Result<void> write(const std::string& key, const std::string& value) = 0;
};

// "net.ipv4.conf.vB.rp_filter" -> "/proc/sys/net/ipv4/conf/vB/rp_filter"
std::string sysctl_path(const std::string& key);

}  // namespace rxerun::sys
