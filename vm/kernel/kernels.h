#pragma once
// The lab VM's kernels: which Debian kernels rxerun knows how to fetch, where
// prepared ones live, and `rxerun vm setup` (download with apt-get into a
// private apt state, unpack, make the modules loadable, build the initramfs).
// Nothing here touches the host's /boot, /lib/modules or apt configuration.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::vm {

// A kernel rxerun can prepare, by the label users type (`--kernel 7.3`).
struct KernelSource {
  std::string label;                // "6.1", "7.3"
  std::string summary;              // one line for `vm status`
  std::vector<std::string> suites;  // apt suites, first = the one the kernel comes from
  std::string default_release;      // APT::Default-Release ("bookworm", "trixie-backports")
  bool rxe_in_netns = false;        // rdma_rxe has per-namespace UDP 4791 sockets (7.x)
};

// Known kernels, oldest first.
const std::vector<KernelSource>& kernel_sources();
const KernelSource* find_kernel_source(const std::string& label);

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

// Prepares one kernel under `cache` (idempotent: a prepared one is checked
// and left as it is, in milliseconds, without apt or network; only its
// initramfs is rebuilt when boot_protocol.h changed). `progress` (may be
// empty) gets one line per stage ("downloading linux-image-... (107 MB)").
// `interrupt_fd` (readable on Ctrl-C) stops it, leaving no half-built kernel
// behind. Builds are serialised by an flock on CACHE/lock; the layout is
// CACHE/kernels/LABEL/{kernel.json, vmlinux, vmlinuz, initramfs.cpio.gz,
// root/, debs/} and CACHE/apt/LABEL/ (the private apt state).
Result<PreparedKernel> setup_kernel(const std::filesystem::path& cache, const KernelSource& source,
                                    const std::function<void(const std::string&)>& progress, int interrupt_fd = -1);

}  // namespace rxerun::vm
