#pragma once
// The mounts of this process's mount namespace, as /proc/self/mountinfo
// lists them (one line each, the one on top last):
// "39 32 0:34 / /run/mnt rw,relatime - nfs4 10.10.0.1:/ rw,vers=4.2,...".

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

struct MountEntry {
  std::uint64_t id = 0;  // the mount's ID
  std::string device;    // its filesystem's device, "0:34": one per superblock (per namespace, for nfsd's)
  std::string mountpoint;
  std::string fstype;   // "nfs4", "tmpfs"
  std::string source;   // "10.10.0.1:/"
  std::string options;  // the filesystem's (super) options: "rw,vers=4.2,...,proto=rdma,port=20049,..."
};

// One line; nullopt for one that is not a mount's. The mount point and the
// source are unescaped.
std::optional<MountEntry> parse_mountinfo_line(const std::string& line);
// This process's table: for the real services (RealNfs, RealStorage) and
// the plan's look at the host; a step asks its service.
Result<std::vector<MountEntry>> read_mountinfo();

// The mount on top at `mountpoint`, nullopt when there is none, or when
// `fstype` is given and the one on top is of another file system type.
std::optional<MountEntry> mount_at(const std::vector<MountEntry>& mounts, const std::string& mountpoint,
                                   const std::string& fstype = "");

// "\040" in mountinfo (and in nfsd's caches): a backslash and three octal
// digits stand for one byte.
std::string unescape_octal(const std::string& text);

}  // namespace rxerun::sys
