#pragma once
// What the initramfs and the host agree on when the lab VM boots. The
// initramfs (built by `vm setup`) holds a static busybox, the modules below
// and /init (stage1_init_script()). /init mounts the host's root read-only
// over virtio-9p (tag "hostroot") with a tmpfs overlay on top, the run's
// share (tag "rxerun") read-write at kShareMount, bind-mounts the kernel's
// modules at /lib/modules/RELEASE, and hands over (switch_root) to the host's
// own rxerun binary as `rxerun __vm-guest`, which runs the scenario. With
// kParamGo, rxerun does those mounts itself, after the host's go line.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rxerun::vm {

// Modules /init loads (with their dependencies first, built-ins skipped),
// for qemu's microvm machine: virtio over MMIO, 9p, overlayfs.
inline const std::vector<std::string> kInitramfsModules = {"virtio_mmio", "9pnet_virtio", "9p", "overlay"};
// And those of a node's devices when the kernel has them: the wires' NICs
// (virtio_net) and the control port (virtio_console), so that a snapshot
// holds them loaded and bound (loading them after a restore cost a node a
// few tenths of a second). A kernel without them still boots a lab VM.
inline const std::vector<std::string> kInitramfsNodeModules = {"virtio_net", "virtio_console"};

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
// `rxerun.go=console`: once its modules are loaded, /init copies rxerun
// (the binary rxerun.exe names) and the shared libraries it needs from the
// host's root into its own, unmounts the host's root and runs that copy as
// `rxerun __vm-guest` with kEnvGo set. rxerun, loaded and linked, says
// kWaitingMarker on the console and waits there for the host's go line
// (go_line()); then it mounts what /init mounts otherwise and makes the
// host's root its own. That wait is the point a snapshot of the lab VM is
// taken at (vm/snapshot.h): nothing of the host is mounted (qemu saves no
// guest with a virtio-9p share mounted), the dynamic linker's work is done,
// and everything one run differs from another in comes after.
inline constexpr std::string_view kParamGo = "rxerun.go";
inline constexpr std::string_view kWaitingMarker = "rxerun-init: waiting for the host";
inline constexpr std::string_view kGoMarker = "rxerun-init: go";  // the go line was read
inline constexpr const char* kEnvGo = "RXERUN_GO";                // "console": wait for the go line

// What the go line carries besides the three paths (the binary's is the one
// already running): the host's clock when it sent it and random bytes,
// which the guest takes as its own (a restored guest's clock is the
// snapshot's, and its random state every other restore's).
struct GoLine {
  std::string release, modules, exe;
  long long host_time_ns = 0;  // CLOCK_REALTIME
  std::string seed_hex;        // 32 random bytes
};
std::string go_line(const GoLine& go);  // "rxerun-go RELEASE MODULES EXE TIME_NS SEED\n"
// A console line read back: nullopt when it is no go line.
std::optional<GoLine> parse_go_line(std::string_view line);

// The MAC address qemu gives the lab VM's wire NIC `i` (its i-th
// virtio-net device) when the initramfs speaks the go line: the same in
// every run, so that one snapshot of a machine with wires fits every run
// with as many. The guest gives each such NIC the lab's own MAC address
// (GuestRequest::wire_macs) before the run starts. Locally administered.
std::string wire_boot_mac(std::size_t i);

// The initramfs's /init: a busybox sh script.
std::string_view stage1_init_script();

}  // namespace rxerun::vm
