#pragma once
// RDMA netlink (NETLINK_RDMA, the nldev client), what iproute2's `rdma`
// speaks, over libmnl: list devices, read a port, add and delete links.
// Extended ACK is on, so that the kernel's own reason reaches the user. Used
// by HostRdma (sys/rdma_host.h); not part of sys/'s interface.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"

struct mnl_socket;
struct nlmsghdr;

namespace rxerun::sys {

// enum rdma_node_type: RDMA_NODE_RNIC is an iWARP device (siw).
constexpr int kRdmaNodeRnic = 4;

struct RdmaNlDevice {
  unsigned index = 0;
  std::string name;
  int node_type = 0;  // RDMA_NLDEV_ATTR_DEV_NODE_TYPE: 1 CA (rxe), 4 RNIC (siw); 0 when not given
};

struct RdmaNlPort {
  int state = 0;
  int phys_state = 0;
  // The netdev under the port, only when it is in the socket's namespace.
  unsigned ndev_index = 0;
  std::string ndev_name;
};

// An rdma_cm ID as the kernel's resource tracking lists it (`rdma resource
// show cm_id`).
struct RdmaNlCmId {
  int state = -1;          // enum rdma_cm_state: 8 is RDMA_CM_LISTEN
  std::uint32_t ps = 0;    // port space: 0x0106 RDMA_PS_TCP, 0x0111 RDMA_PS_UDP, ...
  std::uint16_t port = 0;  // the source (bound) port, host order; 0 when unbound
};
constexpr int kRdmaCmListen = 8;

class RdmaNetlink {
 public:
  // A socket in the calling thread's network namespace. Error code
  // EPROTONOSUPPORT when the kernel has no RDMA netlink (ib_core not loaded).
  static Result<RdmaNetlink> open();

  RdmaNetlink(RdmaNetlink&& other) noexcept;
  RdmaNetlink& operator=(RdmaNetlink&&) = delete;
  ~RdmaNetlink();

  Result<std::vector<RdmaNlDevice>> devices();             // RDMA_NLDEV_CMD_GET, dump
  Result<RdmaNlPort> port(unsigned index, unsigned port);  // RDMA_NLDEV_CMD_PORT_GET
  // RDMA_NLDEV_CMD_NEWLINK: `rdma link add NAME type TYPE netdev NETDEV`.
  Result<void> new_link(const std::string& name, const std::string& type, const std::string& netdev);
  // RDMA_NLDEV_CMD_DELLINK: `rdma link delete`, by index (EINVAL when gone).
  Result<void> del_link(unsigned index);
  // RDMA_NLDEV_CMD_RES_CM_ID_GET, dump: the rdma_cm IDs on device `index`
  // (a listener on every device shows on each of them).
  Result<std::vector<RdmaNlCmId>> cm_ids(unsigned index);

 private:
  explicit RdmaNetlink(mnl_socket* sock);
  // Sends `request` (a whole message: header and attributes) and hands each
  // reply to `on_reply` until the ACK, NLMSG_DONE or an error. `what` names
  // the request in errors ("cannot add rxe0").
  Result<void> exchange(nlmsghdr* request, const std::function<void(const nlmsghdr*)>& on_reply,
                        const std::string& what);

  mnl_socket* sock_ = nullptr;
  std::uint32_t portid_ = 0;
  std::uint32_t seq_ = 0;
};

}  // namespace rxerun::sys
