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
  // A plan assumes every program gets ready.
  Result<bool> listening(SocketProto, std::uint16_t) override { return true; }
  Result<bool> exists(const std::string&) override { return true; }
  Result<std::vector<pid_t>> stop_marked(const std::string& token, Duration grace) override;

 private:
  ActionLog& log_;
  pid_t next_pid_ = 1000;
};

}  // namespace rxerun::sys
