#pragma once
// Soft-RoCE for `rxerun plan` (sys/recording/system.h). Modules the plan
// loaded, or that this host has loaded (/sys/module: reading it changes
// nothing), count as loaded; rxe devices are those the plan added. Ports of
// any device read ACTIVE and rxe's UDP socket is assumed there: the plan
// previews the run where everything goes as intended.

#include <set>
#include <string>
#include <vector>

#include "sys/rdma.h"

namespace rxerun::sys {

class ActionLog;
class RecordingLinks;

class RecordingRdma final : public Rdma {
 public:
  RecordingRdma(ActionLog& log, RecordingLinks& links) : log_(log), links_(links) {}
  Result<bool> module_loaded(const std::string& name) override;
  Result<std::vector<std::string>> modules_to_load(const std::string& name) override;
  Result<void> load_module(const std::string& name) override;
  Result<void> unload_module(const std::string& name) override;
  Result<std::vector<RxeDevice>> rxe_devices() override;
  Result<void> add_rxe(const std::string& name, const std::string& netdev) override;
  Result<void> remove_device(unsigned index) override;
  Result<PortState> port_state(const std::string& dev, unsigned port) override;
  Result<PortMtu> port_mtu(const std::string& dev, unsigned port) override;
  // A link-local entry and one RoCE v2 entry per IPv4 address the plan put
  // on the netdev, in that order (rxe's).
  Result<std::vector<GidEntry>> gids(const std::string& dev, unsigned port) override;
  // Nothing has counted anything yet.
  Result<Counters> counters(const std::string&, unsigned) override { return Counters{}; }
  Result<bool> udp4791_listening() override { return true; }
  Result<bool> cm_listening(std::uint16_t) override { return true; }

 private:
  struct Device {
    unsigned index;
    std::string name, netns, netdev;
  };
  ActionLog& log_;
  RecordingLinks& links_;
  std::set<std::string> loaded_, unloaded_;
  std::vector<Device> devices_;
  unsigned next_index_ = 1;
};

}  // namespace rxerun::sys
