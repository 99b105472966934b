#pragma once
// Pings for `rxerun plan` (sys/recording/system.h): a ping changes nothing;
// the plan shows the command and assumes every reply comes back.

#include "sys/ping.h"

namespace rxerun::sys {

class ActionLog;

class RecordingPinger final : public Pinger {
 public:
  explicit RecordingPinger(ActionLog& log) : log_(log) {}
  Result<PingResult> ping(const PingSpec& spec, SteadyTime deadline, Interrupt& interrupt) override;

 private:
  ActionLog& log_;
};

}  // namespace rxerun::sys
