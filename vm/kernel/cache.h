#pragma once
// Where prepared kernels live, and which are there.

#include <filesystem>
#include <string>
#include <vector>

namespace rxerun::vm {

// A kernel `vm setup` finished preparing (its kernel.json exists).
struct PreparedKernel {
  std::string label;                // "7.3"
  std::string release;              // uname -r in the guest: "7.3.4+deb13-amd64"
  std::string package;              // "linux-image-7.3.4+deb13-amd64"
  std::string package_version;      // "7.3.4-1~bpo13+1"
  std::filesystem::path dir;        // CACHE/kernels/LABEL
  std::filesystem::path vmlinux;    // uncompressed ELF kernel (PVH boot entry), from the bzImage
  std::filesystem::path bzimage;    // the package's vmlinuz
  std::filesystem::path initramfs;  // gzip'd newc cpio: busybox, the boot modules, /init
  std::filesystem::path modules;    // the directory that becomes /lib/modules/RELEASE in the guest
  bool rxe_in_netns = false;
  // Its initramfs was built with this rxerun's /init (vm/boot_protocol.h):
  // only then does the guest wait for the host's go line, which snapshots
  // need. An older one (`vm setup` rebuilds it) boots from its command line.
  bool initramfs_current = true;
};

// Where prepared kernels live: $RXERUN_CACHE_DIR when set; else
// /var/cache/rxerun for root; else $XDG_CACHE_HOME/rxerun (~/.cache/rxerun).
std::filesystem::path cache_dir();
// Directories searched for prepared kernels: cache_dir(), then (for a
// non-root user) /var/cache/rxerun, which root's `vm setup` fills.
std::vector<std::filesystem::path> search_dirs();

// Prepared kernels found in `dirs` (first directory wins for a label),
// newest kernel first.
std::vector<PreparedKernel> prepared_kernels(const std::vector<std::filesystem::path>& dirs);

}  // namespace rxerun::vm
