#pragma once
// What the initramfs and the host agree on when the lab VM boots. The
// initramfs (built by `vm setup`) holds a static busybox, the modules below
// and /init (stage1_init_script()). /init mounts the host's root read-only
// over virtio-9p (tag "hostroot") with a tmpfs overlay on top, the run's
// share (tag "rxerun") read-write at kShareMount, bind-mounts the kernel's
// modules at /lib/modules/RELEASE, and hands over (switch_root) to the host's
// own rxerun binary as `rxerun __vm-guest`, which runs the scenario.

#include <string>
#include <string_view>
#include <vector>

namespace rxerun::vm {

// Modules /init loads (with their dependencies first, built-ins skipped),
// for qemu's microvm machine: virtio over MMIO, 9p, overlayfs.
inline const std::vector<std::string> kInitramfsModules = {"virtio_mmio", "9pnet_virtio", "9p", "overlay"};

inline constexpr std::string_view kShareMount = "/mnt/rxerun";
inline constexpr std::string_view kHostRootTag = "hostroot";
inline constexpr std::string_view kShareTag = "rxerun";
// The file in the share where the guest's run notes the part it is in
// ("preclean", "step NAME", "cleanup"), before it starts it: when the
// guest's kernel dies, the host reads from it during what the kernel died.
inline constexpr std::string_view kRunningFile = "running";

// Kernel command line parameters /init reads.
inline constexpr std::string_view kParamRelease = "rxerun.release";  // uname -r
inline constexpr std::string_view kParamModules = "rxerun.modules";  // host path of the module tree
inline constexpr std::string_view kParamExe = "rxerun.exe";          // host path of the rxerun binary

// The initramfs's /init: a busybox sh script.
std::string_view stage1_init_script();

}  // namespace rxerun::vm
