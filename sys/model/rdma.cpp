#include "sys/model/rdma.h"

#include <algorithm>
#include <cerrno>

#include "sys/model/links.h"

namespace rxerun::sys {

RdmaModel::Device* RdmaModel::find(const std::string& name) {
  for (auto& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

Result<const RdmaModel::Device*> RdmaModel::port_of(const std::string& dev, unsigned port) const {
  auto d = std::find_if(devices.begin(), devices.end(), [&](const Device& x) { return x.name == dev; });
  if (d == devices.end()) return make_error("no RDMA device " + dev, ENODEV);
  if (port != 1) return make_error("RDMA device " + dev + " has no port " + std::to_string(port), ENOENT);
  return &*d;
}

void RdmaModel::prune(const LinksModel& links) {
  std::erase_if(devices, [&](const Device& d) {
    if (d.netdev_outside) return false;
    const auto* l = links.find(d.netns, d.netdev);
    return !l || (d.netdev_ifindex != 0 && l->ifindex != d.netdev_ifindex);
  });
}

std::vector<SoftDevice> RdmaModel::seen_from(const std::string& netns, const LinksModel& links) const {
  std::vector<SoftDevice> out;
  for (const auto& d : devices) {
    const bool here = d.netns == netns;
    const auto* netdev = here ? links.find(d.netns, d.netdev) : nullptr;
    out.push_back({.index = d.index,
                   .name = d.name,
                   .type = d.type,
                   .netdev = here ? d.netdev : "",
                   .parent = d.netdev,
                   .netdev_ifindex = netdev ? netdev->ifindex : 0});
  }
  return out;
}

Result<void> RdmaModel::create_device(const std::string& type, const std::string& name, const std::string& netns,
                                      const std::string& netdev, const LinksModel& links) {
  const std::string what = "cannot add " + type + " device " + name;
  if (find(name)) return make_error(what + ": Too many open files in system", ENFILE);
  if (!links.may_exist(netns, netdev)) return make_error(what + ": No such device", ENODEV);
  const LinkInfo* link = links.find(netns, netdev);
  for (const auto& d : devices)
    if (d.netns == netns && d.netdev == netdev && d.type == type) return make_error(what + ": File exists", EEXIST);
  devices.push_back({.index = next_index_++,
                     .name = name,
                     .netns = netns,
                     .netdev = netdev,
                     .type = type,
                     .netdev_ifindex = link ? link->ifindex : 0,
                     .netdev_outside = !link});
  return {};
}

Result<std::string> RdmaModel::delete_device(unsigned index) {
  auto it = std::find_if(devices.begin(), devices.end(), [&](const Device& d) { return d.index == index; });
  if (it == devices.end()) return make_error("no RDMA device " + std::to_string(index), ENODEV);
  std::string name = std::move(it->name);
  devices.erase(it);
  return name;
}

Result<std::vector<GidEntry>> RdmaModel::gid_table(const std::string& dev, unsigned port,
                                                   const LinksModel& links) const {
  auto found = port_of(dev, port);
  if (!found) return found.error();
  const Device* d = *found;
  if (d->type == kSiwType) return std::vector<GidEntry>{{0, "200::", "IB/RoCE v1", ""}};
  std::vector<GidEntry> out = {{0, "fe80::1", "RoCE v2", d->netdev}};
  auto addresses = links.addresses_of(d->netns, d->netdev);
  if (!addresses) return out;
  for (const auto& cidr : *addresses) {
    const std::string addr = cidr.substr(0, cidr.find('/'));
    if (addr.find(':') == std::string::npos)
      out.push_back({static_cast<unsigned>(out.size()), "::ffff:" + addr, "RoCE v2", d->netdev});
  }
  return out;
}

bool RdmaModel::in_use(const std::string& name) const {
  for (const auto& m : loaded) {
    auto it = modules.find(m);
    if (it != modules.end() && std::find(it->second.begin(), it->second.end(), name) != it->second.end()) return true;
  }
  return false;
}

void RdmaModel::load(const std::string& name) {
  if (auto it = modules.find(name); it != modules.end())
    for (const auto& dep : it->second) loaded.insert(dep);
  loaded.insert(name);
}

Result<void> RdmaModel::unload(const std::string& name) {
  if (!loaded.count(name)) return make_error("module " + name + " is not loaded", ENOENT);
  if (in_use(name)) return make_error("module " + name + " is in use", EBUSY);
  loaded.erase(name);
  // The driver's exit deletes its devices.
  if (name == "rdma_rxe") std::erase_if(devices, [](const Device& d) { return d.type == kRxeType; });
  if (name == "siw") std::erase_if(devices, [](const Device& d) { return d.type == kSiwType; });
  return {};
}

}  // namespace rxerun::sys
