#pragma once
// Interfaces for `rxerun plan` (sys/recording/system.h): those the plan
// created exist, with what the plan did to them (sys/model/links.h). The
// host's are not read: get() and list() see none of them, but the
// addresses the plan puts on one are remembered.

#include <string>
#include <vector>

#include "sys/links.h"
#include "sys/model/links.h"

namespace rxerun::sys {

class ActionLog;

class RecordingLinks final : public Links {
 public:
  explicit RecordingLinks(ActionLog& log);
  Result<std::optional<LinkInfo>> get(const std::string& name) override;
  Result<std::vector<LinkInfo>> list() override;
  // The plan's interfaces, all counters 0.
  Result<std::vector<LinkStats>> statistics() override;
  Result<void> add_veth(const VethSpec& spec) override;
  Result<void> remove(const std::vector<std::string>& names) override;
  Result<void> set_up(const std::string& name, bool up) override;
  Result<void> set_mtu(const std::string& name, unsigned mtu) override;
  Result<void> set_alias(const std::string& name, const std::string& alias) override;
  // What the plan put on `dev` so far.
  Result<std::vector<std::string>> addresses(const std::string& dev, int* ifindex = nullptr) override;
  Result<void> add_address(const std::string& dev, const std::string& cidr, int ifindex = 0) override;
  Result<void> remove_address(const std::string& dev, const std::string& cidr) override;

  // For the namespaces and rxe devices, which come and go with interfaces.
  LinksModel& model() { return model_; }

 private:
  ActionLog& log_;
  LinksModel model_;
};

}  // namespace rxerun::sys
