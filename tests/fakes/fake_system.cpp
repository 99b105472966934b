#include "fakes/fake_system.h"

#include <algorithm>
#include <cstring>

namespace rxerun::fakes {

sys::WaitResult FakeClock::wait_until(sys::SteadyTime until, sys::Interrupt& interrupt) {
  if (interrupt.requested()) return sys::WaitResult::Interrupted;
  if (interrupt_at_ && *interrupt_at_ <= until) {
    if (*interrupt_at_ > now_) now_ = *interrupt_at_;
    interrupt_at_.reset();
    interrupt.request(SIGINT);
    return sys::WaitResult::Interrupted;
  }
  if (until == sys::SteadyTime::max()) throw std::logic_error("a test waited for ever");
  if (until > now_) {
    waits.push_back(std::chrono::duration_cast<Duration>(until - now_));
    now_ = until;
    if (on_wait) on_wait();
  }
  return sys::WaitResult::Reached;
}

namespace {
class FakeScope final : public sys::NetnsScope {
 public:
  FakeScope(FakeNetns& ns, std::string previous) : ns_(ns), previous_(std::move(previous)) {}
  ~FakeScope() override {
    ns_.log.push_back("leave " + ns_.current);
    ns_.current = previous_;
  }

 private:
  FakeNetns& ns_;
  std::string previous_;
};
}  // namespace

Result<std::unique_ptr<sys::NetnsScope>> FakeNetns::enter(const std::string& name) {
  if (!existing.count(name)) return make_error("network namespace '" + name + "' does not exist", ENOENT);
  auto scope = std::make_unique<FakeScope>(*this, current);
  current = name;
  log.push_back("enter " + name);
  return std::unique_ptr<sys::NetnsScope>(std::move(scope));
}

Result<void> FakeNetns::create(const std::string& name) {
  if (!existing.insert(name).second) return make_error("network namespace '" + name + "' exists", EEXIST);
  inodes[name] = next_inode_++;
  log.push_back("create " + name);
  if (on_create) on_create(name);
  return {};
}

Result<void> FakeNetns::remove(const std::string& name) {
  if (!existing.erase(name)) return make_error("network namespace '" + name + "' does not exist", ENOENT);
  inodes.erase(name);
  log.push_back("remove " + name);
  if (on_remove) on_remove(name);
  return {};
}

Result<std::uint64_t> FakeNetns::inode(const std::string& name) {
  if (!name.empty() && !existing.count(name))
    return make_error("network namespace '" + name + "' does not exist", ENOENT);
  auto [it, fresh] = inodes.try_emplace(name, 0);
  if (fresh) it->second = name.empty() ? 4026531840 : next_inode_++;
  return it->second;
}

Result<std::uint64_t> FakeNetns::current_inode() {
  return inode(current);
}

void FakeNetns::recreate(const std::string& name) {
  if (existing.count(name)) {
    existing.erase(name);
    inodes.erase(name);
    if (on_remove) on_remove(name);
  }
  existing.insert(name);
  inodes[name] = next_inode_++;
  if (on_create) on_create(name);
}

FakeLinks::FakeLinks(FakeNetns& netns) : netns_(netns) {
  netns_.on_create = [this](const std::string& ns) {
    add_host_link(ns, {.ifindex = 1, .name = "lo", .up = true, .carrier = true, .mtu = 65536});
  };
  netns_.on_remove = [this](const std::string& ns) {
    std::vector<std::string> names;
    for (const auto& [name, info] : links[ns]) names.push_back(name);
    for (const auto& name : names) drop(ns, name);
    links.erase(ns);
    addrs.erase(ns);
  };
}

void FakeLinks::drop(const std::string& netns, const std::string& name) {
  auto peer = peers.find({netns, name});
  if (peer != peers.end()) {
    const auto other = peer->second;
    peers.erase(peer);
    peers.erase(other);
    if (other.first != netns || other.second != name) {
      links[other.first].erase(other.second);
      addrs[other.first].erase(other.second);
    }
  }
}

sys::LinkInfo* FakeLinks::find(const std::string& netns, const std::string& name) {
  auto ns = links.find(netns);
  if (ns == links.end()) return nullptr;
  auto it = ns->second.find(name);
  return it == ns->second.end() ? nullptr : &it->second;
}

void FakeLinks::add_host_link(const std::string& netns, sys::LinkInfo info) {
  if (!info.ifindex) info.ifindex = next_ifindex++;
  links[netns][info.name] = info;
}

Result<std::optional<sys::LinkInfo>> FakeLinks::get(const std::string& name) {
  if (auto* l = find(netns_.current, name)) return std::optional<sys::LinkInfo>(*l);
  return std::optional<sys::LinkInfo>();
}

Result<std::vector<sys::LinkInfo>> FakeLinks::list() {
  std::vector<sys::LinkInfo> out;
  for (const auto& [name, info] : links[netns_.current]) out.push_back(info);
  return out;
}

Result<std::vector<sys::LinkStats>> FakeLinks::statistics() {
  std::vector<sys::LinkStats> out;
  for (const auto& [name, info] : links[netns_.current]) {
    sys::LinkStats s{name, {{"rx_packets", 0}, {"tx_packets", 0}, {"rx_bytes", 0}, {"tx_bytes", 0}}};
    for (const auto& [k, v] : stats[netns_.current][name]) s.counters[k] = v;
    out.push_back(std::move(s));
  }
  return out;
}

Result<void> FakeLinks::add_veth(const sys::VethSpec& spec) {
  const std::string peer_ns = spec.peer_netns.empty() ? netns_.current : spec.peer_netns;
  if (!spec.peer_netns.empty() && !netns_.existing.count(spec.peer_netns))
    return make_error("network namespace '" + spec.peer_netns + "' does not exist", ENOENT);
  if (find(netns_.current, spec.name) || find(peer_ns, spec.peer)) return make_error("File exists", EEXIST);
  unsigned mtu = spec.mtu ? spec.mtu : 1500;
  add_host_link(netns_.current, {0, spec.name, "veth", spec.alias, false, false, mtu});
  add_host_link(peer_ns, {0, spec.peer, "veth", spec.alias, false, false, mtu});
  peers[{netns_.current, spec.name}] = {peer_ns, spec.peer};
  peers[{peer_ns, spec.peer}] = {netns_.current, spec.name};
  log.push_back("add veth " + spec.name + "/" + spec.peer);
  return {};
}

Result<void> FakeLinks::remove(const std::vector<std::string>& names) {
  ++remove_calls;
  std::string entry = "remove";
  for (const auto& n : names) {
    entry += " " + n;
    auto* l = find(netns_.current, n);
    if (!l) continue;
    // A veth takes its peer along.
    drop(netns_.current, n);
    links[netns_.current].erase(n);
    addrs[netns_.current].erase(n);
  }
  log.push_back(entry);
  return {};
}

Result<void> FakeLinks::set_up(const std::string& name, bool up) {
  auto* l = find(netns_.current, name);
  if (!l) return make_error("no interface " + name, ENODEV);
  l->up = up;
  l->carrier = up;
  log.push_back(std::string(up ? "up " : "down ") + name);
  return {};
}

Result<void> FakeLinks::set_mtu(const std::string& name, unsigned mtu) {
  auto* l = find(netns_.current, name);
  if (!l) return make_error("no interface " + name, ENODEV);
  l->mtu = mtu;
  log.push_back("mtu " + name + " " + std::to_string(mtu));
  return {};
}

Result<void> FakeLinks::set_alias(const std::string& name, const std::string& alias) {
  auto* l = find(netns_.current, name);
  if (!l) return make_error("no interface " + name, ENODEV);
  l->alias = alias;
  log.push_back("alias " + name + " " + alias);
  return {};
}

Result<std::vector<std::string>> FakeLinks::addresses(const std::string& dev, int* ifindex) {
  const auto* link = find(netns_.current, dev);
  if (!link) return make_error("no interface " + dev, ENODEV);
  if (ifindex) *ifindex = link->ifindex;
  return addrs[netns_.current][dev];
}

Result<void> FakeLinks::add_address(const std::string& dev, const std::string& cidr, int ifindex) {
  const auto* link = find(netns_.current, dev);
  if (!link) return make_error("no interface " + dev, ENODEV);
  // The index addresses() gave is the interface's: a caller passes it on unchanged.
  if (ifindex != 0 && ifindex != link->ifindex)
    return make_error("index " + std::to_string(ifindex) + " is not " + dev + "'s", EINVAL);
  auto& list = addrs[netns_.current][dev];
  if (std::find(list.begin(), list.end(), cidr) != list.end()) return make_error("File exists", EEXIST);
  list.push_back(cidr);
  log.push_back("addr add " + cidr + " " + dev);
  return {};
}

Result<void> FakeLinks::remove_address(const std::string& dev, const std::string& cidr) {
  if (!find(netns_.current, dev)) return make_error("no interface " + dev, ENODEV);
  auto& list = addrs[netns_.current][dev];
  auto it = std::find(list.begin(), list.end(), cidr);
  if (it == list.end()) return make_error("Cannot assign requested address", EADDRNOTAVAIL);
  list.erase(it);
  log.push_back("addr del " + cidr + " " + dev);
  return {};
}

Result<std::map<std::string, sys::Feature>> FakeEthtool::features(const std::string& dev) {
  auto it = devs.find(dev);
  if (it == devs.end()) return make_error("no interface " + dev, ENODEV);
  return it->second;
}

Result<std::map<std::string, bool>> FakeEthtool::set_features(const std::string& dev,
                                                              const std::map<std::string, bool>& wanted) {
  auto it = devs.find(dev);
  if (it == devs.end()) return make_error("no interface " + dev, ENODEV);
  if (set_errno != 0) return make_error("setting features of " + dev + " failed", set_errno);
  std::string entry = "set " + dev;
  std::map<std::string, bool> changed;  // as the kernel's reply lists them
  for (const auto& [name, on] : wanted) {
    auto f = it->second.find(name);
    if (f == it->second.end()) return make_error("unknown feature " + name, EOPNOTSUPP);
    if (f->second.fixed && f->second.active != on) return make_error(name + " is fixed", EOPNOTSUPP);
    if (f->second.active != on) changed[name] = on;
    f->second.active = on;
    entry += " " + name + (on ? "=on" : "=off");
  }
  for (const auto& [cause, effect] : drags) {
    if (!changed.count(cause.first) || changed.at(cause.first) != cause.second) continue;
    auto f = it->second.find(effect.first);
    if (f != it->second.end() && f->second.active != effect.second) {
      f->second.active = effect.second;
      changed[effect.first] = effect.second;
    }
  }
  log.push_back(entry);
  return changed;
}

Result<std::string> FakeSysctl::read(const std::string& key) {
  auto it = values.find(key);
  if (it == values.end()) return make_error("no sysctl " + key, ENOENT);
  return it->second;
}

Result<void> FakeSysctl::write(const std::string& key, const std::string& value) {
  if (!values.count(key)) return make_error("no sysctl " + key, ENOENT);
  if (read_only.count(key)) return make_error("cannot write sysctl " + key, EACCES);
  values[key] = value;
  log.push_back(key + "=" + value);
  return {};
}

Result<nlohmann::json> FakeNft::run(const std::string& command) {
  if (before_each) before_each(*this);
  commands.push_back(command);
  for (const auto& prefix : failing)
    if (command.rfind(prefix, 0) == 0)
      return make_error(std::string("Error: ") + std::strerror(error_code), error_code);
  for (const auto& [prefix, reply] : replies)
    if (command.rfind(prefix, 0) == 0) return reply;
  return apply(command);
}

Result<std::optional<std::string>> FakeQdiscs::root_kind(const std::string& dev) {
  auto it = root.find(dev);
  if (it == root.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<void> FakeQdiscs::add_netem(const std::string& dev, const sys::NetemSpec& spec) {
  if (!netem) return make_error("netem is not available", ENOENT);
  root[dev] = "netem";
  specs[dev] = spec;
  log.push_back("netem " + dev);
  return {};
}

Result<sys::QdiscStats> FakeQdiscs::root_stats(const std::string& dev) {
  if (!root.count(dev)) return make_error("no qdisc on " + dev, ENOENT);
  return stats;
}

Result<void> FakeQdiscs::remove_root(const std::string& dev) {
  if (!root.erase(dev)) return make_error("no qdisc on " + dev, ENOENT);
  specs.erase(dev);
  log.push_back("remove " + dev);
  return {};
}

Result<sys::PingResult> FakePinger::ping(const sys::PingSpec& spec, sys::SteadyTime deadline, sys::Interrupt&) {
  calls.push_back(spec);
  if (error) return *error;
  sys::PingResult r;
  r.sent = spec.count;
  if (takes && clock) {
    // The ping stops at the deadline with what it has sent by then.
    const auto now = clock->now();
    if (deadline - now < *takes) {
      const auto left = std::chrono::duration_cast<Duration>(deadline - now);
      r.sent = std::max(1, static_cast<int>(spec.count * left.count() / std::max<long long>(1, takes->count())));
      clock->advance(left);
    } else {
      clock->advance(*takes);
    }
  }
  if (!send_error.empty()) {
    r.send_errors = r.sent;
    r.send_error = send_error;
  }
  r.received = send_error.empty() ? (replies ? std::min(*replies, r.sent) : r.sent) : 0;
  if (r.received > 0) {
    r.rtt_min_ms = 0.05;
    r.rtt_avg_ms = 0.07;
    r.rtt_max_ms = 0.1;
  }
  return r;
}

FakeRdma::Device* FakeRdma::find(const std::string& name) {
  for (auto& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

void FakeRdma::prune() {
  std::erase_if(devices, [&](const Device& d) { return !links_.find(d.netns, d.netdev); });
}

bool FakeRdma::used_by_other(const std::string& name) const {
  for (const auto& m : loaded) {
    auto it = modules.find(m);
    if (it != modules.end() && std::find(it->second.begin(), it->second.end(), name) != it->second.end()) return true;
  }
  return false;
}

Result<bool> FakeRdma::module_loaded(const std::string& name) {
  return loaded.count(name) > 0;
}

Result<std::vector<std::string>> FakeRdma::modules_to_load(const std::string& name) {
  auto it = modules.find(name);
  if (it == modules.end()) return make_error("the kernel has no module " + name, ENOENT);
  std::vector<std::string> out;
  if (loaded.count(name)) return out;
  out.push_back(name);
  for (const auto& dep : it->second)
    if (!loaded.count(dep)) out.push_back(dep);
  return out;
}

Result<void> FakeRdma::load_module(const std::string& name) {
  auto it = modules.find(name);
  if (it == modules.end()) return make_error("the kernel has no module " + name, ENOENT);
  if (load_errno) return make_error("cannot load module " + name, load_errno);
  for (auto dep = it->second.rbegin(); dep != it->second.rend(); ++dep) loaded.insert(*dep);
  if (loaded.insert(name).second) log.push_back("load " + name);
  return {};
}

Result<void> FakeRdma::unload_module(const std::string& name) {
  if (!loaded.count(name)) return make_error("module " + name + " is not loaded", ENOENT);
  if (used_by_other(name)) return make_error("module " + name + " is in use", EBUSY);
  if (auto b = busy.find(name); b != busy.end() && b->second > 0) {
    --b->second;
    return make_error("module " + name + " is in use", EBUSY);
  }
  loaded.erase(name);
  log.push_back("unload " + name);
  if (name == "rdma_rxe") devices.clear();  // the kernel deletes every rxe device
  return {};
}

Result<std::vector<sys::RxeDevice>> FakeRdma::rxe_devices() {
  prune();
  std::vector<sys::RxeDevice> out;
  for (auto& d : devices) {
    if (d.hidden > 0) {
      --d.hidden;
      continue;
    }
    const bool here = d.netns == netns_.current;
    const auto* netdev = here ? links_.find(d.netns, d.netdev) : nullptr;
    out.push_back({.index = d.index,
                   .name = d.name,
                   .netdev = here ? d.netdev : "",
                   .parent = d.netdev,
                   .netdev_ifindex = netdev ? netdev->ifindex : 0});
  }
  return out;
}

Result<void> FakeRdma::add_rxe(const std::string& name, const std::string& netdev) {
  prune();
  if (!loaded.count("rdma_rxe")) return make_error("cannot add rxe device " + name + ": Invalid argument", EINVAL);
  if (find(name)) return make_error("cannot add rxe device " + name + ": Too many open files in system", ENFILE);
  if (!links_.find(netns_.current, netdev))
    return make_error("cannot add rxe device " + name + ": No such device", ENODEV);
  for (const auto& d : devices)
    if (d.netns == netns_.current && d.netdev == netdev)
      return make_error("cannot add rxe device " + name + ": File exists", EEXIST);
  devices.push_back({next_index_++, name, netns_.current, netdev, hidden_for});
  log.push_back("add " + name + " " + netdev);
  return {};
}

Result<void> FakeRdma::remove_device(unsigned index) {
  prune();
  auto it = std::find_if(devices.begin(), devices.end(), [&](const Device& d) { return d.index == index; });
  if (it == devices.end()) return make_error("no RDMA device " + std::to_string(index), ENODEV);
  log.push_back("delete " + it->name);
  devices.erase(it);
  return {};
}

Result<sys::PortState> FakeRdma::port_state(const std::string& dev, unsigned port) {
  prune();
  const Device* d = find(dev);
  if (!d) return make_error("no RDMA device " + dev, ENODEV);
  if (port != 1) return make_error("RDMA device " + dev + " has no port " + std::to_string(port), ENOENT);
  int state = 1;
  if (state_of) {
    state = state_of(*d);
  } else if (const auto* l = links_.find(d->netns, d->netdev); l && l->up && l->carrier) {
    state = 4;
  }
  static const char* const kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE"};
  const auto* l = links_.find(d->netns, d->netdev);
  sys::PortState s{state, state >= 0 && state <= 4 ? kNames[state] : "UNKNOWN", 3, "Disabled"};
  if (state == 4) {
    s.phys_state = 5;
    s.phys_state_name = "LinkUp";
  } else if (l && l->up) {
    s.phys_state = 2;
    s.phys_state_name = "Polling";
  }
  return s;
}

Result<sys::PortMtu> FakeRdma::port_mtu(const std::string& dev, unsigned port) {
  if (!mtu) return make_error("ibv_devinfo -d " + dev + " -i " + std::to_string(port) + ": exit 1", EIO);
  return *mtu;
}

Result<std::vector<sys::GidEntry>> FakeRdma::gids(const std::string& dev, unsigned port) {
  prune();
  auto* d = find(dev);
  if (!d) return make_error("no RDMA device " + dev, ENODEV);
  if (port != 1) return make_error("RDMA device " + dev + " has no port " + std::to_string(port), ENOENT);
  if (auto it = gid_tables.find(dev); it != gid_tables.end()) return it->second;
  std::vector<sys::GidEntry> out = {{0, "fe80::1", "RoCE v2", d->netdev}};
  for (const auto& cidr : links_.addrs[d->netns][d->netdev]) {
    const std::string addr = cidr.substr(0, cidr.find('/'));
    if (addr.find(':') == std::string::npos)
      out.push_back({static_cast<unsigned>(out.size()), "::ffff:" + addr, "RoCE v2", d->netdev});
  }
  return out;
}

Result<sys::Counters> FakeRdma::counters(const std::string& dev, unsigned port) {
  prune();
  if (!find(dev)) return make_error("no RDMA device " + dev, ENODEV);
  if (port != 1) return make_error("RDMA device " + dev + " has no port " + std::to_string(port), ENOENT);
  return device_counters[dev];
}

Result<bool> FakeRdma::udp4791_listening() {
  prune();
  if (!loaded.count("rdma_rxe")) return false;
  if (!per_netns_udp) return netns_.current.empty();
  return std::any_of(devices.begin(), devices.end(), [&](const Device& d) { return d.netns == netns_.current; });
}

Result<bool> FakeRdma::cm_listening(std::uint16_t port) {
  ++cm_probes;
  cm_probed_ports.push_back(port);
  if (cm_probe_error) return make_error("cannot list the rdma_cm IDs of RDMA device 1", EOPNOTSUPP);
  return cm_probes > cm_listen_after;
}

}  // namespace rxerun::fakes
