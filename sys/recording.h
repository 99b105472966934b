#pragma once
// The implementations `rxerun plan` runs a scenario against: they change
// nothing and note each action with the shell command a person would type.
// Waits return at once (virtual time moves on).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sys/system.h"

namespace rxerun::sys {

class ActionLog final : public Recorder {
 public:
  void record(PlannedAction action) override;
  std::vector<PlannedAction> take();  // the actions since the last take()

  // The namespace that later actions happen in ("" for rxerun's own).
  void set_netns(std::string name) { netns_ = std::move(name); }
  const std::string& netns() const { return netns_; }

 private:
  std::vector<PlannedAction> actions_;
  std::string netns_;
};

class RecordingClock final : public Clock {
 public:
  explicit RecordingClock(ActionLog& log) : log_(log) {}
  SteadyTime now() override { return now_; }
  WaitResult wait_until(SteadyTime until, Interrupt& interrupt) override;

 private:
  ActionLog& log_;
  SteadyTime now_{};
};

class RecordingNetns final : public Netns {
 public:
  explicit RecordingNetns(ActionLog& log) : log_(log) {}
  Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) override;

 private:
  ActionLog& log_;
};

// Everything above, wired into one System.
class RecordingSystem {
 public:
  RecordingSystem();
  System& system() { return system_; }
  ActionLog& log() { return log_; }

 private:
  ActionLog log_;
  RecordingClock clock_{log_};
  RecordingNetns netns_{log_};
  Interrupt interrupt_;
  System system_{clock_, netns_, interrupt_, &log_};
};

}  // namespace rxerun::sys
