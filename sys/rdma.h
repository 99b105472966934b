#pragma once
// The software RDMA devices: Soft-RoCE (rxe) and soft-iWARP (siw) devices
// (RDMA netlink, what `rdma link` does; their modules are sys/modules.h's),
// their ports (sysfs) and rxe's UDP 4791 sockets. Device names are global; netdevs, the
// RDMA netlink socket and the UDP sockets belong to the calling thread's
// network namespace.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

// The port of an rxe device: it has one, number 1.
inline constexpr unsigned kRxePort = 1;

// The software device types, as `rdma link add NAME type TYPE` names them.
inline constexpr const char* kRxeType = "rxe";
inline constexpr const char* kSiwType = "siw";

// An rxe or siw device.
struct SoftDevice {
  unsigned index = 0;  // the RDMA device index (what DELLINK takes)
  std::string name;    // "rxe0"
  std::string type;    // kRxeType or kSiwType
  // The netdev under it when that netdev is in the calling thread's
  // namespace; "" when it lives in another one.
  std::string netdev;
  // The netdev's name whatever its namespace (sysfs `parent`): names are not
  // unique across namespaces, so `netdev` decides what is "here". siw has no
  // `parent`: for a siw device this is `netdev`, empty in another namespace.
  std::string parent;
  // The netdev's interface index when it is in the calling thread's
  // namespace (RDMA netlink names it only there); 0 otherwise. With `index`,
  // what tells this device from one made later under the same names.
  int netdev_ifindex = 0;
};

// A port as sysfs shows it: "4: ACTIVE", "5: LinkUp".
struct PortState {
  int state = 0;                // IB_PORT_*: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE
  std::string state_name;       // "ACTIVE"
  int phys_state = 0;           // 3 Disabled, 5 LinkUp, ...
  std::string phys_state_name;  // "LinkUp"
};

// Sysfs has no MTU of a port: verbs (ibv_query_port) know it.
struct PortMtu {
  unsigned active = 0;  // bytes: 256 .. 4096
  unsigned max = 0;
};

// One entry of a port's GID table (sysfs gids/N, gid_attrs/types/N,
// gid_attrs/ndevs/N); all-zero entries are not listed.
struct GidEntry {
  unsigned index = 0;
  std::string gid;     // "fe80::4ce2:eff:fe20:2e16", "::ffff:10.10.0.1" (inet_ntop's form)
  std::string type;    // "RoCE v2", "IB/RoCE v1"
  std::string netdev;  // "vA"; "" when the kernel names none
};

// Counter name -> value.
using Counters = std::map<std::string, std::uint64_t>;

class Rdma {
 public:
  virtual ~Rdma() = default;

  // Every rxe and siw device (all namespaces see all of them: shared mode).
  virtual Result<std::vector<SoftDevice>> soft_devices() = 0;
  // `rdma link add NAME type TYPE netdev NETDEV` (TYPE kRxeType or
  // kSiwType), NETDEV in the calling thread's namespace. The kernel's
  // answers, unchanged: ENODEV no such netdev; EEXIST the netdev has a
  // device of that type already; ENFILE the name is taken (by any device, in
  // any namespace); EINVAL the type's module is not loaded.
  virtual Result<void> add_soft_device(const std::string& type, const std::string& name, const std::string& netdev) = 0;
  // `rdma link delete`, by device index. ENODEV when there is no such device.
  virtual Result<void> remove_device(unsigned index) = 0;

  // ENODEV when there is no RDMA device `dev`; ENOENT when it has no such port.
  virtual Result<PortState> port_state(const std::string& dev, unsigned port) = 0;
  virtual Result<PortMtu> port_mtu(const std::string& dev, unsigned port) = 0;
  // The port's GID table, in index order. ENODEV / ENOENT as port_state().
  virtual Result<std::vector<GidEntry>> gids(const std::string& dev, unsigned port) = 0;
  // The port's counters: rxe's hw_counters (sent_pkts, rcvd_pkts, ...) and
  // the port counters (port_xmit_data, ...), by their sysfs names. ENODEV /
  // ENOENT as port_state().
  virtual Result<Counters> counters(const std::string& dev, unsigned port) = 0;

  // Whether a UDP socket is bound to port 4791 (RoCEv2), IPv4 or IPv6, in the
  // calling thread's network namespace. Before Linux 7.1 rxe opens it only
  // in the initial namespace.
  virtual Result<bool> udp4791_listening() = 0;
  // Whether an rdma_cm ID listens on `port` (TCP port space, any address, on
  // any RDMA device): RDMA netlink's resource tracking, what `rdma resource
  // show cm_id` lists. How rping's and perftest's servers are known ready.
  virtual Result<bool> cm_listening(std::uint16_t port) = 0;
};

}  // namespace rxerun::sys
