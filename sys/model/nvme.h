#pragma once
// NVMe over Fabrics in memory (sys/model/links.h says why sys/model/
// exists): nvmet's configfs tree with the kernel's refusals (a subsystem
// linked by a port cannot go, a port with a link cannot go, an enabled
// port's address cannot change, a second port on one address cannot
// listen), null_blk items, backing files, and the host's controllers, which
// a connect makes only when a port listens for the subsystem at that
// address. The recording (plan) and the test fake both build on it.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "sys/nvme.h"

namespace rxerun::sys {

class NvmeModel {
 public:
  struct Subsystem {
    std::string serial;
    bool allow_any_host = false;
    std::set<std::string> allowed_hosts;
    std::map<unsigned, NvmetNamespace> namespaces;
  };

  // The kernel's default host NQN, for a connect that names none.
  static constexpr const char* kDefaultHostNqn = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001";

  std::optional<std::uint64_t> configfs_mount_id;  // unset: not mounted
  std::map<std::string, Subsystem> subsys_dirs;
  std::set<std::string> host_dirs;
  std::map<unsigned, NvmetPort> port_dirs;
  std::map<std::string, NullBlk> nullb_dirs;
  std::map<std::string, FileId> files;
  std::map<unsigned, FabricsController> ctrls;

  // What the interface reads, from the state above.
  std::vector<NvmetSubsystem> subsystem_list() const;
  std::vector<NvmetPort> port_list() const;
  std::vector<NullBlk> null_blk_list() const;
  std::vector<FabricsController> controller_list() const;

  std::uint64_t mount();
  Result<void> unmount();
  Result<void> mkdir_subsystem(const std::string& nqn);
  Result<void> rmdir_subsystem(const std::string& nqn);
  Result<void> write_allow_any_host(const std::string& nqn, bool allow);
  Result<void> mkdir_host(const std::string& hostnqn);
  Result<void> rmdir_host(const std::string& hostnqn);
  Result<void> link_allowed_host(const std::string& nqn, const std::string& hostnqn);
  Result<void> unlink_allowed_host(const std::string& nqn, const std::string& hostnqn);
  Result<void> mkdir_namespace(const std::string& nqn, unsigned nsid);
  Result<void> write_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path, bool buffered);
  // Enabling opens the device: a null_blk disk or a file of the model (or
  // one `exists` accepts: the host's, for a plan).
  Result<void> write_namespace_enable(const std::string& nqn, unsigned nsid, bool enable);
  Result<void> rmdir_namespace(const std::string& nqn, unsigned nsid);
  Result<void> mkdir_port(const NvmetPort& port);
  Result<void> rmdir_port(unsigned id);
  Result<void> link_port_subsystem(unsigned id, const std::string& nqn);
  Result<void> unlink_port_subsystem(unsigned id, const std::string& nqn);
  Result<void> mkdir_null_blk(const std::string& name, std::uint64_t size_mib);
  Result<void> rmdir_null_blk(const std::string& name);
  Result<FileId> make_file(const std::string& path, std::uint64_t size);
  Result<void> unlink_file(const std::string& path);
  // A connect: a controller when a port with that transport and address
  // links the subsystem and lets the host in; ECONNRESET when no port
  // listens there (what the kernel answers when the target rejects the
  // connection), EIO when the subsystem does not allow the host.
  Result<FabricsConnected> connect_host(const FabricsOptions& o);
  Result<void> remove_controller(unsigned instance);

  // Whether a path can be opened as a namespace's device beyond the model's
  // own (the plan: the host's files and disks). Unset: none.
  bool (*exists)(const std::string& path) = nullptr;

 private:
  Subsystem* subsystem(const std::string& nqn);
  std::uint64_t next_mount_ = 40;
  std::uint64_t next_serial_ = 0x5eed0001;
  unsigned next_index_ = 0;
  std::uint64_t next_ino_ = 1000;
  unsigned next_instance_ = 0;
};

}  // namespace rxerun::sys
