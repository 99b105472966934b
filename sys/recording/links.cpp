#include "sys/recording/links.h"

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

// A plan does not read the host: an interface it did not make may be the
// host's, unseen, and what the plan does to one is shown and remembered.
//
// The kernel deletes a veth's other end with it; the plan keeps that end
// until its own delete, so that cleanup's preview lists the delete of every
// marked interface in each namespace it removes, the other end's included.
// This is the one place the plan's model leaves the kernel's rule.
RecordingLinks::RecordingLinks(ActionLog& log) : log_(log) {
  model_.unseen_host_links = true;
  model_.peer_goes_along = false;
}

Result<std::optional<LinkInfo>> RecordingLinks::get(const std::string& name) {
  if (const auto* l = model_.find(log_.netns(), name)) return std::optional<LinkInfo>(*l);
  return std::optional<LinkInfo>();
}

Result<std::vector<LinkInfo>> RecordingLinks::list() {
  return model_.links_in(log_.netns());
}

Result<std::vector<LinkStats>> RecordingLinks::statistics() {
  std::vector<LinkStats> out;
  for (const auto& info : model_.links_in(log_.netns())) out.push_back({info.name, {}});
  return out;
}

Result<void> RecordingLinks::add_veth(const VethSpec& spec) {
  if (auto r = model_.add_veth_pair(log_.netns(), spec); refused(r)) return r;
  std::vector<std::string> cmd{"ip", "link", "add", spec.name};
  if (spec.mtu) cmd.insert(cmd.end(), {"mtu", std::to_string(spec.mtu)});
  cmd.insert(cmd.end(), {"type", "veth", "peer", "name", spec.peer});
  if (!spec.peer_netns.empty()) cmd.insert(cmd.end(), {"netns", spec.peer_netns});
  log_.record("create veth pair " + spec.name + "/" + spec.peer, shell_join(cmd));
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
    model_.delete_link(log_.netns(), n);
  }
  return {};
}

Result<void> RecordingLinks::set_up(const std::string& name, bool up) {
  if (auto r = model_.set_link_up(log_.netns(), name, up); refused(r)) return r;
  log_.record(std::string(up ? "bring up " : "bring down ") + name,
              shell_join({"ip", "link", "set", name, up ? "up" : "down"}));
  return {};
}

Result<void> RecordingLinks::set_mtu(const std::string& name, unsigned mtu) {
  if (auto r = model_.set_link_mtu(log_.netns(), name, mtu); refused(r)) return r;
  log_.record("set the MTU of " + name, shell_join({"ip", "link", "set", name, "mtu", std::to_string(mtu)}));
  return {};
}

Result<void> RecordingLinks::set_alias(const std::string& name, const std::string& alias) {
  if (auto r = model_.set_link_alias(log_.netns(), name, alias); refused(r)) return r;
  log_.record("mark " + name, shell_join({"ip", "link", "set", name, "alias", alias}));
  return {};
}

Result<std::vector<std::string>> RecordingLinks::addresses(const std::string& dev, int* ifindex) {
  return model_.addresses_of(log_.netns(), dev, ifindex);
}

Result<void> RecordingLinks::add_address(const std::string& dev, const std::string& cidr, int ifindex) {
  if (auto r = model_.add_address_to(log_.netns(), dev, cidr, ifindex); refused(r)) return r;
  log_.record("add " + cidr + " to " + dev, shell_join({"ip", "addr", "add", cidr, "dev", dev}));
  return {};
}

Result<void> RecordingLinks::remove_address(const std::string& dev, const std::string& cidr) {
  if (auto r = model_.remove_address_from(log_.netns(), dev, cidr); refused(r)) return r;
  log_.record("remove " + cidr + " from " + dev, shell_join({"ip", "addr", "del", cidr, "dev", dev}));
  return {};
}

}  // namespace rxerun::sys
