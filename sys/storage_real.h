#pragma once
// Storage on the real kernel (sys/storage.h): mount(2) and umount2(2) of
// configfs, its mount found in /proc/self/mountinfo; null_blk's configfs
// items made with mkdir(2) and write(2); files created O_EXCL and sized
// with ftruncate(2); statfs(2) and stat(2). Every refusal comes back with
// the kernel's errno.

#include "sys/storage.h"

namespace rxerun::sys {

class RealStorage final : public Storage {
 public:
  Result<std::optional<std::uint64_t>> configfs_mount() override;
  Result<std::uint64_t> mount_configfs() override;
  Result<void> unmount_configfs() override;
  Result<std::vector<NullBlk>> null_blks() override;
  Result<void> add_null_blk(const std::string& name, std::uint64_t size_mib) override;
  Result<void> remove_null_blk(const std::string& name) override;
  Result<std::optional<FileId>> file_id(const std::string& path) override;
  Result<FileId> create_file(const std::string& path, std::uint64_t size) override;
  Result<void> remove_file(const std::string& path) override;
  Result<std::string> file_system(const std::string& path) override;
  Result<bool> block_device(const std::string& name) override;
};

}  // namespace rxerun::sys
