#pragma once
// The SCSI RDMA Protocol, natively (never targetcli, srp_daemon or modprobe):
// - the target: LIO's tree in configfs (/sys/kernel/config/target): a
//   backstore under core/ (fileio on a file, iblock on a block device), and
//   ib_srpt's fabric under srpt/: a target port named after an RDMA port,
//   its TPG with a LUN linked to the backstore and the ACLs that let
//   initiators in, and the one RDMA/CM port the fabric listens on
//   (srpt/discovery_auth/rdma_cm_port);
// - the initiator: ib_srp's add_target
//   (/sys/class/infiniband_srp/srp-DEV-PORT/add_target), the SCSI host it
//   makes for a login (/sys/class/scsi_host/hostN), that host's disks, and
//   the logout (/sys/class/srp_remote_ports/port-N:1/delete).
// The target's RDMA/CM listener lives in the initial network namespace; an
// initiator logs in from the namespace of the process that writes
// add_target (docs/kernel-notes.md, "SRP").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

// A storage object under core/HBA/NAME.
struct LioBackstore {
  std::string hba;         // "fileio_0", "iblock_0": the plugin's name, "_", an index
  std::string name;        // the object's directory
  std::string path;        // fileio: the file (fd_dev_name); iblock: the block device (udev_path)
  std::uint64_t size = 0;  // fileio: bytes (fd_dev_size); iblock: 0 (the device's own)
  bool enabled = false;
  // wwn/vpd_unit_serial, which the kernel leaves empty and whoever makes the
  // object writes (before enable). rxerun writes one of its own: what tells
  // the object a run made from one made later under its name.
  std::string serial;
  // "fileio" or "iblock", from the HBA's name.
  std::string plugin() const { return hba.substr(0, hba.rfind('_')); }
};

struct SrptLun {
  unsigned index = 0;     // lun/lun_INDEX
  std::string backstore;  // "fileio_0/NAME": the object its link points to
};

// An ACL: the logins ib_srpt names NAME get the mapped LUNs. An RDMA/CM
// login is named by the address it came in on, the target's own (both lab
// kernels; docs/kernel-notes.md, "SRP").
struct SrptAcl {
  std::string initiator;              // acls/NAME
  std::vector<unsigned> mapped_luns;  // acls/NAME/lun_N, each linked to the TPG's lun_N
};

struct SrptTpg {
  std::string name;
  bool enabled = false;
  std::vector<SrptLun> luns;
  std::vector<SrptAcl> acls;
};

// A target port: srpt/NAME, named after an RDMA port (srpt_port_names()).
struct SrptTarget {
  std::string name;
  std::vector<SrptTpg> tpgs;
};

// The names ib_srpt accepts for an RDMA port's target, made from the
// port's first GID: its GUID form, the GID's interface ID as four groups of
// four hex digits ("5054:00ff:fe12:3401"), and its GID form, "0x" and the 32
// hex digits. nullopt when `gid` (inet_ntop's form, "fe80::5054:ff:fe12:3401")
// is no IPv6 address.
struct RdmaPortNames {
  std::string guid;
  std::string gid;
};
std::optional<RdmaPortNames> srpt_port_names(const std::string& gid);

// The name ib_srpt gives an RDMA/CM login coming in on `address` (its own
// end's address), which an ACL must carry: an IPv4 address as it is, an
// IPv6 one in full, eight groups of four hex digits
// ("fd00:0074:0000:0000:0000:0000:0000:0001"). `address` unchanged when it
// is no IP address.
std::string srpt_login_name(const std::string& address);

// A SCSI disk of a login: "sdb", and its size.
struct SrpDisk {
  std::string name;
  std::uint64_t bytes = 0;
};

// A login of ib_srp's: a SCSI host with its SRP remote port.
struct SrpLogin {
  unsigned host = 0;        // /sys/class/scsi_host/hostN
  std::string remote_port;  // /sys/class/srp_remote_ports/port-N:1 ("port-N:1")
  std::string device;       // local_ib_device: the RDMA device it logged in through
  unsigned port = 0;        // local_ib_port
  std::string id_ext;       // the target's identifier extension, as add_target got it
  std::string ioc_guid;
  std::string state;           // the remote port's: "running", "blocked", "lost"
  std::vector<SrpDisk> disks;  // its SCSI disks' block devices
};

class Srp {
 public:
  virtual ~Srp() = default;

  // --- the target. Empty lists while LIO's tree is not there
  // (target_core_mod not loaded, or configfs not mounted).
  virtual Result<std::vector<LioBackstore>> backstores() = 0;
  // The HBAs under core/, with or without objects ("fileio_0", "iblock_3").
  virtual Result<std::vector<std::string>> hbas() = 0;
  // mkdir core/HBA (when absent) and core/HBA/NAME, its control
  // (fd_dev_name/fd_dev_size, or udev_path), its serial, then enable.
  // EEXIST when the name is taken in that HBA.
  virtual Result<void> add_backstore(const LioBackstore& backstore) = 0;
  // rmdir core/HBA/NAME, then core/HBA when it is left empty. EBUSY while a
  // LUN links it.
  virtual Result<void> remove_backstore(const std::string& hba, const std::string& name) = 0;

  // Whether srpt/ is there (made by its mkdir once ib_srpt is loaded).
  virtual Result<bool> srpt_fabric() = 0;
  virtual Result<void> add_srpt_fabric() = 0;     // mkdir srpt
  virtual Result<void> remove_srpt_fabric() = 0;  // rmdir srpt: EBUSY while it has targets
  // srpt/discovery_auth/rdma_cm_port: 0 when the fabric does not listen.
  virtual Result<unsigned> rdma_cm_port() = 0;
  virtual Result<void> set_rdma_cm_port(unsigned port) = 0;
  // ib_srpt's identifier of itself (srpt_service_guid): what an initiator
  // gives as id_ext and ioc_guid. "" when ib_srpt is not loaded.
  virtual Result<std::string> service_guid() = 0;

  virtual Result<std::vector<SrptTarget>> srpt_targets() = 0;
  // mkdir srpt/NAME: EINVAL when no RDMA port has that name.
  virtual Result<void> add_srpt_target(const std::string& target) = 0;
  virtual Result<void> remove_srpt_target(const std::string& target) = 0;  // ENOTEMPTY with TPGs
  virtual Result<void> add_tpg(const std::string& target, const std::string& tpg) = 0;
  virtual Result<void> remove_tpg(const std::string& target, const std::string& tpg) = 0;
  // lun/lun_N and its link to core/BACKSTORE ("fileio_0/NAME").
  virtual Result<void> add_lun(const std::string& target, const std::string& tpg, const SrptLun& lun) = 0;
  virtual Result<void> remove_lun(const std::string& target, const std::string& tpg, unsigned index) = 0;
  // acls/INITIATOR, with lun_N linked to the TPG's lun_N for each of `luns`.
  virtual Result<void> add_acl(const std::string& target, const std::string& tpg, const std::string& initiator,
                               const std::vector<unsigned>& luns) = 0;
  // Its mapped LUNs' links and directories, then the ACL.
  virtual Result<void> remove_acl(const std::string& target, const std::string& tpg, const std::string& initiator) = 0;
  virtual Result<void> enable_tpg(const std::string& target, const std::string& tpg, bool enable) = 0;

  // --- the initiator.
  // The RDMA ports ib_srp can log in through: "srp-rxe1-1" (empty while
  // ib_srp is not loaded).
  virtual Result<std::vector<std::string>> srp_ports() = 0;
  // Writes `options` to srp_ports()'s PORT/add_target, in the caller's
  // network namespace: the kernel's errno when it refuses (ECONNRESET the
  // target rejected the login or nobody listens, EEXIST logged in to that
  // target already, ENXIO no route to it over RDMA); `kernel_log` receives
  // the SCSI and SRP stack's messages logged meanwhile (why).
  virtual Result<void> add_target(const std::string& srp_port, const std::string& options,
                                  std::vector<std::string>* kernel_log) = 0;
  virtual Result<std::vector<SrpLogin>> logins() = 0;
  // Writes 1 to the remote port's delete: the host, its disks and the
  // channel go. ENOENT when there is no such port.
  virtual Result<void> logout(const std::string& remote_port) = 0;
};

// Where things sit in configfs (docs/kernel-notes.md, "SRP").
std::string lio_dir();                                                           // /sys/kernel/config/target
std::string srpt_dir();                                                          // .../target/srpt
std::string lio_backstore_dir(const std::string& hba, const std::string& name);  // .../target/core/HBA/NAME
std::string srpt_target_dir(const std::string& target);                          // .../target/srpt/TARGET
std::string srpt_tpg_dir(const std::string& target, const std::string& tpg);     // .../target/srpt/TARGET/TPG

}  // namespace rxerun::sys
