#pragma once
// The lab VM's initramfs: a gzip'd newc cpio (the format the kernel unpacks
// into its rootfs), written with libarchive. It holds /init, a static
// busybox, the directories /init mounts on, /dev/console and the boot
// modules under /modules with /modules/order (one name a line, dependencies
// first), which /init insmods in turn.

#include <filesystem>
#include <string>
#include <vector>

#include "base/result.h"
#include "vm/kernel/module_tree.h"

namespace rxerun::vm {

struct InitramfsSpec {
  std::string init;                 // /init, a script (mode 0755)
  std::filesystem::path busybox;    // copied to /bin/busybox
  std::vector<BootModule> modules;  // /modules/NAME.ko, in this order (.ko.xz etc. are decompressed)
};

// Where the host's static busybox is (busybox-static installs /bin/busybox).
inline constexpr const char* kHostBusybox = "/bin/busybox";

// OK when `path` is a statically linked ELF executable (no PT_INTERP: it
// runs before any library is there); the error names the package to install.
Result<void> check_static_busybox(const std::filesystem::path& path);

// Writes the initramfs to `out` (mode 0644).
Result<void> write_initramfs(const std::filesystem::path& out, const InitramfsSpec& spec);

// The lab VM's initramfs for the module tree `moddir` (ROOT/lib/modules/
// RELEASE, after depmod): boot_protocol.h's /init and modules (with their
// dependencies; built-ins left out), the host's static busybox. Returns the
// modules it holds, in load order.
Result<std::vector<BootModule>> write_lab_initramfs(const std::filesystem::path& moddir,
                                                    const std::filesystem::path& out);

}  // namespace rxerun::vm
