#include "sys/model/rdma.h"

#include <algorithm>
#include <cerrno>

#include "base/strings.h"

namespace rxerun::sys {

ModelRdma::ModelRdma(ModelKernel& k, const ModelLinks& links, ModelModules& modules)
    : k_(k), links_(links), modules_(modules) {
  modules_.unloaded = [this](const std::string& name) {
    if (name == "rdma_rxe") std::erase_if(devices, [](const Device& d) { return d.type == kRxeType; });
    if (name == "siw") std::erase_if(devices, [](const Device& d) { return d.type == kSiwType; });
  };
}

ModelRdma::Device* ModelRdma::find(const std::string& name) {
  for (auto& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

void ModelRdma::prune() {
  std::erase_if(devices, [&](const Device& d) {
    if (d.netdev_outside) return false;
    const auto* l = links_.find(d.netns, d.netdev);
    return !l || (d.netdev_ifindex != 0 && l->ifindex != d.netdev_ifindex);
  });
}

Result<const ModelRdma::Device*> ModelRdma::port_of(const std::string& dev, unsigned port) {
  prune();
  const Device* d = find(dev);
  if (!d) return make_error("no RDMA device " + dev, ENODEV);
  if (port != kRxePort) return make_error("RDMA device " + dev + " has no port " + std::to_string(port), ENOENT);
  return d;
}

Result<std::vector<SoftDevice>> ModelRdma::soft_devices() {
  if (auto f = k_.fault("rdma.soft_devices")) return *f;
  prune();
  std::vector<SoftDevice> out;
  for (const auto& d : devices) {
    if (auto h = hidden.find(d.index); h != hidden.end() && h->second > 0) {
      --h->second;
      continue;
    }
    // Names are global; the netdev (and its index) is named only in its own namespace.
    const bool here = d.netns == k_.netns;
    const auto* netdev = here ? links_.find(d.netns, d.netdev) : nullptr;
    out.push_back({.index = d.index,
                   .name = d.name,
                   .type = d.type,
                   .netdev = here ? d.netdev : "",
                   .parent = d.netdev,
                   .netdev_ifindex = netdev ? netdev->ifindex : 0});
  }
  return out;
}

Result<void> ModelRdma::add_soft_device(const std::string& type, const std::string& name, const std::string& netdev) {
  if (auto f = k_.fault("rdma.add_soft_device", name)) return *f;
  prune();
  const std::string what = "cannot add " + type + " device " + name;
  if (!*modules_.loaded(type == kSiwType ? "siw" : "rdma_rxe")) return make_error(what + ": Invalid argument", EINVAL);
  if (find(name)) return make_error(what + ": Too many open files in system", ENFILE);
  if (!links_.may_exist(k_.netns, netdev)) return make_error(what + ": No such device", ENODEV);
  for (const auto& d : devices)
    if (d.netns == k_.netns && d.netdev == netdev && d.type == type) return make_error(what + ": File exists", EEXIST);
  const LinkInfo* link = links_.find(k_.netns, netdev);
  devices.push_back({.index = next_index_++,
                     .name = name,
                     .netns = k_.netns,
                     .netdev = netdev,
                     .type = type,
                     .netdev_ifindex = link ? link->ifindex : 0,
                     .netdev_outside = !link});
  if (hidden_for) hidden[devices.back().index] = hidden_for;
  k_.did("rdma", "add " + type + " device " + name + " over " + netdev,
         shell_join({"rdma", "link", "add", name, "type", type, "netdev", netdev}));
  return {};
}

Result<void> ModelRdma::remove_device(unsigned index) {
  if (auto f = k_.fault("rdma.remove_device", std::to_string(index))) return *f;
  prune();
  auto it = std::find_if(devices.begin(), devices.end(), [&](const Device& d) { return d.index == index; });
  if (it == devices.end()) return make_error("no RDMA device " + std::to_string(index), ENODEV);
  const std::string name = it->name;
  devices.erase(it);
  // Device names are global: the command works from any namespace.
  k_.did_anywhere("rdma", "delete rxe device " + name, shell_join({"rdma", "link", "delete", name}));
  return {};
}

Result<PortState> ModelRdma::port_state(const std::string& dev, unsigned port) {
  auto found = port_of(dev, port);
  if (!found && !k_.refused(found.error())) return PortState{4, "ACTIVE", 5, "LinkUp"};  // perhaps the host's
  if (!found) return found.error();
  if (auto f = k_.fault("rdma.port_state", dev)) return *f;
  const Device& d = **found;
  const auto* l = links_.find(d.netns, d.netdev);
  int state = d.netdev_outside || (l && l->up && l->carrier) ? 4 : 1;
  if (state_of) state = state_of(d);
  static const char* const kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE"};
  PortState s{state, state >= 0 && state <= 4 ? kNames[state] : "UNKNOWN", 3, "Disabled"};
  if (state == 4) {
    s.phys_state = 5;
    s.phys_state_name = "LinkUp";
  } else if (l && l->up) {
    s.phys_state = 2;
    s.phys_state_name = "Polling";
  }
  return s;
}

Result<PortMtu> ModelRdma::port_mtu(const std::string& dev, unsigned port) {
  if (auto f = k_.fault("rdma.port_mtu", dev)) return *f;
  (void)port;
  return PortMtu{1024, 4096};
}

Result<std::vector<GidEntry>> ModelRdma::gids(const std::string& dev, unsigned port) {
  auto found = port_of(dev, port);
  if (!found) {
    if (k_.refused(found.error())) return found.error();
    return std::vector<GidEntry>{};  // a device the plan did not add
  }
  if (auto it = gid_tables.find(dev); it != gid_tables.end()) return it->second;
  const Device& d = **found;
  if (d.type == kSiwType) return std::vector<GidEntry>{{0, "200::", "IB/RoCE v1", ""}};
  std::vector<GidEntry> out = {{0, "fe80::1", "RoCE v2", d.netdev}};
  auto here = links_.addrs.find(d.netns);
  if (here == links_.addrs.end()) return out;
  auto addresses = here->second.find(d.netdev);
  if (addresses == here->second.end()) return out;
  for (const auto& cidr : addresses->second) {
    const std::string addr = cidr.substr(0, cidr.find('/'));
    if (addr.find(':') == std::string::npos)
      out.push_back({static_cast<unsigned>(out.size()), "::ffff:" + addr, "RoCE v2", d.netdev});
  }
  return out;
}

Result<Counters> ModelRdma::counters(const std::string& dev, unsigned port) {
  auto found = port_of(dev, port);
  if (!found && k_.refused(found.error())) return found.error();
  return device_counters[dev];  // nothing counted unless a test says so
}

Result<bool> ModelRdma::udp4791_listening() {
  prune();
  if (k_.open_world) return true;  // a plan previews the run where everything goes as intended
  if (!*modules_.loaded("rdma_rxe")) return false;
  if (!per_netns_udp) return k_.netns.empty();
  return std::any_of(devices.begin(), devices.end(),
                     [&](const Device& d) { return d.netns == k_.netns && d.type == kRxeType; });
}

Result<bool> ModelRdma::cm_listening(std::uint16_t port) {
  ++cm_probes;
  cm_probed_ports.push_back(port);
  if (auto f = k_.fault("rdma.cm_listening")) return *f;
  return cm_probes > cm_listen_after;
}

}  // namespace rxerun::sys
