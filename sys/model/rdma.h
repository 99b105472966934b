#pragma once
// Software RDMA devices in the model (sys/model/kernel.h): rxe and siw
// devices over the model's interfaces, with the kernel's rules (names are
// global, a device goes with its netdev, a netdev has one device of a type,
// a type needs its module), ports whose state follows the netdev, rxe's GID
// table from the netdev's addresses, and rxe's UDP 4791 sockets: per
// namespace that holds an rxe device (Linux 7.1 and later), or in the
// initial namespace only (before).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sys/model/links.h"
#include "sys/model/modules.h"
#include "sys/rdma.h"

namespace rxerun::sys {

class ModelRdma final : public Rdma {
 public:
  struct Device {
    unsigned index = 0;
    std::string name, netns, netdev;
    std::string type = kRxeType;
    // The netdev's index when the device was added: the device is bound to
    // that interface, not to its name. 0 when not known (a test's device).
    int netdev_ifindex = 0;
    // Over an interface the model does not hold (the host's, open world): the
    // model cannot see it go, so the device stays.
    bool netdev_outside = false;
  };

  // Unloading rdma_rxe (siw) deletes every rxe (siw) device.
  ModelRdma(ModelKernel& k, const ModelLinks& links, ModelModules& modules);

  Result<std::vector<SoftDevice>> soft_devices() override;
  // ENFILE the name is taken, EEXIST the netdev has a device of that type,
  // ENODEV no such netdev, EINVAL the type's module is not loaded.
  Result<void> add_soft_device(const std::string& type, const std::string& name, const std::string& netdev) override;
  Result<void> remove_device(unsigned index) override;
  // ACTIVE while the netdev is up with carrier (or outside the model),
  // unless `state_of` decides.
  Result<PortState> port_state(const std::string& dev, unsigned port) override;
  Result<PortMtu> port_mtu(const std::string& dev, unsigned port) override;
  // `gid_tables` when set for the device, else rxe's: the netdev's IPv6
  // link-local address (fe80::1 here: the model has no MAC), then one RoCE
  // v2 entry per IPv4 address; siw's: one entry with no RoCE type.
  Result<std::vector<GidEntry>> gids(const std::string& dev, unsigned port) override;
  Result<Counters> counters(const std::string& dev, unsigned port) override;
  Result<bool> udp4791_listening() override;
  // True once `cm_listen_after` probes have answered false (a server coming up).
  Result<bool> cm_listening(std::uint16_t port) override;

  Device* find(const std::string& name);

  std::vector<Device> devices;
  std::map<std::string, Counters> device_counters;          // device -> counters (none: empty)
  std::map<std::string, std::vector<GidEntry>> gid_tables;  // device -> its table, overriding rxe's
  std::function<int(const Device&)> state_of;               // set: a port's IB_PORT_* state
  std::map<unsigned, int> hidden;  // device index -> soft_devices() calls that do not list it yet
  int hidden_for = 0;              // a new device shows in soft_devices() after this many calls
  bool per_netns_udp = true;       // false: a kernel before 7.1
  int cm_listen_after = 0;
  int cm_probes = 0;
  std::vector<std::uint16_t> cm_probed_ports;

 private:
  // A device goes with its netdev (rxe unregisters it): once that interface
  // is gone, or another one has its name.
  void prune();
  // ENODEV when there is no such device, ENOENT when it has no such port.
  Result<const Device*> port_of(const std::string& dev, unsigned port);
  ModelKernel& k_;
  const ModelLinks& links_;
  ModelModules& modules_;
  unsigned next_index_ = 1;
};

}  // namespace rxerun::sys
