#pragma once
// Unpacking a Debian package (.deb) without dpkg: the ar container holds
// data.tar.{xz,zst,gz,bz2} (or plain data.tar), read as a second archive
// straight from the first one's stream. Only regular files, directories,
// symlinks and hardlinks are written; an absolute path, a '..' component or
// a path through a symlink refuses the whole package.

#include <cstdint>
#include <filesystem>
#include <string>

#include "base/result.h"

namespace rxerun::vm {

struct UnpackStats {
  std::uint64_t files = 0;  // regular files and hardlinks
  std::uint64_t bytes = 0;  // regular file contents
};

// Unpacks `deb`'s data into `dest` (which must exist). Files keep their
// executable bits and become readable by everyone (0644/0755); directories
// are 0755. An entry that already exists is replaced (several packages of one
// kernel go into the same tree). `interrupt_fd` (readable on Ctrl-C) stops it.
Result<UnpackStats> unpack_deb(const std::filesystem::path& deb, const std::filesystem::path& dest,
                               int interrupt_fd = -1);

// Unpacks the entries of a (compressed) tarball whose path starts with
// `prefix` ("linux-source-6.1/drivers/infiniband/sw/siw/"; all when empty)
// into `dest`, by the same rules.
Result<UnpackStats> unpack_tarball(const std::filesystem::path& tarball, const std::string& prefix,
                                   const std::filesystem::path& dest, int interrupt_fd = -1);

}  // namespace rxerun::vm
