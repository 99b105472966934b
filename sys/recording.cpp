#include "sys/recording.h"

#include <fmt/format.h>

#include "engine/duration.h"

namespace rxerun::sys {

void ActionLog::record(PlannedAction action) {
  if (!netns_.empty() && !action.shell.empty()) action.shell = "ip netns exec " + netns_ + " " + action.shell;
  actions_.push_back(std::move(action));
}

std::vector<PlannedAction> ActionLog::take() {
  std::vector<PlannedAction> out;
  out.swap(actions_);
  return out;
}

WaitResult RecordingClock::wait_until(SteadyTime until, Interrupt&) {
  if (until > now_) {
    if (until == SteadyTime::max()) {
      log_.record({"wait without end", ""});
    } else {
      auto d = std::chrono::ceil<std::chrono::milliseconds>(until - now_);
      auto ms = d.count();
      std::string secs = fmt::format("{:.3f}", ms / 1000.0);  // sleep(1) takes decimals
      secs.erase(secs.find_last_not_of('0') + 1);
      if (secs.back() == '.') secs.pop_back();
      log_.record({"wait " + rxerun::format_duration(d), "sleep " + secs});
      now_ = until;
    }
  }
  return WaitResult::Reached;
}

namespace {
class RecordingScope final : public NetnsScope {
 public:
  RecordingScope(ActionLog& log, std::string previous) : log_(log), previous_(std::move(previous)) {}
  ~RecordingScope() override { log_.set_netns(previous_); }

 private:
  ActionLog& log_;
  std::string previous_;
};
}  // namespace

Result<std::unique_ptr<NetnsScope>> RecordingNetns::enter(const std::string& name) {
  auto scope = std::make_unique<RecordingScope>(log_, log_.netns());
  log_.set_netns(name);
  return std::unique_ptr<NetnsScope>(std::move(scope));
}

RecordingSystem::RecordingSystem() = default;

}  // namespace rxerun::sys
