#pragma once
// Network namespaces for `rxerun plan` (sys/recording/system.h): those the
// plan created exist. Entering one changes nothing but the namespace later
// commands are shown in (`ip netns exec NAME ...`).

#include <set>
#include <string>

#include "sys/netns.h"

namespace rxerun::sys {

class ActionLog;

class RecordingNetns final : public Netns {
 public:
  explicit RecordingNetns(ActionLog& log) : log_(log) {}
  Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) override;
  Result<bool> exists(const std::string& name) override;
  Result<void> create(const std::string& name) override;
  Result<void> remove(const std::string& name) override;
  // A plan knows no inode: 0, which the undos do not compare.
  Result<std::uint64_t> inode(const std::string&) override { return std::uint64_t{0}; }
  Result<std::uint64_t> current_inode() override { return std::uint64_t{0}; }

 private:
  ActionLog& log_;
  std::set<std::string> created_;
};

}  // namespace rxerun::sys
