#pragma once
// Storage in the model (sys/model/kernel.h): configfs's mount, null_blk's
// items (seen only while configfs is mounted and null_blk loaded), backing
// files, and the block devices there are: a powered null_blk device's, and
// those another service made (an NVMe controller's namespaces, an SRP
// login's disk: `disks`). Each change is logged as the shell command a
// person would type (mount, mkdir, echo into an attribute, truncate).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "sys/model/modules.h"
#include "sys/storage.h"

namespace rxerun::sys {

class ModelStorage final : public Storage {
 public:
  ModelStorage(ModelKernel& k, ModelModules& modules) : k_(k), modules_(modules) {}

  Result<std::optional<std::uint64_t>> configfs_mount() override;
  Result<std::uint64_t> mount_configfs() override;
  Result<void> unmount_configfs() override;
  Result<std::vector<NullBlk>> null_blks() override;
  Result<void> add_null_blk(const std::string& name, std::uint64_t size_mib) override;
  Result<void> remove_null_blk(const std::string& name) override;
  Result<std::optional<FileId>> file_id(const std::string& path) override;
  Result<FileId> create_file(const std::string& path, std::uint64_t size) override;
  Result<void> remove_file(const std::string& path) override;
  // By `file_systems`' prefixes, else tmpfs ("" in an open world: not known).
  Result<std::string> file_system(const std::string& path) override;
  Result<bool> block_device(const std::string& name) override;

  // Whether configfs is mounted (the run's mount, or the host's in an open world).
  bool configfs_mounted();
  // Whether a target could open `path`: a file of the model, a powered
  // null_blk device's disk (or a path `host_has`, open world).
  bool opens(const std::string& path);

  std::optional<std::uint64_t> configfs_mount_id;  // unset: not mounted
  std::map<std::string, NullBlk> nullb_dirs;
  std::map<std::string, FileId> files;
  std::map<std::string, std::string> file_systems;  // path prefix -> file system
  std::set<std::string> disks;                      // block devices other services made: "nvme0n1", "sdb"
  // Open world: the host's configfs mount and paths.
  std::function<bool()> host_configfs;
  std::function<bool(const std::string&)> host_has;

 private:
  bool nullb_visible() { return configfs_mounted() && *modules_.loaded("null_blk"); }

  ModelKernel& k_;
  ModelModules& modules_;
  std::uint64_t next_mount_ = 40;
  unsigned next_index_ = 0;
  std::uint64_t next_ino_ = 1000;
};

}  // namespace rxerun::sys
