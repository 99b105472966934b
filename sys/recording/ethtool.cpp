#include "sys/recording/ethtool.h"

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

Result<std::map<std::string, Feature>> RecordingEthtool::features(const std::string&) {
  return std::map<std::string, Feature>{};
}

Result<std::map<std::string, bool>> RecordingEthtool::set_features(const std::string& dev,
                                                                   const std::map<std::string, bool>& wanted) {
  std::vector<std::string> cmd{"ethtool", "-K", dev};
  std::string what;
  for (const auto& [name, on] : wanted) {
    cmd.insert(cmd.end(), {name, on ? "on" : "off"});
    what += (what.empty() ? "" : ", ") + name + (on ? " on" : " off");
  }
  log_.record("set " + what + " on " + dev, shell_join(cmd));
  return wanted;  // what a plan assumes: each feature as asked
}

}  // namespace rxerun::sys
