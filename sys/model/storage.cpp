#include "sys/model/storage.h"

#include <cerrno>

#include "base/strings.h"

namespace rxerun::sys {

bool ModelStorage::configfs_mounted() {
  return configfs_mount_id || (k_.open_world && host_configfs && host_configfs());
}

bool ModelStorage::opens(const std::string& path) {
  bool opens = files.count(path) || (k_.open_world && host_has && host_has(path));
  for (const auto& [name, n] : nullb_dirs) opens = opens || (n.powered && n.disk == path);
  return opens;
}

Result<std::optional<std::uint64_t>> ModelStorage::configfs_mount() {
  if (!configfs_mount_id && configfs_mounted()) return std::optional<std::uint64_t>(1);  // the host's
  return configfs_mount_id;
}

Result<std::uint64_t> ModelStorage::mount_configfs() {
  if (auto f = k_.fault("storage.mount_configfs")) return *f;
  if (!*modules_.loaded("configfs")) return make_error("unknown filesystem type 'configfs'", ENODEV);
  if (!configfs_mount_id) configfs_mount_id = next_mount_++;
  k_.did_anywhere("storage", "mount configfs on " + std::string(kConfigfsPath),
                  shell_join({"mount", "-t", "configfs", "none", kConfigfsPath}));
  return *configfs_mount_id;
}

Result<void> ModelStorage::unmount_configfs() {
  return k_.act(
      "storage", "storage.unmount_configfs", "", {{!configfs_mount_id, EINVAL, "configfs is not mounted"}},
      [&] { configfs_mount_id.reset(); }, "unmount configfs from " + std::string(kConfigfsPath),
      shell_join({"umount", kConfigfsPath}));
}

Result<std::vector<NullBlk>> ModelStorage::null_blks() {
  std::vector<NullBlk> out;
  if (nullb_visible())
    for (const auto& [name, n] : nullb_dirs) out.push_back(n);
  return out;
}

Result<void> ModelStorage::add_null_blk(const std::string& name, std::uint64_t size_mib) {
  const std::string dir = null_blk_dir(name);
  return k_.act(
      "storage", "storage.add_null_blk", name,
      {{!nullb_visible(), ENOENT, "no nullb tree"},
       {nullb_dirs.count(name) > 0, EEXIST, "null_blk " + name + " exists"}},
      [&] {
        nullb_dirs[name] = {.name = name,
                            .index = next_index_++,
                            .size_mib = size_mib,
                            .memory_backed = true,
                            .powered = true,
                            .disk = "/dev/" + name};
      },
      "create null_blk device " + name + " of " + std::to_string(size_mib) + " MiB, memory-backed",
      shell_join({"mkdir", dir}) + "; " + echo_into_attr(std::to_string(size_mib), dir + "/size") + "; " +
          echo_into_attr("1", dir + "/memory_backed") + "; " + echo_into_attr("1", dir + "/power"));
}

Result<void> ModelStorage::remove_null_blk(const std::string& name) {
  const std::string dir = null_blk_dir(name);
  return k_.act(
      "storage", "storage.remove_null_blk", name, {{!nullb_dirs.count(name), ENOENT, "no null_blk " + name}},
      [&] { nullb_dirs.erase(name); }, "remove null_blk device " + name,
      echo_into_attr("0", dir + "/power") + "; " + shell_join({"rmdir", dir}));
}

Result<std::optional<FileId>> ModelStorage::file_id(const std::string& path) {
  if (auto it = files.find(path); it != files.end()) return std::optional<FileId>(it->second);
  if (k_.open_world && host_has && host_has(path)) return std::optional<FileId>(FileId{});
  return std::optional<FileId>();
}

Result<FileId> ModelStorage::create_file(const std::string& path, std::uint64_t size) {
  const FileId id{.dev = 2049, .ino = next_ino_, .size = size};
  auto r = k_.act(
      "storage", "storage.create_file", path, {{files.count(path) > 0, EEXIST, path + " exists"}},
      [&] { files[path] = id, ++next_ino_; }, "create " + path + " (" + std::to_string(size) + " bytes, sparse)",
      shell_join({"truncate", "-s", std::to_string(size), path}));
  if (!r) return r.error();
  return id;
}

Result<void> ModelStorage::remove_file(const std::string& path) {
  return k_.act(
      "storage", "storage.remove_file", path, {{!files.count(path), ENOENT, "no file " + path}},
      [&] { files.erase(path); }, "remove " + path, shell_join({"rm", path}));
}

Result<std::string> ModelStorage::file_system(const std::string& path) {
  for (const auto& [prefix, fs] : file_systems)
    if (path.starts_with(prefix)) return fs;
  return std::string(k_.open_world ? "" : "tmpfs");
}

Result<bool> ModelStorage::block_device(const std::string& name) {
  if (k_.open_world) return true;
  for (const auto& [item, b] : nullb_dirs)
    if (b.powered && b.disk == "/dev/" + name) return true;
  return disks.count(name) > 0;
}

}  // namespace rxerun::sys
