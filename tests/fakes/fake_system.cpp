#include "fakes/fake_system.h"

#include <algorithm>
#include <cstring>

#include "base/strings.h"

namespace rxerun::fakes {

std::uint64_t FakeKernelLog::now() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.now().time_since_epoch()).count());
}

std::vector<sys::KernelRecord> FakeKernelLog::records(std::uint64_t since) {
  ++reads;
  std::vector<sys::KernelRecord> out;
  for (const auto& e : entries)
    if (e.usec >= since) out.push_back(e);
  return out;
}

void FakeKernelLog::log(const std::string& text, int facility) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    const std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty() || nl != std::string::npos) entries.push_back({facility, 4, now(), line});
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
}

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
  if (!has(name)) return make_error("network namespace '" + name + "' does not exist", ENOENT);
  auto scope = std::make_unique<FakeScope>(*this, current);
  current = name;
  log.push_back("enter " + name);
  return std::unique_ptr<sys::NetnsScope>(std::move(scope));
}

Result<void> FakeNetns::create(const std::string& name) {
  if (auto r = add_netns(name); !r) return r;
  inodes[name] = next_inode_++;
  log.push_back("create " + name);
  return {};
}

Result<void> FakeNetns::remove(const std::string& name) {
  if (auto r = delete_netns(name); !r) return r;
  inodes.erase(name);
  log.push_back("remove " + name);
  return {};
}

Result<std::uint64_t> FakeNetns::inode(const std::string& name) {
  if (!name.empty() && !has(name)) return make_error("network namespace '" + name + "' does not exist", ENOENT);
  auto [it, fresh] = inodes.try_emplace(name, 0);
  if (fresh) it->second = name.empty() ? 4026531840 : next_inode_++;
  return it->second;
}

Result<std::uint64_t> FakeNetns::current_inode() {
  return inode(current);
}

void FakeNetns::recreate(const std::string& name) {
  if (has(name)) {
    (void)delete_netns(name);
    inodes.erase(name);
  }
  (void)add_netns(name);
  inodes[name] = next_inode_++;
}

FakeLinks::FakeLinks(FakeNetns& netns) : netns_(netns) {
  netns_.set_links(this);
}

Result<std::optional<sys::LinkInfo>> FakeLinks::get(const std::string& name) {
  if (auto* l = find(netns_.current, name)) return std::optional<sys::LinkInfo>(*l);
  return std::optional<sys::LinkInfo>();
}

Result<std::vector<sys::LinkInfo>> FakeLinks::list() {
  return links_in(netns_.current);
}

Result<std::vector<sys::LinkStats>> FakeLinks::statistics() {
  std::vector<sys::LinkStats> out;
  for (const auto& info : links_in(netns_.current)) {
    const std::string& name = info.name;
    sys::LinkStats s{name, {{"rx_packets", 0}, {"tx_packets", 0}, {"rx_bytes", 0}, {"tx_bytes", 0}}};
    for (const auto& [k, v] : stats[netns_.current][name]) s.counters[k] = v;
    out.push_back(std::move(s));
  }
  return out;
}

Result<void> FakeLinks::add_veth(const sys::VethSpec& spec) {
  if (!spec.peer_netns.empty() && !netns_.has(spec.peer_netns))
    return make_error("network namespace '" + spec.peer_netns + "' does not exist", ENOENT);
  if (auto r = add_veth_pair(netns_.current, spec); !r) return r;
  log.push_back("add veth " + spec.name + "/" + spec.peer);
  return {};
}

Result<void> FakeLinks::remove(const std::vector<std::string>& names) {
  ++remove_calls;
  std::string entry = "remove";
  for (const auto& n : names) {
    entry += " " + n;
    delete_link(netns_.current, n);
  }
  log.push_back(entry);
  return {};
}

Result<void> FakeLinks::set_up(const std::string& name, bool up) {
  if (auto r = set_link_up(netns_.current, name, up); !r) return r;
  log.push_back(std::string(up ? "up " : "down ") + name);
  return {};
}

Result<void> FakeLinks::set_mtu(const std::string& name, unsigned mtu) {
  if (auto r = set_link_mtu(netns_.current, name, mtu); !r) return r;
  log.push_back("mtu " + name + " " + std::to_string(mtu));
  return {};
}

Result<void> FakeLinks::set_alias(const std::string& name, const std::string& alias) {
  if (auto r = set_link_alias(netns_.current, name, alias); !r) return r;
  log.push_back("alias " + name + " " + alias);
  return {};
}

Result<std::vector<std::string>> FakeLinks::addresses(const std::string& dev, int* ifindex) {
  return addresses_of(netns_.current, dev, ifindex);
}

Result<void> FakeLinks::add_address(const std::string& dev, const std::string& cidr, int ifindex) {
  if (auto r = add_address_to(netns_.current, dev, cidr, ifindex); !r) return r;
  log.push_back("addr add " + cidr + " " + dev);
  return {};
}

Result<void> FakeLinks::remove_address(const std::string& dev, const std::string& cidr) {
  if (auto r = remove_address_from(netns_.current, dev, cidr); !r) return r;
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
  return value_of(key);
}

Result<void> FakeSysctl::write(const std::string& key, const std::string& value) {
  if (find(key) && read_only.count(key)) return make_error("cannot write sysctl " + key, EACCES);
  if (auto r = store(key, value); !r) return r;
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
  return root_of(dev);
}

Result<void> FakeQdiscs::add_netem(const std::string& dev, const sys::NetemSpec& spec) {
  if (!netem) return make_error("netem is not available", ENOENT);
  if (auto r = attach_netem(dev, spec); !r) return r;
  log.push_back("netem " + dev);
  return {};
}

Result<sys::QdiscStats> FakeQdiscs::root_stats(const std::string& dev) {
  if (!root.count(dev)) return make_error("no qdisc on " + dev, ENOENT);
  return stats;
}

Result<void> FakeQdiscs::remove_root(const std::string& dev) {
  if (auto r = detach_root(dev); !r) return r;
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

FakeRdma::FakeRdma(FakeNetns& netns, FakeLinks& links) : netns_(netns), links_(links) {
  modules = {
      {"rdma_rxe", {"ib_uverbs", "ib_core"}},
      {"rdma_ucm", {"rdma_cm", "iw_cm", "ib_cm", "ib_uverbs", "ib_core"}},
      {"rdma_cm", {"iw_cm", "ib_cm", "ib_core"}},
      {"iw_cm", {"ib_core"}},
      {"ib_cm", {"ib_core"}},
      {"ib_uverbs", {"ib_core"}},
      {"ib_core", {}},
      {"siw", {"ib_core"}},
  };
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

Result<void> FakeRdma::load_module(const std::string& name, const std::string& options) {
  if (!modules.count(name)) return make_error("the kernel has no module " + name, ENOENT);
  if (load_errno) return make_error("cannot load module " + name, load_errno);
  const bool fresh = !loaded.count(name);
  std::map<std::string, std::string> given;
  for (const auto& o : split_words(options)) {
    const auto eq = o.find('=');
    const std::string key = o.substr(0, eq);
    if (eq == std::string::npos || !known_parameters[name].count(key))
      return make_error("cannot load module " + name + ": Invalid argument", EINVAL);
    given[key] = o.substr(eq + 1);
  }
  load(name);
  if (fresh) {
    log.push_back("load " + name + (options.empty() ? "" : " " + options));
    parameters[name] = known_parameters[name];
    for (const auto& [k, v] : given) {
      // Bool parameters show as Y or N, whatever they were given as.
      const std::string& before = parameters[name][k];
      const bool is_bool = before == "Y" || before == "N";
      parameters[name][k] = is_bool ? (v == "1" || v == "y" || v == "Y" ? "Y" : "N") : v;
    }
  }
  return {};
}

Result<std::map<std::string, std::string>> FakeRdma::module_parameters(const std::string& name) {
  if (!loaded.count(name)) return make_error("module " + name + " is not loaded", ENOENT);
  return parameters[name];
}

Result<void> FakeRdma::unload_module(const std::string& name) {
  if (auto b = busy.find(name); b != busy.end() && b->second > 0 && loaded.count(name) && !in_use(name)) {
    --b->second;
    return make_error("module " + name + " is in use", EBUSY);
  }
  if (auto r = unload(name); !r) return r;
  log.push_back("unload " + name);
  return {};
}

Result<std::vector<sys::SoftDevice>> FakeRdma::soft_devices() {
  prune(links_);
  std::vector<sys::SoftDevice> out;
  for (auto& d : seen_from(netns_.current, links_)) {
    if (auto h = hidden.find(d.index); h != hidden.end() && h->second > 0) {
      --h->second;
      continue;
    }
    out.push_back(std::move(d));
  }
  return out;
}

Result<void> FakeRdma::add_soft_device(const std::string& type, const std::string& name, const std::string& netdev) {
  prune(links_);
  if (!loaded.count(type == sys::kSiwType ? "siw" : "rdma_rxe"))
    return make_error("cannot add " + type + " device " + name + ": Invalid argument", EINVAL);
  if (auto r = create_device(type, name, netns_.current, netdev, links_); !r) return r;
  if (hidden_for) hidden[devices.back().index] = hidden_for;
  log.push_back("add " + name + " " + netdev);
  return {};
}

Result<void> FakeRdma::remove_device(unsigned index) {
  prune(links_);
  auto name = delete_device(index);
  if (!name) return name.error();
  log.push_back("delete " + *name);
  return {};
}

Result<sys::PortState> FakeRdma::port_state(const std::string& dev, unsigned port) {
  prune(links_);
  auto found = port_of(dev, port);
  if (!found) return found.error();
  const Device* d = *found;
  if (port_fault) {
    if (auto fault = port_fault(*d)) return *fault;
  }
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
  prune(links_);
  if (auto found = port_of(dev, port); !found) return found.error();
  if (auto it = gid_tables.find(dev); it != gid_tables.end()) return it->second;
  return gid_table(dev, port, links_);
}

Result<sys::Counters> FakeRdma::counters(const std::string& dev, unsigned port) {
  prune(links_);
  if (auto found = port_of(dev, port); !found) return found.error();
  return device_counters[dev];
}

Result<bool> FakeRdma::udp4791_listening() {
  prune(links_);
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
