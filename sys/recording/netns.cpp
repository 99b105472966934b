#include "sys/recording/netns.h"

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

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

Result<bool> RecordingNetns::exists(const std::string& name) {
  return model_.has(name);
}

Result<void> RecordingNetns::create(const std::string& name) {
  if (auto r = model_.add_netns(name); refused(r)) return r;
  log_.record("create network namespace " + name, shell_join({"ip", "netns", "add", name}));
  return {};
}

Result<void> RecordingNetns::remove(const std::string& name) {
  if (auto r = model_.delete_netns(name); refused(r)) return r;
  log_.record("delete network namespace " + name, shell_join({"ip", "netns", "del", name}));
  return {};
}

}  // namespace rxerun::sys
