#include "sys/recording/sysctl.h"

#include <fstream>

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

Result<std::string> RecordingSysctl::read(const std::string& key) {
  if (const auto* v = models_[log_.netns()].find(key)) return *v;
  // Only rxerun's own namespace is the host's: a namespace of the plan does not exist.
  if (log_.netns().empty()) {
    std::ifstream in(sysctl_path(key));
    std::string value;
    if (in && std::getline(in, value)) return value;
  }
  return std::string(kValueAtRunTime);
}

Result<void> RecordingSysctl::write(const std::string& key, const std::string& value) {
  // The key is taken to be there: the host's keys are not the plan's to know.
  models_[log_.netns()].add_key(key, value);
  if (value == kValueAtRunTime) {
    log_.record("set " + key + " back to the value it had before, known only at run time", "");
  } else {
    log_.record("set " + key + " to " + value, shell_join({"sysctl", "-w", key + "=" + value}));
  }
  return {};
}

}  // namespace rxerun::sys
