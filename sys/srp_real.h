#pragma once
// SRP on the real kernel (sys/srp.h): LIO's configfs directories,
// attributes and links made with mkdir(2), write(2) and symlink(2); the
// login as one write to ib_srp's add_target; logins read from
// /sys/class/scsi_host and /sys/class/srp_remote_ports. Every refusal comes
// back with the kernel's errno.

#include "sys/srp.h"

namespace rxerun::sys {

class RealSrp final : public Srp {
 public:
  Result<std::vector<LioBackstore>> backstores() override;
  Result<std::vector<std::string>> hbas() override;
  Result<void> add_backstore(const LioBackstore& backstore) override;
  Result<void> remove_backstore(const std::string& hba, const std::string& name) override;
  Result<bool> srpt_fabric() override;
  Result<void> add_srpt_fabric() override;
  Result<void> remove_srpt_fabric() override;
  Result<unsigned> rdma_cm_port() override;
  Result<void> set_rdma_cm_port(unsigned port) override;
  Result<std::string> service_guid() override;
  Result<std::vector<SrptTarget>> srpt_targets() override;
  Result<void> add_srpt_target(const std::string& target) override;
  Result<void> remove_srpt_target(const std::string& target) override;
  Result<void> add_tpg(const std::string& target, const std::string& tpg) override;
  Result<void> remove_tpg(const std::string& target, const std::string& tpg) override;
  Result<void> add_lun(const std::string& target, const std::string& tpg, const SrptLun& lun) override;
  Result<void> remove_lun(const std::string& target, const std::string& tpg, unsigned index) override;
  Result<void> add_acl(const std::string& target, const std::string& tpg, const std::string& initiator,
                       const std::vector<unsigned>& luns) override;
  Result<void> remove_acl(const std::string& target, const std::string& tpg, const std::string& initiator) override;
  Result<void> enable_tpg(const std::string& target, const std::string& tpg, bool enable) override;
  Result<std::vector<std::string>> srp_ports() override;
  Result<void> add_target(const std::string& srp_port, const std::string& options,
                          std::vector<std::string>* kernel_log) override;
  Result<std::vector<SrpLogin>> logins() override;
  Result<void> logout(const std::string& remote_port) override;
};

}  // namespace rxerun::sys
