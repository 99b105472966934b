#include "sys/model/links.h"

#include <algorithm>
#include <cerrno>

#include "sys/routes.h"

namespace rxerun::sys {

namespace {

struct SplitAddress {
  std::string address;  // canonical when it parses
  std::string prefix;   // the digits after '/', "" when none
  bool v6 = false;
};

SplitAddress split(const std::string& cidr) {
  const auto slash = cidr.find('/');
  SplitAddress a{cidr.substr(0, slash), slash == std::string::npos ? "" : cidr.substr(slash + 1)};
  if (auto p = parse_address(a.address)) a.address = p->text;
  a.v6 = a.address.find(':') != std::string::npos;
  return a;
}

// Whether adding `b` where `a` is would be refused as the same address.
bool taken_by(const std::string& a, const std::string& b) {
  const SplitAddress x = split(a), y = split(b);
  if (x.address != y.address) return false;
  return x.v6 || x.prefix == y.prefix;
}

// Whether `ip addr del b` would take `a`: address and prefix length.
bool deletes(const std::string& a, const std::string& b) {
  const SplitAddress x = split(a), y = split(b);
  return x.address == y.address && x.prefix == y.prefix;
}

Error no_interface(const std::string& name) {
  return make_error("no interface " + name, ENODEV);
}

}  // namespace

LinkInfo* LinksModel::find(const std::string& netns, const std::string& name) {
  auto ns = links.find(netns);
  if (ns == links.end()) return nullptr;
  auto it = ns->second.find(name);
  return it == ns->second.end() ? nullptr : &it->second;
}

const LinkInfo* LinksModel::find(const std::string& netns, const std::string& name) const {
  return const_cast<LinksModel*>(this)->find(netns, name);
}

bool LinksModel::may_exist(const std::string& netns, const std::string& name) const {
  return unseen_host_links || find(netns, name);
}

std::vector<LinkInfo> LinksModel::links_in(const std::string& netns) const {
  std::vector<LinkInfo> out;
  if (auto ns = links.find(netns); ns != links.end())
    for (const auto& [name, info] : ns->second) out.push_back(info);
  return out;
}

LinkInfo& LinksModel::add_host_link(const std::string& netns, LinkInfo info) {
  if (!info.ifindex) info.ifindex = next_ifindex++;
  auto& slot = links[netns][info.name];
  slot = std::move(info);
  return slot;
}

Result<void> LinksModel::add_veth_pair(const std::string& netns, const VethSpec& spec) {
  const std::string peer_ns = spec.peer_netns.empty() ? netns : spec.peer_netns;
  if (find(netns, spec.name) || find(peer_ns, spec.peer)) return make_error("File exists", EEXIST);
  const unsigned mtu = spec.mtu ? spec.mtu : 1500;
  add_host_link(netns, {0, spec.name, "veth", spec.alias, false, false, mtu});
  add_host_link(peer_ns, {0, spec.peer, "veth", spec.alias, false, false, mtu});
  peers[{netns, spec.name}] = {peer_ns, spec.peer};
  peers[{peer_ns, spec.peer}] = {netns, spec.name};
  return {};
}

void LinksModel::delete_link(const std::string& netns, const std::string& name) {
  auto forget = [this](const std::string& ns, const std::string& n) {
    if (auto it = links.find(ns); it != links.end()) it->second.erase(n);
    if (auto it = addrs.find(ns); it != addrs.end()) it->second.erase(n);
  };
  if (auto peer = peers.find({netns, name}); peer != peers.end()) {
    const auto other = peer->second;
    peers.erase(peer);
    peers.erase(other);
    if (peer_goes_along) forget(other.first, other.second);
  }
  forget(netns, name);
}

LinkInfo* LinksModel::peer_of(const std::string& netns, const std::string& name) {
  auto it = peers.find({netns, name});
  return it == peers.end() ? nullptr : find(it->second.first, it->second.second);
}

Result<void> LinksModel::set_link_up(const std::string& netns, const std::string& name, bool up) {
  auto* l = find(netns, name);
  if (!l) return may_exist(netns, name) ? Result<void>() : no_interface(name);
  l->up = up;
  if (auto* peer = peer_of(netns, name)) {
    l->carrier = peer->carrier = up && peer->up;
  } else {
    l->carrier = up;
  }
  return {};
}

Result<void> LinksModel::set_link_mtu(const std::string& netns, const std::string& name, unsigned mtu) {
  auto* l = find(netns, name);
  if (!l) return may_exist(netns, name) ? Result<void>() : no_interface(name);
  l->mtu = mtu;
  return {};
}

Result<void> LinksModel::set_link_alias(const std::string& netns, const std::string& name, const std::string& alias) {
  auto* l = find(netns, name);
  if (!l) return may_exist(netns, name) ? Result<void>() : no_interface(name);
  l->alias = alias;
  return {};
}

Result<std::vector<std::string>> LinksModel::addresses_of(const std::string& netns, const std::string& dev,
                                                          int* ifindex) const {
  if (!may_exist(netns, dev)) return no_interface(dev);
  const auto* link = find(netns, dev);
  if (ifindex) *ifindex = link ? link->ifindex : 0;
  auto ns = addrs.find(netns);
  if (ns == addrs.end()) return std::vector<std::string>{};
  auto it = ns->second.find(dev);
  return it == ns->second.end() ? std::vector<std::string>{} : it->second;
}

Result<void> LinksModel::add_address_to(const std::string& netns, const std::string& dev, const std::string& cidr,
                                        int ifindex) {
  if (!may_exist(netns, dev)) return no_interface(dev);
  // The index addresses_of() gave is the interface's: a caller passes it on unchanged.
  const auto* link = find(netns, dev);
  if (ifindex != 0 && ifindex != (link ? link->ifindex : 0))
    return make_error("index " + std::to_string(ifindex) + " is not " + dev + "'s", EINVAL);
  auto& list = addrs[netns][dev];
  if (std::any_of(list.begin(), list.end(), [&](const std::string& a) { return taken_by(a, cidr); }))
    return make_error("File exists", EEXIST);
  list.push_back(cidr);
  return {};
}

Result<void> LinksModel::remove_address_from(const std::string& netns, const std::string& dev,
                                             const std::string& cidr) {
  if (!may_exist(netns, dev)) return no_interface(dev);
  auto& list = addrs[netns][dev];
  auto it = std::find_if(list.begin(), list.end(), [&](const std::string& a) { return deletes(a, cidr); });
  if (it == list.end()) return make_error("Cannot assign requested address", EADDRNOTAVAIL);
  list.erase(it);
  return {};
}

void LinksModel::netns_created(const std::string& netns) {
  add_host_link(netns, {.ifindex = 1, .name = "lo", .up = true, .carrier = true, .mtu = 65536});
}

void LinksModel::netns_deleted(const std::string& netns) {
  for (const auto& link : links_in(netns)) delete_link(netns, link.name);
  links.erase(netns);
  addrs.erase(netns);
}

}  // namespace rxerun::sys
