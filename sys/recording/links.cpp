#include "sys/recording/links.h"

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

LinkInfo* RecordingLinks::find(const std::string& name) {
  auto it = links_.find({log_.netns(), name});
  return it == links_.end() ? nullptr : &it->second;
}

Result<std::optional<LinkInfo>> RecordingLinks::get(const std::string& name) {
  if (auto* l = find(name)) return std::optional<LinkInfo>(*l);
  return std::optional<LinkInfo>();
}

Result<std::vector<LinkInfo>> RecordingLinks::list() {
  std::vector<LinkInfo> out;
  for (const auto& [key, info] : links_)
    if (key.first == log_.netns()) out.push_back(info);
  return out;
}

Result<std::vector<LinkStats>> RecordingLinks::statistics() {
  std::vector<LinkStats> out;
  for (const auto& [key, info] : links_)
    if (key.first == log_.netns()) out.push_back({info.name, {}});
  return out;
}

std::vector<std::string> RecordingLinks::addresses_in(const std::string& netns, const std::string& dev) const {
  auto it = addresses_.find({netns, dev});
  return it == addresses_.end() ? std::vector<std::string>{} : it->second;
}

Result<void> RecordingLinks::add_veth(const VethSpec& spec) {
  std::vector<std::string> cmd{"ip", "link", "add", spec.name};
  if (spec.mtu) cmd.insert(cmd.end(), {"mtu", std::to_string(spec.mtu)});
  cmd.insert(cmd.end(), {"type", "veth", "peer", "name", spec.peer});
  if (!spec.peer_netns.empty()) cmd.insert(cmd.end(), {"netns", spec.peer_netns});
  log_.record("create veth pair " + spec.name + "/" + spec.peer, shell_join(cmd));
  const std::string peer_ns = spec.peer_netns.empty() ? log_.netns() : spec.peer_netns;
  unsigned mtu = spec.mtu ? spec.mtu : 1500;
  links_[{log_.netns(), spec.name}] = LinkInfo{0, spec.name, "veth", spec.alias, false, false, mtu};
  links_[{peer_ns, spec.peer}] = LinkInfo{0, spec.peer, "veth", spec.alias, false, false, mtu};
  if (!spec.alias.empty()) {
    log_.record("mark " + spec.name, shell_join({"ip", "link", "set", spec.name, "alias", spec.alias}));
    const std::string peer_mark = shell_join({"link", "set", spec.peer, "alias", spec.alias});
    if (spec.peer_netns.empty()) {
      log_.record("mark " + spec.peer, "ip " + peer_mark);
    } else {
      log_.record_anywhere("mark " + spec.peer, shell_join({"ip", "-n", spec.peer_netns}) + " " + peer_mark);
    }
  }
  return {};
}

Result<void> RecordingLinks::remove(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    log_.record("delete interface " + n, shell_join({"ip", "link", "del", n}));
    links_.erase({log_.netns(), n});
  }
  return {};
}

Result<void> RecordingLinks::set_up(const std::string& name, bool up) {
  log_.record(std::string(up ? "bring up " : "bring down ") + name,
              shell_join({"ip", "link", "set", name, up ? "up" : "down"}));
  if (auto* l = find(name)) l->up = up;
  return {};
}

Result<void> RecordingLinks::set_mtu(const std::string& name, unsigned mtu) {
  log_.record("set the MTU of " + name, shell_join({"ip", "link", "set", name, "mtu", std::to_string(mtu)}));
  if (auto* l = find(name)) l->mtu = mtu;
  return {};
}

Result<void> RecordingLinks::set_alias(const std::string& name, const std::string& alias) {
  log_.record("mark " + name, shell_join({"ip", "link", "set", name, "alias", alias}));
  if (auto* l = find(name)) l->alias = alias;
  return {};
}

Result<std::vector<std::string>> RecordingLinks::addresses(const std::string& dev, int* ifindex) {
  if (ifindex) *ifindex = 0;  // a plan knows no index: add_address() goes by name
  return addresses_[{log_.netns(), dev}];
}

Result<void> RecordingLinks::add_address(const std::string& dev, const std::string& cidr, int) {
  log_.record("add " + cidr + " to " + dev, shell_join({"ip", "addr", "add", cidr, "dev", dev}));
  addresses_[{log_.netns(), dev}].push_back(cidr);
  return {};
}

Result<void> RecordingLinks::remove_address(const std::string& dev, const std::string& cidr) {
  log_.record("remove " + cidr + " from " + dev, shell_join({"ip", "addr", "del", cidr, "dev", dev}));
  std::erase(addresses_[{log_.netns(), dev}], cidr);
  return {};
}

}  // namespace rxerun::sys
