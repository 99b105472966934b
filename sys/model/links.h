#pragma once
// Interfaces and their addresses in the model (sys/model/kernel.h), for
// every namespace at once ("" is rxerun's own): a veth joins two namespaces,
// and deleting a namespace deletes interfaces in another one (a veth's other
// end). Calls act in the kernel's current namespace.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sys/links.h"
#include "sys/model/netns.h"

namespace rxerun::sys {

class ModelLinks final : public Links, public NetnsScoped {
 public:
  ModelLinks(ModelKernel& k, ModelNetns& netns) : k_(k), netns_(netns) {}

  Result<std::optional<LinkInfo>> get(const std::string& name) override;
  Result<std::vector<LinkInfo>> list() override { return links_in(k_.netns); }
  // Counters from `stats` (rx/tx packets and bytes 0 when not given).
  Result<std::vector<LinkStats>> statistics() override;
  // Both ends down, without carrier, the MTU asked for (1500 by default),
  // marked with the alias. EEXIST when a name is taken in its namespace,
  // ENOENT when the peer's namespace does not exist.
  Result<void> add_veth(const VethSpec& spec) override;
  Result<void> remove(const std::vector<std::string>& names) override;
  // A veth has carrier while both its ends are up; an interface without a
  // modelled peer has it while it is up. ENODEV when absent.
  Result<void> set_up(const std::string& name, bool up) override;
  Result<void> set_mtu(const std::string& name, unsigned mtu) override;
  Result<void> set_alias(const std::string& name, const std::string& alias) override;
  Result<std::vector<std::string>> addresses(const std::string& dev, int* ifindex = nullptr) override;
  // EEXIST when present: an IPv4 address is known by address and prefix
  // length, an IPv6 one by its address alone. EINVAL when `ifindex` is
  // another interface's.
  Result<void> add_address(const std::string& dev, const std::string& cidr, int ifindex = 0) override;
  Result<void> remove_address(const std::string& dev, const std::string& cidr) override;

  // Null when `netns` has no interface of that name.
  LinkInfo* find(const std::string& netns, const std::string& name);
  const LinkInfo* find(const std::string& netns, const std::string& name) const;
  // Held, or (open world) possibly the host's, unseen: then what is done to
  // it is not refused and the addresses put on it are remembered, while
  // get() and list() see it nowhere.
  bool may_exist(const std::string& netns, const std::string& name) const;
  std::vector<LinkInfo> links_in(const std::string& netns) const;
  // Puts an interface there as the host has it. One without an index gets
  // the next one: an index is never handed out twice, so an interface made
  // again under its name is told apart by it.
  LinkInfo& add_host_link(const std::string& netns, LinkInfo info);
  // What `ip link del` does: the interface goes with its addresses, and a
  // veth takes its other end along (in a plan, which shows each end's
  // delete, the other end stays until its own).
  void delete_link(const std::string& netns, const std::string& name);

  void netns_created(const std::string& netns) override;
  void netns_deleted(const std::string& netns) override;

  // The state, open to the tests.
  std::map<std::string, std::map<std::string, LinkInfo>> links;                  // netns -> name -> info
  std::map<std::string, std::map<std::string, std::vector<std::string>>> addrs;  // netns -> dev -> cidrs
  // A veth's two ends, both ways: (netns, name) -> (netns, name).
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> peers;
  std::map<std::string, std::map<std::string, std::map<std::string, std::uint64_t>>> stats;  // netns -> dev -> counters
  int next_ifindex = 100;
  int remove_calls = 0;  // remove() calls: batching shows here

 private:
  Result<LinkInfo*> changing(const char* op, const std::string& name);
  ModelKernel& k_;
  ModelNetns& netns_;
};

}  // namespace rxerun::sys
