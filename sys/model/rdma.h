#pragma once
// Soft-RoCE's kernel state, in memory (sys/model/links.h says why
// sys/model/ exists): the RDMA modules loaded, and rxe devices over the
// interfaces of a LinksModel, with the kernel's rules for both.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "sys/rdma.h"

namespace rxerun::sys {

class LinksModel;

class RdmaModel {
 public:
  struct Device {
    unsigned index = 0;
    std::string name, netns, netdev;
    std::string type = kRxeType;
    // The netdev's index when the device was added: the device is bound to
    // that interface, not to its name. 0 when not known (a test's device).
    int netdev_ifindex = 0;
    // Over an interface the LinksModel does not hold but may not see (the
    // host's, in a plan): the model cannot see it go, so the device stays.
    bool netdev_outside = false;
  };

  // The device of that name, or null.
  Device* find(const std::string& name);
  // The device whose port `port` is asked for: ENODEV when there is no such
  // device, ENOENT when it has no such port (an rxe device has port 1 only).
  Result<const Device*> port_of(const std::string& dev, unsigned port) const;
  // A device goes with its netdev (rxe unregisters it): once that interface
  // is gone from `links`, or another one has its name.
  void prune(const LinksModel& links);
  // Every device as seen from `netns`: names are global, the netdev (and
  // its index, as `links` has it) is named only in its own namespace.
  std::vector<SoftDevice> seen_from(const std::string& netns, const LinksModel& links) const;
  // `rdma link add NAME type TYPE netdev NETDEV` in `netns`: ENFILE when the
  // name is taken (in any namespace), EEXIST when the netdev has a device of
  // that type,
  // ENODEV when `links` has no such netdev (one it may not see is taken to
  // be there: netdev_outside).
  Result<void> create_device(const std::string& type, const std::string& name, const std::string& netns,
                             const std::string& netdev, const LinksModel& links);
  // The deleted device's name; ENODEV when there is no device of that index.
  Result<std::string> delete_device(unsigned index);
  // rxe's GID table of port 1: the netdev's IPv6 link-local address (a
  // stand-in: the kernel derives it from the MAC, which the model has not),
  // then one RoCE v2 entry per IPv4 address. siw's: one entry, the MAC (a
  // stand-in again), with no RoCE type. Errors as port_of().
  Result<std::vector<GidEntry>> gid_table(const std::string& dev, unsigned port, const LinksModel& links) const;

  // The module and what it depends on (as `modules` knows it), loaded.
  void load(const std::string& name);
  // Whether a loaded module depends on `name`.
  bool in_use(const std::string& name) const;
  // ENOENT when not loaded, EBUSY while in_use(). Unloading rdma_rxe deletes
  // every rxe device, unloading siw every siw device.
  Result<void> unload(const std::string& name);

  // Modules this kernel has, with their dependencies (all of them, as
  // modules.dep); empty when the model does not know them (a plan).
  std::map<std::string, std::vector<std::string>> modules;
  std::set<std::string> loaded;
  std::vector<Device> devices;

 private:
  unsigned next_index_ = 1;
};

}  // namespace rxerun::sys
