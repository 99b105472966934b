#pragma once
// NVMe over Fabrics, natively (never nvme-cli, nvmetcli or modprobe):
// - the target: nvmet's tree in configfs (/sys/kernel/config/nvmet:
//   subsystems with their namespaces and allowed hosts, hosts, ports; what
//   backs a namespace, configfs's mount and block devices are
//   sys/storage.h's);
// - the host: fabrics controllers, made by a write to /dev/nvme-fabrics,
//   listed and deleted in sysfs (/sys/class/nvme).
// All of it is global to the machine: the kernel's NVMe-oF RDMA transports
// open their rdma_cm IDs in the initial network namespace whatever the
// caller's (docs/kernel-notes.md, "NVMe over Fabrics").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "sys/storage.h"

namespace rxerun::sys {

struct NvmetNamespace {
  unsigned nsid = 0;
  std::string device_path;  // a block device or a file
  bool enabled = false;
  bool buffered_io = false;  // a file through the page cache instead of O_DIRECT
};

struct NvmetSubsystem {
  std::string nqn;
  // attr_serial: random, made by the kernel at mkdir (hex digits). With the
  // NQN, what tells the subsystem a run made from one made later under its NQN.
  std::string serial;
  bool allow_any_host = false;
  std::vector<std::string> allowed_hosts;  // host NQNs linked in allowed_hosts/
  std::vector<NvmetNamespace> namespaces;
};

struct NvmetPort {
  unsigned id = 0;                      // the directory's name: 0 .. 65535
  std::string trtype;                   // "rdma", "tcp", "loop"
  std::string adrfam;                   // "ipv4", "ipv6"
  std::string traddr;                   // "10.10.0.1"
  std::string trsvcid;                  // "4420"
  std::vector<std::string> subsystems;  // NQNs linked in subsystems/: the port listens while there is one
};

// What a connect writes to /dev/nvme-fabrics: "transport=rdma,traddr=...,
// trsvcid=...,nqn=...[,hostnqn=...][,hostid=...][,host_traddr=...]".
struct FabricsOptions {
  std::string transport;    // "rdma"
  std::string traddr;       // the target's address
  std::string trsvcid;      // its service (port), "4420"
  std::string nqn;          // the subsystem's NQN
  std::string hostnqn;      // "": the kernel's default host NQN
  std::string hostid;       // a UUID; "" the kernel's default (which it refuses with another hostnqn)
  std::string host_traddr;  // "": the source address routing picks
};
// The options line, as written to /dev/nvme-fabrics.
std::string fabrics_options_line(const FabricsOptions& o);

// Where things sit in configfs (docs/kernel-notes.md, "NVMe over Fabrics").
std::string nvmet_subsystem_dir(const std::string& nqn);                 // .../nvmet/subsystems/NQN
std::string nvmet_namespace_dir(const std::string& nqn, unsigned nsid);  // .../NQN/namespaces/NSID
std::string nvmet_host_dir(const std::string& hostnqn);                  // .../nvmet/hosts/HOSTNQN
std::string nvmet_port_dir(unsigned id);                                 // .../nvmet/ports/ID

// What the kernel answers a connect: "instance=N,cntlid=M".
struct FabricsConnected {
  unsigned instance = 0;  // the controller is nvme<instance>
  unsigned cntlid = 0;
};

// A controller as sysfs shows it (/sys/class/nvme/nvmeN/).
struct FabricsController {
  unsigned instance = 0;
  std::string transport;  // "rdma", "tcp", "loop"; "pcie" for a local disk
  std::string traddr;     // from `address`: "traddr=10.10.0.1,trsvcid=4420,host_traddr=..."
  std::string trsvcid;
  std::string host_traddr;
  std::string subsysnqn;
  std::string hostnqn;
  unsigned cntlid = 0;
  std::string state;  // "live", "connecting", "deleting", ...
  // Its namespaces' block devices as users open them: "nvme0n1" (the
  // multipath head of path nvme0c0n1, or the disk itself without
  // multipath), those the kernel has made so far.
  std::vector<std::string> block_devices;
};

class Nvme {
 public:
  virtual ~Nvme() = default;

  // The target. Empty lists when nvmet's tree is not there (nvmet not
  // loaded, or configfs not mounted).
  virtual Result<std::vector<NvmetSubsystem>> subsystems() = 0;
  // mkdir subsystems/NQN: EEXIST when there is one.
  virtual Result<void> add_subsystem(const std::string& nqn) = 0;
  // rmdir: ENOTEMPTY with namespaces or allowed hosts in it, EBUSY while a port links it.
  virtual Result<void> remove_subsystem(const std::string& nqn) = 0;
  // attr_allow_any_host; EINVAL for 1 while hosts are allowed explicitly.
  virtual Result<void> set_allow_any_host(const std::string& nqn, bool allow) = 0;
  virtual Result<std::vector<std::string>> hosts() = 0;
  virtual Result<void> add_host(const std::string& hostnqn) = 0;     // mkdir hosts/HOSTNQN
  virtual Result<void> remove_host(const std::string& hostnqn) = 0;  // EBUSY while a subsystem allows it
  // A link subsystems/NQN/allowed_hosts/HOSTNQN -> hosts/HOSTNQN, and its removal.
  virtual Result<void> allow_host(const std::string& nqn, const std::string& hostnqn) = 0;
  virtual Result<void> disallow_host(const std::string& nqn, const std::string& hostnqn) = 0;
  // mkdir namespaces/NSID (1 .. 0xfffffffe).
  virtual Result<void> add_namespace(const std::string& nqn, unsigned nsid) = 0;
  // device_path and buffered_io, written while the namespace is disabled.
  virtual Result<void> set_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path,
                                            bool buffered_io) = 0;
  // enable: opening the device or file, with the kernel's errno (ENOENT
  // none, EINVAL a file system without O_DIRECT when not buffered).
  virtual Result<void> enable_namespace(const std::string& nqn, unsigned nsid, bool enable) = 0;
  virtual Result<void> remove_namespace(const std::string& nqn, unsigned nsid) = 0;
  virtual Result<std::vector<NvmetPort>> ports() = 0;
  // mkdir ports/ID, then its address: trtype, adrfam, traddr, trsvcid.
  virtual Result<void> add_port(const NvmetPort& port) = 0;
  virtual Result<void> remove_port(unsigned id) = 0;  // ENOTEMPTY while it links a subsystem
  // ports/ID/subsystems/NQN -> subsystems/NQN: the port starts listening
  // with the first link. EADDRNOTAVAIL no RDMA device holds the address,
  // EADDRINUSE another port listens there.
  virtual Result<void> link_port(unsigned id, const std::string& nqn) = 0;
  virtual Result<void> unlink_port(unsigned id, const std::string& nqn) = 0;

  // The host. Writes the options to /dev/nvme-fabrics and reads the answer;
  // the kernel's errno when it refuses (ECONNRESET: nobody listens there,
  // or the target refused the host). `kernel_log` receives the NVMe
  // stack's kernel messages logged meanwhile (where the log is readable).
  virtual Result<FabricsConnected> connect(const FabricsOptions& options, std::vector<std::string>* kernel_log) = 0;
  // Every NVMe controller (fabrics or not).
  virtual Result<std::vector<FabricsController>> controllers() = 0;
  // delete_controller; ENOENT when there is no such controller.
  virtual Result<void> delete_controller(unsigned instance) = 0;
  // The NVMe stack's kernel messages (nvme, nvmet, nvme_fabrics, ...) logged
  // since `since` (log_clock()'s time), for a diagnosis: why a namespace
  // never showed up. Empty where the log cannot be read.
  virtual std::vector<std::string> kernel_messages(std::uint64_t since) = 0;
  virtual std::uint64_t log_clock() = 0;
};

}  // namespace rxerun::sys
