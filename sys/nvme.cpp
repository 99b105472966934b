#include "sys/nvme.h"

namespace rxerun::sys {

std::string fabrics_options_line(const FabricsOptions& o) {
  std::string line = "nqn=" + o.nqn + ",transport=" + o.transport + ",traddr=" + o.traddr + ",trsvcid=" + o.trsvcid;
  if (!o.hostnqn.empty()) line += ",hostnqn=" + o.hostnqn;
  if (!o.hostid.empty()) line += ",hostid=" + o.hostid;
  if (!o.host_traddr.empty()) line += ",host_traddr=" + o.host_traddr;
  return line;
}

std::string nvmet_subsystem_dir(const std::string& nqn) {
  return std::string(kConfigfsPath) + "/nvmet/subsystems/" + nqn;
}

std::string nvmet_namespace_dir(const std::string& nqn, unsigned nsid) {
  return nvmet_subsystem_dir(nqn) + "/namespaces/" + std::to_string(nsid);
}

std::string nvmet_host_dir(const std::string& hostnqn) {
  return std::string(kConfigfsPath) + "/nvmet/hosts/" + hostnqn;
}

std::string nvmet_port_dir(unsigned id) {
  return std::string(kConfigfsPath) + "/nvmet/ports/" + std::to_string(id);
}

}  // namespace rxerun::sys
