#pragma once
// A kernel of one's own for the lab VM (`rxerun run --kernel PATH [--modules
// DIR]`): a kernel build directory, or a kernel image with its modules
// directory. It is installed into rxerun's cache the way virtme-ng does it
// (the modules modules.order lists, copied to lib/modules/RELEASE/kernel/,
// the modules.builtin files, depmod), given the lab VM's initramfs, and then
// boots like a prepared Debian kernel. Its configuration is checked first:
// every option the lab needs and the kernel lacks is named before anything
// boots.

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "vm/kernel/cache.h"

namespace rxerun::vm {

struct OwnKernelRequest {
  std::filesystem::path path;     // a build directory, or a kernel image (bzImage)
  std::filesystem::path modules;  // with an image: its modules directory (/lib/modules/RELEASE); else empty
};

// What a request names, found on disk; nothing copied yet.
struct OwnKernelFiles {
  bool build_tree = false;       // PATH is a build directory
  std::string release;           // include/config/kernel.release, or the image's own
  std::filesystem::path image;   // arch/x86/boot/bzImage, or PATH
  std::filesystem::path config;  // .config; config-RELEASE beside the image; DIR/build/.config
  std::filesystem::path tree;    // the build directory, or the modules directory
};

// Finds the files of a kernel of one's own. A build directory needs .config,
// arch/x86/boot/bzImage, include/config/kernel.release, modules.order,
// modules.builtin and modules.builtin.modinfo (every missing one is named);
// an image needs `modules` (holding modules.dep, named after the image's
// release) and a configuration: config-RELEASE beside the image (as in
// /boot), else DIR/config (Debian 13), else DIR/build/.config. Errors are the user's to fix (a wrong
// path), with EINVAL.
Result<OwnKernelFiles> locate_own_kernel(const OwnKernelRequest& request);

// What the lab needs from a kernel besides booting (the scenario's steps).
struct LabNeeds {
  bool rxe = false;    // rdma_rxe
  bool siw = false;    // siw
  bool netem = false;  // sch_netem
};

// The options of a kernel configuration (.config text) the lab VM needs and
// that are not set, each as "CONFIG_NAME (why; =y or =m)", in a fixed
// order. To boot: the initramfs (gzip), its /init script, devtmpfs, tmpfs,
// the serial console and output port, ACPI (qemu's microvm describes its
// virtio-mmio devices there), PVH (the direct boot of vmlinux); as =y or
// =m (the initramfs loads them): virtio-mmio, 9p over virtio, overlayfs;
// for the lab: network namespaces, veth, and by `needs` InfiniBand with
// user access and rdma_cm, rdma_rxe, siw, netem. When one of them is =m,
// CONFIG_MODULES as well.
std::vector<std::string> missing_config_options(const std::string& config_text, const LabNeeds& needs);
// missing_config_options() of a configuration file.
Result<std::vector<std::string>> missing_kernel_options(const std::filesystem::path& config, const LabNeeds& needs);

// Installs the kernel into CACHE/own/RELEASE-KEY/ (kernel.json, vmlinuz,
// vmlinux, config, initramfs.cpio.gz, root/lib/modules/RELEASE; a modules
// directory with its modules.dep is used where it is), KEY a digest of the
// sources' paths, sizes and modification times: an installation whose
// sources did not change is reused as it is, an older one of the same
// source is removed. The kernel's label is its release.
Result<PreparedKernel> install_own_kernel(const std::filesystem::path& cache, const OwnKernelRequest& request,
                                          const std::function<void(const std::string&)>& progress,
                                          int interrupt_fd = -1);

}  // namespace rxerun::vm
