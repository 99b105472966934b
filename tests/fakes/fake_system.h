#pragma once
// Fakes of sys/ for engine and step tests: virtual time that jumps instead of
// waiting, a scheduled Ctrl-C, and namespaces that are only names.

#include <csignal>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/duration.h"
#include "sys/system.h"

namespace rxerun::fakes {

class FakeClock final : public sys::Clock {
 public:
  sys::SteadyTime now() override { return now_; }
  sys::WaitResult wait_until(sys::SteadyTime until, sys::Interrupt& interrupt) override;

  void advance(Duration d) { now_ += d; }
  // Ctrl-C arrives when virtual time reaches `at` during a wait.
  void interrupt_at(sys::SteadyTime at) { interrupt_at_ = at; }
  sys::SteadyTime start() const { return sys::SteadyTime{} + std::chrono::hours(1); }

  std::vector<Duration> waits;  // every wait, in order

 private:
  sys::SteadyTime now_ = start();
  std::optional<sys::SteadyTime> interrupt_at_;
};

class FakeNetns final : public sys::Netns {
 public:
  Result<std::unique_ptr<sys::NetnsScope>> enter(const std::string& name) override;

  std::set<std::string> existing;      // names that can be entered
  std::vector<std::string> log;        // "enter lab", "leave lab"
  std::string current;                 // "" outside any
};

struct FakeSystem {
  FakeClock clock;
  FakeNetns netns;
  sys::Interrupt interrupt;
  sys::System system{clock, netns, interrupt};
};

}  // namespace rxerun::fakes
