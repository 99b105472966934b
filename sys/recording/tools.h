#pragma once
// Tools for `rxerun plan` (sys/recording/system.h): notes the command line a person
// would type (`ip netns exec NS rping -s ...`) and answers as if the tool ran
// and ended well at once, writing nothing.

#include "sys/tools.h"

namespace rxerun::sys {

class ActionLog;

class RecordingTools final : public Tools {
 public:
  explicit RecordingTools(ActionLog& log) : log_(log) {}
  Result<std::unique_ptr<RunningTool>> start(const ToolSpec& spec) override;

 private:
  ActionLog& log_;
  pid_t next_pid_ = 1000;
};

}  // namespace rxerun::sys
