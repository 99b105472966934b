#pragma once
// Time for `rxerun plan` (sys/recording/system.h): virtual, moved on by each
// wait, which is noted as the `sleep` a person would type.

#include "sys/clock.h"

namespace rxerun::sys {

class ActionLog;

class RecordingClock final : public Clock {
 public:
  explicit RecordingClock(ActionLog& log) : log_(log) {}
  SteadyTime now() override { return now_; }
  WaitResult wait_until(SteadyTime until, Interrupt& interrupt) override;

 private:
  ActionLog& log_;
  SteadyTime now_{};
};

}  // namespace rxerun::sys
