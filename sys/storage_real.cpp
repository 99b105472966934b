#include "sys/storage_real.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/fd.h"
#include "sys/kernel_files.h"
#include "sys/mountinfo.h"

namespace rxerun::sys {

namespace {

Error storage_error(const std::string& what, int code) {
  return make_error(what + ": " + std::strerror(code), code);
}

// statfs(2) magics of the file systems a backing file may live on.
std::string file_system_name(long magic) {
  switch (static_cast<unsigned long>(magic)) {
    case 0x794c7630: return "overlayfs";
    case 0x01021994: return "tmpfs";
    case 0xef53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683e: return "btrfs";
    case 0x01021997: return "9p";
    case 0x6969: return "nfs";
    case 0x65735546: return "fuse";
    default: return {};
  }
}

}  // namespace

Result<std::optional<std::uint64_t>> RealStorage::configfs_mount() {
  auto mounts = read_mountinfo();
  if (!mounts) return mounts.error();
  const auto top = mount_at(*mounts, kConfigfsPath, "configfs");
  if (!top) return std::optional<std::uint64_t>();
  return std::optional<std::uint64_t>(top->id);
}

Result<std::uint64_t> RealStorage::mount_configfs() {
  if (::mount("configfs", kConfigfsPath, "configfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return storage_error(std::string("mount configfs on ") + kConfigfsPath, errno);
  auto id = configfs_mount();
  if (!id) return id.error();
  if (!*id) return make_error("configfs was mounted but /proc/self/mountinfo does not list it", EIO);
  return **id;
}

Result<void> RealStorage::unmount_configfs() {
  if (::umount2(kConfigfsPath, 0) != 0) return storage_error(std::string("umount ") + kConfigfsPath, errno);
  return {};
}

Result<std::vector<NullBlk>> RealStorage::null_blks() {
  std::vector<NullBlk> out;
  for (const auto& name : dir_entries(std::string(kConfigfsPath) + "/nullb")) {
    const std::string dir = null_blk_dir(name);
    if (!kernel_path_exists(dir + "/power")) continue;  // "features" and other files of the tree's top
    NullBlk n{.name = name};
    (void)parse_unsigned(attr_or_empty(dir + "/index"), &n.index);
    (void)parse_unsigned(attr_or_empty(dir + "/size"), &n.size_mib);
    n.memory_backed = attr_or_empty(dir + "/memory_backed") == "1";
    n.powered = attr_or_empty(dir + "/power") == "1";
    // Recent kernels name the disk after the item (6.1 and 7.3 do); older ones nullb<index>.
    if (n.powered)
      n.disk = kernel_path_exists("/sys/block/" + name) ? "/dev/" + name : "/dev/nullb" + std::to_string(n.index);
    out.push_back(std::move(n));
  }
  return out;
}

Result<void> RealStorage::add_null_blk(const std::string& name, std::uint64_t size_mib) {
  const std::string dir = null_blk_dir(name);
  if (auto r = make_kernel_dir(dir); !r) return r;
  if (auto r = write_attr(dir + "/size", std::to_string(size_mib)); !r) return r;
  if (auto r = write_attr(dir + "/memory_backed", "1"); !r) return r;
  return write_attr(dir + "/power", "1");
}

Result<void> RealStorage::remove_null_blk(const std::string& name) {
  const std::string dir = null_blk_dir(name);
  if (attr_or_empty(dir + "/power") == "1")
    if (auto r = write_attr(dir + "/power", "0"); !r) return r;
  return remove_kernel_dir(dir);
}

Result<std::optional<FileId>> RealStorage::file_id(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<FileId>();
    return storage_error("cannot stat " + path, errno);
  }
  return std::optional<FileId>(FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                                      static_cast<std::uint64_t>(st.st_size)});
}

Result<FileId> RealStorage::create_file(const std::string& path, std::uint64_t size) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return storage_error("cannot create " + path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return storage_error("cannot stat " + path, errno);
  const FileId id{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino), size};
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    const int code = errno;
    ::unlink(path.c_str());
    return storage_error("cannot size " + path, code);
  }
  if (fd.close() != 0) return storage_error("cannot close " + path, errno);
  return id;
}

Result<void> RealStorage::remove_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return storage_error("cannot remove " + path, errno);
  return {};
}

Result<std::string> RealStorage::file_system(const std::string& path) {
  struct statfs fs {};
  std::string at = path;
  // The file may not exist yet: its directory's file system is the one.
  while (::statfs(at.c_str(), &fs) != 0) {
    if (errno != ENOENT) return storage_error("cannot statfs " + at, errno);
    const auto slash = at.find_last_of('/');
    if (slash == std::string::npos) {
      at = ".";
    } else {
      at = slash == 0 ? "/" : at.substr(0, slash);
    }
  }
  return file_system_name(static_cast<long>(fs.f_type));
}

Result<bool> RealStorage::block_device(const std::string& name) {
  struct stat st {};
  if (::stat(("/dev/" + name).c_str(), &st) != 0) return false;
  return S_ISBLK(st.st_mode);
}

}  // namespace rxerun::sys
