#pragma once
// Soft-RoCE for `rxerun plan` (sys/recording/system.h). Modules the plan
// loaded, or that this host has loaded (/sys/module: reading it changes
// nothing), count as loaded; rxe devices are those the plan added
// (sys/model/rdma.h), over the plan's interfaces or the host's. Ports of any
// device read ACTIVE and rxe's UDP socket is assumed there: the plan
// previews the run where everything goes as intended.

#include <set>
#include <string>
#include <vector>

#include "sys/model/rdma.h"
#include "sys/rdma.h"

namespace rxerun::sys {

class ActionLog;

class RecordingRdma final : public Rdma {
 public:
  // `links`: the plan's interfaces, which the devices go with.
  RecordingRdma(ActionLog& log, const LinksModel& links) : log_(log), links_(links) {}
  Result<bool> module_loaded(const std::string& name) override;
  Result<std::vector<std::string>> modules_to_load(const std::string& name) override;
  Result<void> load_module(const std::string& name, const std::string& options) override;
  Result<std::map<std::string, std::string>> module_parameters(const std::string& name) override;
  Result<void> unload_module(const std::string& name) override;
  Result<std::vector<SoftDevice>> soft_devices() override;
  Result<void> add_soft_device(const std::string& type, const std::string& name, const std::string& netdev) override;
  Result<void> remove_device(unsigned index) override;
  Result<PortState> port_state(const std::string& dev, unsigned port) override;
  Result<PortMtu> port_mtu(const std::string& dev, unsigned port) override;
  // The model's table (the addresses the plan put on the netdev); none for
  // a device the plan did not add.
  Result<std::vector<GidEntry>> gids(const std::string& dev, unsigned port) override;
  // Nothing has counted anything yet.
  Result<Counters> counters(const std::string&, unsigned) override { return Counters{}; }
  Result<bool> udp4791_listening() override { return true; }
  Result<bool> cm_listening(std::uint16_t) override { return true; }

 private:
  ActionLog& log_;
  const LinksModel& links_;
  RdmaModel model_;                             // its `loaded`: what the plan loaded, or unloaded that the host had
  std::set<std::string> unloaded_;              // what the plan unloaded: not the host's any more
  std::map<std::string, std::string> options_;  // module -> the options the plan loaded it with
};

}  // namespace rxerun::sys
