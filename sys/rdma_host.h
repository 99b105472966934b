#pragma once
// The real Rdma: RDMA netlink for devices (sys/rdma_netlink.h), sysfs for ports, GIDs and counters,
// libibverbs for a port's MTU, and /proc/thread-self/net for rxe's UDP
// sockets (the calling thread's namespace, which /proc/self/net is not
// after a setns of one thread).

#include <filesystem>
#include <optional>

#include "sys/rdma.h"

namespace rxerun::sys {

// Where sysfs lists the RDMA devices, a directory each (parent, ports/N/...).
inline const std::filesystem::path kSysClassInfiniband = "/sys/class/infiniband";

class HostRdma final : public Rdma {
 public:
  Result<std::vector<SoftDevice>> soft_devices() override;
  Result<void> add_soft_device(const std::string& type, const std::string& name, const std::string& netdev) override;
  Result<void> remove_device(unsigned index) override;
  Result<PortState> port_state(const std::string& dev, unsigned port) override;
  Result<PortMtu> port_mtu(const std::string& dev, unsigned port) override;
  Result<std::vector<GidEntry>> gids(const std::string& dev, unsigned port) override;
  Result<Counters> counters(const std::string& dev, unsigned port) override;
  Result<bool> udp4791_listening() override;
  Result<bool> cm_listening(std::uint16_t port) override;
};

}  // namespace rxerun::sys
