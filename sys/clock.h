#pragma once
// Time and waiting. Every wait in rxerun goes through a Clock so that it can
// be cut short by Ctrl-C, bounded by a step's deadline, faked in tests
// (virtual time) and recorded by `plan`.

#include <chrono>
#include <string>

#include "base/duration.h"

namespace rxerun::sys {

using SteadyTime = std::chrono::steady_clock::time_point;

class Interrupt;

enum class WaitResult { Reached, Interrupted };

class Clock {
 public:
  virtual ~Clock() = default;
  virtual SteadyTime now() = 0;
  // Blocks until `until` or until the interrupt fires, whichever is first.
  virtual WaitResult wait_until(SteadyTime until, Interrupt& interrupt) = 0;
};

// The real clock: std::chrono::steady_clock and poll() on the interrupt's fd.
class RealClock final : public Clock {
 public:
  SteadyTime now() override;
  WaitResult wait_until(SteadyTime until, Interrupt& interrupt) override;
};

// Time passed on `clock` since `start`.
inline Duration elapsed_since(Clock& clock, SteadyTime start) {
  return std::chrono::duration_cast<Duration>(clock.now() - start);
}

}  // namespace rxerun::sys
