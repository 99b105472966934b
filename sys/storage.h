#pragma once
// What the storage protocols serve and open, natively (never mount(8),
// truncate or modprobe's null_blk parameters): the configfs mount at
// /sys/kernel/config that nvmet's, LIO's and null_blk's trees live in;
// null_blk devices made in configfs (/sys/kernel/config/nullb); plain files
// that back a namespace or a LUN; and the block devices in /dev that a
// null_blk device, an NVMe controller or an SRP login makes. All of it is
// global to the machine.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

// Where configfs is mounted.
inline constexpr const char* kConfigfsPath = "/sys/kernel/config";

// A null_blk device made in configfs; its disk is named after the item.
struct NullBlk {
  std::string name;    // the configfs item: /sys/kernel/config/nullb/NAME
  unsigned index = 0;  // the kernel's index of the device
  std::uint64_t size_mib = 0;
  bool memory_backed = false;
  bool powered = false;  // the disk exists while powered
  std::string disk;      // "/dev/NAME" while powered; "" otherwise
};

struct FileId {
  std::uint64_t dev = 0;  // st_dev
  std::uint64_t ino = 0;  // st_ino
  std::uint64_t size = 0;
};

std::string null_blk_dir(const std::string& name);  // /sys/kernel/config/nullb/NAME

class Storage {
 public:
  virtual ~Storage() = default;

  // configfs at kConfigfsPath: its mount's ID (/proc/self/mountinfo),
  // nullopt when it is not mounted there.
  virtual Result<std::optional<std::uint64_t>> configfs_mount() = 0;
  // Mounts it (configfs must be loaded); returns the mount's ID.
  virtual Result<std::uint64_t> mount_configfs() = 0;
  // EBUSY while in use.
  virtual Result<void> unmount_configfs() = 0;

  // null_blk's tree (empty when null_blk is not loaded or configfs not mounted).
  virtual Result<std::vector<NullBlk>> null_blks() = 0;
  // mkdir nullb/NAME, size (MiB), memory_backed 1 (what is written is kept,
  // so that it reads back), power 1. EEXIST when the name is taken.
  virtual Result<void> add_null_blk(const std::string& name, std::uint64_t size_mib) = 0;
  // power 0, rmdir.
  virtual Result<void> remove_null_blk(const std::string& name) = 0;

  // Backing files. nullopt when there is none.
  virtual Result<std::optional<FileId>> file_id(const std::string& path) = 0;
  // Creates a file of `size` bytes (sparse), never over an existing one (EEXIST).
  virtual Result<FileId> create_file(const std::string& path, std::uint64_t size) = 0;
  virtual Result<void> remove_file(const std::string& path) = 0;
  // The file system a path is on, as statfs names its magic: "overlayfs",
  // "tmpfs", "ext4", ...; "" when rxerun does not know the magic.
  virtual Result<std::string> file_system(const std::string& path) = 0;

  // Whether /dev/NAME is a block device (the node udev or devtmpfs made).
  virtual Result<bool> block_device(const std::string& name) = 0;
};

}  // namespace rxerun::sys
