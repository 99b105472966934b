#pragma once
// Interfaces for `rxerun plan` (sys/recording/system.h): those the plan
// created exist (keyed by namespace and name); nothing else does.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sys/links.h"

namespace rxerun::sys {

class ActionLog;

class RecordingLinks final : public Links {
 public:
  explicit RecordingLinks(ActionLog& log) : log_(log) {}
  Result<std::optional<LinkInfo>> get(const std::string& name) override;
  Result<std::vector<LinkInfo>> list() override;
  // The plan's interfaces, all counters 0.
  Result<std::vector<LinkStats>> statistics() override;
  // What the plan put on `dev` in `netns` so far.
  std::vector<std::string> addresses_in(const std::string& netns, const std::string& dev) const;
  Result<void> add_veth(const VethSpec& spec) override;
  Result<void> remove(const std::vector<std::string>& names) override;
  Result<void> set_up(const std::string& name, bool up) override;
  Result<void> set_mtu(const std::string& name, unsigned mtu) override;
  Result<void> set_alias(const std::string& name, const std::string& alias) override;
  Result<std::vector<std::string>> addresses(const std::string& dev, int* ifindex = nullptr) override;
  Result<void> add_address(const std::string& dev, const std::string& cidr, int ifindex = 0) override;
  Result<void> remove_address(const std::string& dev, const std::string& cidr) override;

 private:
  LinkInfo* find(const std::string& name);
  ActionLog& log_;
  std::map<std::pair<std::string, std::string>, LinkInfo> links_;  // (netns, name)
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> addresses_;
};

}  // namespace rxerun::sys
