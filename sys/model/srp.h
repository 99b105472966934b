#pragma once
// SRP in the model (sys/model/kernel.h): LIO's configfs tree, seen only
// while configfs is mounted (sys/model/storage.h holds the mount) and
// target_core_mod loaded, with the kernel's refusals (a backstore a LUN
// links cannot go; a target port needs an RDMA port of that name; a TPG, a
// target or the fabric with something in it cannot go); and ib_srp's
// logins, which succeed only when an enabled TPG of a target port on the
// device that holds the address listens on that RDMA/CM port, knows the
// initiator's address in an ACL, and the login names ib_srpt's service
// GUID; and ib_srpt's RDMA/CM port, which cannot be set while a siw device
// is in another network namespace (EADDRINUSE). Each change is logged as
// the shell command a person would type.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sys/model/links.h"
#include "sys/model/modules.h"
#include "sys/model/rdma.h"
#include "sys/model/storage.h"
#include "sys/srp.h"

namespace rxerun::sys {

class ModelSrp final : public Srp {
 public:
  // ib_srpt's service GUID (the first RDMA device's node GUID, in the kernel).
  static constexpr const char* kServiceGuid = "0x505400fffe000001";

  ModelSrp(ModelKernel& k, ModelModules& modules, ModelStorage& storage, ModelRdma& rdma, ModelLinks& links)
      : k_(k), modules_(modules), storage_(storage), rdma_(rdma), links_(links) {}

  Result<std::vector<LioBackstore>> backstores() override;
  // Those of backstore_dirs, and empty_hbas.
  Result<std::vector<std::string>> hbas() override;
  // A fileio object needs its file (one of the model's, or the host's in an
  // open world); an iblock one a powered null_blk disk. The kernel makes its
  // serial at enable.
  Result<void> add_backstore(const LioBackstore& backstore) override;
  Result<void> remove_backstore(const std::string& hba, const std::string& name) override;
  Result<bool> srpt_fabric() override;
  Result<void> add_srpt_fabric() override;
  Result<void> remove_srpt_fabric() override;
  Result<unsigned> rdma_cm_port() override;
  Result<void> set_rdma_cm_port(unsigned port) override;
  Result<std::string> service_guid() override;
  Result<std::vector<SrptTarget>> srpt_targets() override;
  // EINVAL unless an RDMA device's port 1 has that name (srpt_port_names()
  // of its first GID).
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
  // ECONNRESET when nothing listens there or the target rejects the login
  // (no ACL for the address, another service GUID), EEXIST when logged in
  // to that target already; then `kernel_log` is what the kernel said.
  Result<void> add_target(const std::string& srp_port, const std::string& options,
                          std::vector<std::string>* kernel_log) override;
  // A new login's disk shows after `disks_after` calls.
  Result<std::vector<SrpLogin>> logins() override;
  Result<void> logout(const std::string& remote_port) override;

  std::map<std::string, LioBackstore> backstore_dirs;  // "HBA/NAME" -> object
  std::set<std::string> empty_hbas;                    // HBAs without an object (someone's)
  bool fabric = false;                                 // srpt/ is there
  unsigned cm_port = 0;
  std::map<std::string, SrptTarget> targets;  // name -> target port
  std::map<unsigned, SrpLogin> login_hosts;   // SCSI host -> login
  std::vector<std::string> kernel_log;        // what the kernel logged
  int disks_after = 0;                        // logins() calls before a new login's disk shows

 private:
  bool lio_visible();
  bool srpt_loaded() { return *modules_.loaded("ib_srpt"); }
  SrptTarget* target_of(const std::string& target);
  SrptTpg* tpg_of(const std::string& target, const std::string& tpg);
  // Whether a login at `address`:`port` finds a TPG that lets it in (an ACL
  // named by `address`, as ib_srpt names RDMA/CM logins); the reason it does
  // not, else "" and the size of its LUN 0 in `bytes`.
  std::string login_refusal(const std::string& address, unsigned port, const std::string& id_ext, std::uint64_t* bytes);
  std::uint64_t backstore_bytes(const std::string& key);

  ModelKernel& k_;
  ModelModules& modules_;
  ModelStorage& storage_;
  ModelRdma& rdma_;
  ModelLinks& links_;
  std::map<unsigned, int> hidden_;         // host -> logins() calls left before its disk shows
  std::map<unsigned, std::string> dests_;  // host -> the target's address it logged in to
  unsigned next_host_ = 2;                 // hosts 0 and 1 are the machine's own disks
  unsigned next_serial_ = 1;
  char next_disk_ = 'b';
};

}  // namespace rxerun::sys
