#pragma once
// Kernel parameters for `rxerun plan` (sys/recording/system.h): reads what
// the plan wrote, else the host's value in rxerun's own namespace (reading
// /proc/sys changes nothing). A value the plan cannot know (inside a
// namespace, of an interface that does not exist yet) reads as
// kValueAtRunTime; writing that back is listed as known only at run time,
// never as `sysctl -w KEY=` some made-up value. Writes are recorded.

#include <map>
#include <string>

#include "sys/model/sysctl.h"
#include "sys/sysctl.h"

namespace rxerun::sys {

class ActionLog;

class RecordingSysctl final : public Sysctl {
 public:
  static constexpr const char* kValueAtRunTime = "(the value found at run time)";

  explicit RecordingSysctl(ActionLog& log) : log_(log) {}
  Result<std::string> read(const std::string& key) override;
  Result<void> write(const std::string& key, const std::string& value) override;

 private:
  ActionLog& log_;
  std::map<std::string, SysctlModel> models_;  // by namespace: what the plan wrote
};

}  // namespace rxerun::sys
