#pragma once
// Network namespaces for `rxerun plan` (sys/recording/system.h): those the
// plan created exist (sys/model/netns.h), with their interfaces. Entering
// one, the plan's or the host's, changes nothing but the namespace later
// commands are shown in (`ip netns exec NAME ...`).

#include <string>

#include "sys/model/netns.h"
#include "sys/netns.h"

namespace rxerun::sys {

class ActionLog;

class RecordingNetns final : public Netns {
 public:
  RecordingNetns(ActionLog& log, LinksModel& links) : log_(log), model_(&links) {}
  Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) override;
  Result<bool> exists(const std::string& name) override;
  Result<void> create(const std::string& name) override;
  Result<void> remove(const std::string& name) override;
  // A plan knows no inode: 0, which the undos do not compare.
  Result<std::uint64_t> inode(const std::string&) override { return std::uint64_t{0}; }
  Result<std::uint64_t> current_inode() override { return std::uint64_t{0}; }

 private:
  ActionLog& log_;
  NetnsModel model_;
};

}  // namespace rxerun::sys
