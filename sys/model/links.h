#pragma once
// The kernel's interfaces and their addresses, in memory, for the two
// implementations of sys/links.h that cannot ask a kernel: `rxerun plan`'s
// (sys/recording/links.h) and the tests' fake (tests/fakes/fake_system.h).
//
// sys/model/ holds one such model per kernel service, next to the service's
// interface (sys/links.h -> sys/model/links.h): state and the kernel's rules
// only, no log and no plan, so that the recording and the fake both build on
// it and cannot drift apart. The recording adds the commands it notes; the
// fake adds what tests script (failures, call counts).
//
// Interfaces are kept for every namespace at once ("" is rxerun's own): a
// veth joins two namespaces, and deleting a namespace deletes interfaces in
// another one (a veth's other end).

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sys/links.h"

namespace rxerun::sys {

class LinksModel {
 public:
  // Null when `netns` has no interface of that name (or one unseen).
  LinkInfo* find(const std::string& netns, const std::string& name);
  // Whether `name` may be an interface of `netns`: held, or possibly unseen.
  bool may_exist(const std::string& netns, const std::string& name) const;
  const LinkInfo* find(const std::string& netns, const std::string& name) const;
  // The interfaces of `netns`, by name.
  std::vector<LinkInfo> links_in(const std::string& netns) const;

  // Puts an interface there as the host has it. One without an index gets
  // the next one: like the kernel's, an index is never handed out twice, so
  // an interface made again under its name is told apart by it.
  LinkInfo& add_host_link(const std::string& netns, LinkInfo info);
  // `spec.name` in `netns` and `spec.peer` in `spec.peer_netns` (or beside
  // it), down, without carrier, the MTU asked for (1500 by default), both
  // ends marked with the alias. EEXIST when either name is taken in its
  // namespace. Whether the peer's namespace exists is the caller's to know.
  Result<void> add_veth_pair(const std::string& netns, const VethSpec& spec);
  // What `ip link del` does: the interface goes with its addresses, and a
  // veth takes its other end (and that one's addresses) along, unless
  // `peer_goes_along` is off. Nothing when absent.
  void delete_link(const std::string& netns, const std::string& name);

  // ENODEV when absent (nothing, when it may be unseen). A veth has carrier
  // while both its ends are up; an interface without a modelled peer has it
  // while it is up.
  Result<void> set_link_up(const std::string& netns, const std::string& name, bool up);
  Result<void> set_link_mtu(const std::string& netns, const std::string& name, unsigned mtu);
  Result<void> set_link_alias(const std::string& netns, const std::string& name, const std::string& alias);

  // The addresses on `dev` ("10.0.0.1/24"), in the order added; `ifindex`,
  // when given, receives the interface's index. ENODEV when absent (and not
  // possibly unseen).
  Result<std::vector<std::string>> addresses_of(const std::string& netns, const std::string& dev,
                                                int* ifindex = nullptr) const;
  // ENODEV when absent; EINVAL when `ifindex` (0: by name) is another
  // interface's. EEXIST when present: an IPv4 address is known by address
  // and prefix length, an IPv6 one by its address alone (the kernel refuses
  // it a second time whatever the prefix).
  Result<void> add_address_to(const std::string& netns, const std::string& dev, const std::string& cidr,
                              int ifindex = 0);
  // ENODEV when the interface is absent, EADDRNOTAVAIL when the address is.
  Result<void> remove_address_from(const std::string& netns, const std::string& dev, const std::string& cidr);

  // A new namespace has its loopback, up (what sys::Netns::create() leaves).
  void netns_created(const std::string& netns);
  // A deleted namespace takes its interfaces along, and a veth among them
  // its other end in another namespace.
  void netns_deleted(const std::string& netns);

  // Open to the tests, which put the host's interfaces here as they find them.
  std::map<std::string, std::map<std::string, LinkInfo>> links;                  // netns -> name -> info
  std::map<std::string, std::map<std::string, std::vector<std::string>>> addrs;  // netns -> dev -> cidrs
  // A veth's two ends, both ways: (netns, name) -> (netns, name).
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> peers;
  int next_ifindex = 100;
  // The kernel's rule, on unless the owner previews each end's own delete
  // (the plan): with it off, a veth's other end stays when one end is
  // deleted (the pairing is forgotten), and goes only by its own delete.
  bool peer_goes_along = true;
  // Whether an interface the model does not hold may be there all the same,
  // unseen: the host's, in a plan, which does not read the host. Then what
  // is done to one is not refused (no ENODEV) and the addresses put on it
  // are kept and read back (its index reads 0), while get and list see it
  // nowhere. Off (the fakes), such an interface does not exist.
  bool unseen_host_links = false;

 private:
  // The other end of a veth, when the model holds it.
  LinkInfo* peer_of(const std::string& netns, const std::string& name);
};

}  // namespace rxerun::sys
