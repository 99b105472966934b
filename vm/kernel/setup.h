#pragma once
// `rxerun vm setup` for one kernel: download with apt-get into a private apt
// state, unpack, make the modules loadable, build the initramfs. Nothing here
// touches the host's /boot, /lib/modules or apt configuration.

#include <filesystem>
#include <functional>
#include <string>

#include "base/result.h"
#include "vm/kernel/cache.h"
#include "vm/kernel/catalogue.h"

namespace rxerun::vm {

// Prepares one kernel under `cache` (idempotent: a prepared one is checked
// and left as it is, in milliseconds, without apt or network; only its
// initramfs is rebuilt when boot_protocol.h changed). `progress` (may be
// empty) gets one line per stage ("downloading linux-image-... (107 MB)").
// `interrupt_fd` (readable on Ctrl-C) stops it, leaving no half-built kernel
// behind. Builds are serialised by an flock on CACHE/lock; the layout is
// CACHE/kernels/LABEL/{kernel.json, vmlinux, vmlinuz, initramfs.cpio.gz,
// root/, debs/} and CACHE/apt/LABEL/ (the private apt state; CACHE/apt/debian/
// for every kernel looked up by version).
Result<PreparedKernel> setup_kernel(const std::filesystem::path& cache, const KernelSource& source,
                                    const std::function<void(const std::string&)>& progress, int interrupt_fd = -1);

}  // namespace rxerun::vm
