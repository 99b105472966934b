#include "sys/model/links.h"

#include <algorithm>
#include <cerrno>

#include "base/strings.h"
#include "sys/routes.h"

namespace rxerun::sys {

namespace {

struct SplitAddress {
  std::string address;  // canonical when it parses
  std::string prefix;   // the digits after '/', "" when none
  bool v6 = false;
};

SplitAddress split_cidr(const std::string& cidr) {
  const auto slash = cidr.find('/');
  SplitAddress a{cidr.substr(0, slash), slash == std::string::npos ? "" : cidr.substr(slash + 1)};
  if (auto p = parse_address(a.address)) a.address = p->text;
  a.v6 = a.address.find(':') != std::string::npos;
  return a;
}

// Whether adding `b` where `a` is would be refused as the same address.
bool address_taken_by(const std::string& a, const std::string& b) {
  const SplitAddress x = split_cidr(a), y = split_cidr(b);
  return x.address == y.address && (x.v6 || x.prefix == y.prefix);
}

// Whether `ip addr del b` would take `a`: address and prefix length.
bool address_deletes(const std::string& a, const std::string& b) {
  const SplitAddress x = split_cidr(a), y = split_cidr(b);
  return x.address == y.address && x.prefix == y.prefix;
}

Error no_interface(const std::string& name) {
  return make_error("no interface " + name, ENODEV);
}

}  // namespace

LinkInfo* ModelLinks::find(const std::string& netns, const std::string& name) {
  auto ns = links.find(netns);
  if (ns == links.end()) return nullptr;
  auto it = ns->second.find(name);
  return it == ns->second.end() ? nullptr : &it->second;
}

const LinkInfo* ModelLinks::find(const std::string& netns, const std::string& name) const {
  return const_cast<ModelLinks*>(this)->find(netns, name);
}

bool ModelLinks::may_exist(const std::string& netns, const std::string& name) const {
  return k_.open_world || find(netns, name);
}

std::vector<LinkInfo> ModelLinks::links_in(const std::string& netns) const {
  std::vector<LinkInfo> out;
  if (auto ns = links.find(netns); ns != links.end())
    for (const auto& [name, info] : ns->second) out.push_back(info);
  return out;
}

LinkInfo& ModelLinks::add_host_link(const std::string& netns, LinkInfo info) {
  if (!info.ifindex) info.ifindex = next_ifindex++;
  auto& slot = links[netns][info.name];
  slot = std::move(info);
  return slot;
}

void ModelLinks::delete_link(const std::string& netns, const std::string& name) {
  auto forget = [this](const std::string& ns, const std::string& n) {
    if (auto it = links.find(ns); it != links.end()) it->second.erase(n);
    if (auto it = addrs.find(ns); it != addrs.end()) it->second.erase(n);
  };
  if (auto peer = peers.find({netns, name}); peer != peers.end()) {
    const auto other = peer->second;
    peers.erase(peer);
    peers.erase(other);
    if (!k_.open_world) forget(other.first, other.second);
  }
  forget(netns, name);
}

void ModelLinks::netns_created(const std::string& netns) {
  add_host_link(netns, {.ifindex = 1, .name = "lo", .up = true, .carrier = true, .mtu = 65536});
}

void ModelLinks::netns_deleted(const std::string& netns) {
  for (const auto& link : links_in(netns)) delete_link(netns, link.name);
  links.erase(netns);
  addrs.erase(netns);
  stats.erase(netns);
}

Result<std::optional<LinkInfo>> ModelLinks::get(const std::string& name) {
  if (auto f = k_.fault("links.get", name)) return *f;
  if (const auto* l = find(k_.netns, name)) return std::optional<LinkInfo>(*l);
  return std::optional<LinkInfo>();
}

Result<std::vector<LinkStats>> ModelLinks::statistics() {
  std::vector<LinkStats> out;
  for (const auto& info : links_in(k_.netns)) {
    LinkStats s{info.name, {{"rx_packets", 0}, {"tx_packets", 0}, {"rx_bytes", 0}, {"tx_bytes", 0}}};
    for (const auto& [counter, value] : stats[k_.netns][info.name]) s.counters[counter] = value;
    out.push_back(std::move(s));
  }
  return out;
}

Result<void> ModelLinks::add_veth(const VethSpec& spec) {
  if (auto f = k_.fault("links.add_veth", spec.name)) return *f;
  const std::string& here = k_.netns;
  const std::string there = spec.peer_netns.empty() ? here : spec.peer_netns;
  if (!spec.peer_netns.empty() && !*netns_.exists(there) && !k_.open_world)
    return make_error("network namespace '" + there + "' does not exist", ENOENT);
  if (find(here, spec.name) || find(there, spec.peer)) return make_error("File exists", EEXIST);
  const unsigned mtu = spec.mtu ? spec.mtu : 1500;
  add_host_link(here, {0, spec.name, "veth", spec.alias, false, false, mtu});
  add_host_link(there, {0, spec.peer, "veth", spec.alias, false, false, mtu});
  peers[{here, spec.name}] = {there, spec.peer};
  peers[{there, spec.peer}] = {here, spec.name};

  std::vector<std::string> cmd{"ip", "link", "add", spec.name};
  if (spec.mtu) cmd.insert(cmd.end(), {"mtu", std::to_string(spec.mtu)});
  cmd.insert(cmd.end(), {"type", "veth", "peer", "name", spec.peer});
  if (!spec.peer_netns.empty()) cmd.insert(cmd.end(), {"netns", spec.peer_netns});
  k_.did("links", "create veth pair " + spec.name + "/" + spec.peer, shell_join(cmd));
  if (spec.alias.empty()) return {};
  k_.did("links", "mark " + spec.name, shell_join({"ip", "link", "set", spec.name, "alias", spec.alias}));
  const std::string peer_mark = shell_join({"link", "set", spec.peer, "alias", spec.alias});
  if (spec.peer_netns.empty()) {
    k_.did("links", "mark " + spec.peer, "ip " + peer_mark);
  } else {
    k_.did_anywhere("links", "mark " + spec.peer, shell_join({"ip", "-n", spec.peer_netns}) + " " + peer_mark);
  }
  return {};
}

Result<void> ModelLinks::remove(const std::vector<std::string>& names) {
  if (auto f = k_.fault("links.remove", names.empty() ? "" : names.front())) return *f;
  ++remove_calls;
  for (const auto& n : names) {
    if (!may_exist(k_.netns, n)) continue;  // gone already: skipped
    k_.did("links", "delete interface " + n, shell_join({"ip", "link", "del", n}));
    delete_link(k_.netns, n);
  }
  return {};
}

Result<LinkInfo*> ModelLinks::changing(const char* op, const std::string& name) {
  if (auto f = k_.fault(op, name)) return *f;
  if (!may_exist(k_.netns, name)) return no_interface(name);
  return find(k_.netns, name);  // null: the host's, unseen
}

Result<void> ModelLinks::set_up(const std::string& name, bool up) {
  auto l = changing("links.set_up", name);
  if (!l) return l.error();
  if (LinkInfo* link = *l) {
    link->up = up;
    link->carrier = up;
    if (auto peer = peers.find({k_.netns, name}); peer != peers.end())
      if (LinkInfo* other = find(peer->second.first, peer->second.second))
        link->carrier = other->carrier = up && other->up;
  }
  k_.did("links", std::string(up ? "bring up " : "bring down ") + name,
         shell_join({"ip", "link", "set", name, up ? "up" : "down"}));
  return {};
}

Result<void> ModelLinks::set_mtu(const std::string& name, unsigned mtu) {
  auto l = changing("links.set_mtu", name);
  if (!l) return l.error();
  if (*l) (*l)->mtu = mtu;
  k_.did("links", "set the MTU of " + name, shell_join({"ip", "link", "set", name, "mtu", std::to_string(mtu)}));
  return {};
}

Result<void> ModelLinks::set_alias(const std::string& name, const std::string& alias) {
  auto l = changing("links.set_alias", name);
  if (!l) return l.error();
  if (*l) (*l)->alias = alias;
  k_.did("links", "mark " + name, shell_join({"ip", "link", "set", name, "alias", alias}));
  return {};
}

Result<std::vector<std::string>> ModelLinks::addresses(const std::string& dev, int* ifindex) {
  if (auto f = k_.fault("links.addresses", dev)) return *f;
  if (!may_exist(k_.netns, dev)) return no_interface(dev);
  const auto* link = find(k_.netns, dev);
  if (ifindex) *ifindex = link ? link->ifindex : 0;
  return addrs[k_.netns][dev];
}

Result<void> ModelLinks::add_address(const std::string& dev, const std::string& cidr, int ifindex) {
  if (auto f = k_.fault("links.add_address", dev)) return *f;
  if (!may_exist(k_.netns, dev)) return no_interface(dev);
  // The index addresses() gave is the interface's: a caller passes it on unchanged.
  const auto* link = find(k_.netns, dev);
  if (ifindex != 0 && ifindex != (link ? link->ifindex : 0))
    return make_error("index " + std::to_string(ifindex) + " is not " + dev + "'s", EINVAL);
  auto& list = addrs[k_.netns][dev];
  if (std::any_of(list.begin(), list.end(), [&](const std::string& a) { return address_taken_by(a, cidr); }))
    return make_error("File exists", EEXIST);
  list.push_back(cidr);
  k_.did("links", "add " + cidr + " to " + dev, shell_join({"ip", "addr", "add", cidr, "dev", dev}));
  return {};
}

Result<void> ModelLinks::remove_address(const std::string& dev, const std::string& cidr) {
  if (auto f = k_.fault("links.remove_address", dev)) return *f;
  if (!may_exist(k_.netns, dev)) return no_interface(dev);
  auto& list = addrs[k_.netns][dev];
  auto it = std::find_if(list.begin(), list.end(), [&](const std::string& a) { return address_deletes(a, cidr); });
  if (it == list.end()) {
    const Error absent = make_error("Cannot assign requested address", EADDRNOTAVAIL);
    if (k_.refused(absent)) return absent;
  } else {
    list.erase(it);
  }
  k_.did("links", "remove " + cidr + " from " + dev, shell_join({"ip", "addr", "del", cidr, "dev", dev}));
  return {};
}

}  // namespace rxerun::sys
