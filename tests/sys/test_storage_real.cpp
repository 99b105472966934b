// RealStorage on this host, without root: the backing files (created sparse
// with their size, never over an existing file, identified by device and
// inode, removed), the file system a path is on; and the mount table's
// lines as /proc/self/mountinfo writes them. configfs's mount and null_blk
// run in the lab VM: tests/vm/nvme.sh and tests/vm/srp.sh.

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "sys/mountinfo.h"
#include "sys/storage_real.h"

using namespace rxerun;

TEST_CASE("storage real: a backing file is created sparse, never over another, and known by device and inode") {
  const auto dir = std::filesystem::temp_directory_path() / ("rxerun-storage-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "lab.img").string();
  sys::RealStorage storage;
  auto none = storage.file_id(path);
  REQUIRE(none);
  CHECK_FALSE(none->has_value());

  auto made = storage.create_file(path, 64u << 20);
  REQUIRE(made);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(made->ino == st.st_ino);
  CHECK(made->dev == st.st_dev);
  CHECK(st.st_size == 64 << 20);
  CHECK(st.st_blocks * 512 < st.st_size);  // sparse

  auto again = storage.create_file(path, 1024);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == EEXIST);
  auto found = storage.file_id(path);
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK((*found)->ino == made->ino);
  CHECK((*found)->size == 64u << 20);

  auto fs = storage.file_system((dir / "not-yet" / "x.img").string());  // its directory's
  REQUIRE(fs);
  CHECK(storage.remove_file(path));
  CHECK_FALSE(storage.file_id(path)->has_value());
  CHECK(storage.remove_file(path).error().code == ENOENT);
  std::filesystem::remove_all(dir);
}

TEST_CASE("mountinfo: a line's fields, escapes, optional fields, and lines that are not a mount's") {
  auto nfs = sys::parse_mountinfo_line(
      "39 32 0:34 / /run/my\\040mnt rw,relatime shared:7 master:2 - nfs4 10.10.0.1:/ rw,vers=4.2,proto=rdma");
  REQUIRE(nfs);
  CHECK(nfs->id == 39);
  CHECK(nfs->device == "0:34");
  CHECK(nfs->mountpoint == "/run/my mnt");
  CHECK(nfs->fstype == "nfs4");
  CHECK(nfs->source == "10.10.0.1:/");
  CHECK(nfs->options == "rw,vers=4.2,proto=rdma");
  auto configfs = sys::parse_mountinfo_line("36 25 0:33 / /sys/kernel/config rw,nosuid - configfs configfs rw");
  REQUIRE(configfs);
  CHECK(configfs->fstype == "configfs");
  CHECK_FALSE(sys::parse_mountinfo_line("36 25 0:33 / /sys/kernel/config rw,nosuid configfs configfs rw"));  // no " - "
  CHECK_FALSE(sys::parse_mountinfo_line("x 25 0:33 / /a rw - tmpfs tmpfs rw"));                              // no ID
  CHECK_FALSE(sys::parse_mountinfo_line("36 25 0:33"));
  CHECK(sys::unescape_octal("a\\011b\\134c\\9") == "a\tb\\c\\9");  // tab, backslash; not octal: as it is

  // The one on top is the last listed at a mount point.
  const std::vector<sys::MountEntry> mounts = {
      {.id = 36, .mountpoint = "/sys/kernel/config", .fstype = "configfs"},
      {.id = 50, .mountpoint = "/mnt", .fstype = "tmpfs"},
      {.id = 51, .mountpoint = "/sys/kernel/config", .fstype = "tmpfs"},
  };
  REQUIRE(sys::mount_at(mounts, "/sys/kernel/config"));
  CHECK(sys::mount_at(mounts, "/sys/kernel/config")->id == 51);
  CHECK_FALSE(sys::mount_at(mounts, "/sys"));
  // With a type, only when the one on top is of that type (a tmpfs over configfs hides it).
  CHECK_FALSE(sys::mount_at(mounts, "/sys/kernel/config", "configfs"));
  CHECK(sys::mount_at(mounts, "/sys/kernel/config", "tmpfs")->id == 51);
  CHECK(sys::mount_at(mounts, "/mnt", "tmpfs")->id == 50);
}

TEST_CASE("storage real: configfs's mount is the one /proc/self/mountinfo has on top at /sys/kernel/config") {
  auto mounts = sys::read_mountinfo();
  REQUIRE(mounts);
  REQUIRE_FALSE(mounts->empty());
  const auto top = sys::mount_at(*mounts, sys::kConfigfsPath);
  auto id = sys::RealStorage().configfs_mount();
  REQUIRE(id);
  if (top && top->fstype == "configfs") {
    REQUIRE(id->has_value());
    CHECK(**id == top->id);
  } else {
    CHECK_FALSE(id->has_value());
  }
}
