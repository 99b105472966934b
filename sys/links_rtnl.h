#pragma once
// Links over rtnetlink with libnl-route. Every call opens its socket in the
// thread's current network namespace (a netlink socket stays bound to the
// namespace it was created in), so callers may setns between calls.

#include "sys/links.h"

namespace rxerun::sys {

class RtnlLinks final : public Links {
 public:
  Result<std::optional<LinkInfo>> get(const std::string& name) override;
  Result<std::vector<LinkInfo>> list() override;
  Result<std::vector<LinkStats>> statistics() override;
  Result<void> add_veth(const VethSpec& spec) override;
  Result<void> remove(const std::vector<std::string>& names) override;
  Result<void> set_up(const std::string& name, bool up) override;
  Result<void> set_mtu(const std::string& name, unsigned mtu) override;
  Result<void> set_alias(const std::string& name, const std::string& alias) override;
  Result<std::vector<std::string>> addresses(const std::string& dev, int* ifindex = nullptr) override;
  Result<void> add_address(const std::string& dev, const std::string& cidr, int ifindex = 0) override;
  Result<void> remove_address(const std::string& dev, const std::string& cidr) override;

  // Not a step's business (steps never rename what they did not make): the
  // lab VM's agent gives the wires' NICs the names the scenario uses. The
  // link must be down.
  Result<void> rename(const std::string& name, const std::string& new_name);
  // The same: the lab VM gives a wire's NIC the lab's MAC address
  // ("52:54:00:0a:00:01") in place of the one it booted with.
  Result<void> set_mac(const std::string& name, const std::string& mac);
};

// The interface whose MAC address is `mac` (as sysfs writes it: lower case,
// colons), from /sys/class/net; "" when none.
std::string interface_with_mac(const std::string& mac);

}  // namespace rxerun::sys
