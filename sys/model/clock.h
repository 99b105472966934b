#pragma once
// Time and the kernel's log in the model (sys/model/kernel.h). Time is
// virtual: a wait moves it on at once (and is logged as the `sleep` a person
// would type), Ctrl-C can be scheduled at a virtual time, and the world can
// change during each wait (`on_wait`). The kernel's log holds what a test
// puts there, on that clock.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sys/clock.h"
#include "sys/kernel_log.h"
#include "sys/model/kernel.h"

namespace rxerun::sys {

class ModelClock final : public Clock {
 public:
  explicit ModelClock(ModelKernel& k) : k_(k) {}
  SteadyTime now() override { return now_; }
  // A wait without end is a test's mistake (thrown); a plan notes it.
  WaitResult wait_until(SteadyTime until, Interrupt& interrupt) override;

  void advance(Duration d) { now_ += d; }
  // Ctrl-C arrives when virtual time reaches `at` during a wait.
  void interrupt_at(SteadyTime at) { interrupt_at_ = at; }
  SteadyTime start() const { return SteadyTime{} + std::chrono::hours(1); }

  std::vector<Duration> waits;    // every wait, in order
  std::function<void()> on_wait;  // runs after each wait moved time on

 private:
  ModelKernel& k_;
  SteadyTime now_ = start();
  std::optional<SteadyTime> interrupt_at_;
};

class ModelKernelLog final : public KernelLog {
 public:
  explicit ModelKernelLog(ModelClock& clock) : clock_(clock) {}
  std::uint64_t now() override;  // the clock's time in microseconds
  std::vector<KernelRecord> records(std::uint64_t since) override;
  std::string release() override { return release_name; }
  // A record of the kernel's (facility 0) at the clock's now, one per line of `text`.
  void log(const std::string& text, int facility = 0);

  std::vector<KernelRecord> entries;
  std::string release_name;
  int reads = 0;  // records() calls

 private:
  ModelClock& clock_;
};

}  // namespace rxerun::sys
