#pragma once
// Runs one rxerun command inside the lab VM: qemu (KVM when /dev/kvm is
// usable, software emulation otherwise) boots a prepared kernel with the
// host's root shared read-only and a per-run share read-write; the guest runs
// the request and powers off. The guest's output is relayed as it comes; a
// kernel that dies before the run starts is booted once more; qemu never
// outlives the call (process group, PR_SET_PDEATHSIG, killed on every exit).

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "vm/guest.h"
#include "vm/kernel/kernels.h"

namespace rxerun::vm {

// A private directory for one run (the guest's kShareMount), removed with
// everything in it when this goes out of scope.
class ShareDir {
 public:
  static Result<ShareDir> create();
  ~ShareDir();
  ShareDir(ShareDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ShareDir(const ShareDir&) = delete;
  ShareDir& operator=(const ShareDir&) = delete;
  ShareDir& operator=(ShareDir&&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit ShareDir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
};

// A network interface of the lab VM that is one end of a wire to another lab
// VM: a virtio-net device whose frames travel as datagrams between two unix
// sockets, this VM's (`local`, made by qemu) and the other's (`remote`).
// Frames sent while the other end is not up yet are lost, as on a cable
// whose far end is unplugged.
struct WireNic {
  std::string mac;               // "52:54:00:0a:00:01"
  std::filesystem::path local;   // this VM's socket (must not exist yet)
  std::filesystem::path remote;  // the other VM's socket
};

struct LabRun {
  PreparedKernel kernel;
  std::vector<WireNic> wires;  // extra interfaces joined to other lab VMs; none by default
  // The control channel's socket (vm/control.h), made by qemu; empty: none.
  // A virtio-serial port named kAgentPort in the guest.
  std::filesystem::path control;
  std::filesystem::path exe;    // the rxerun binary the guest runs (this one)
  std::filesystem::path share;  // a ShareDir's path
  GuestRequest request;
  std::chrono::seconds run_timeout{600};         // from the guest's start to its end
  std::function<void(std::string_view)> output;  // the guest run's output, as it arrives
  std::function<void(double)> booting;  // seconds since qemu started, ~10 times a second until the guest starts
  // Once the guest starts the run: the seconds it took since qemu started,
  // and whether it was restored from a snapshot (else it booted).
  std::function<void(double, bool)> started;
  std::function<void(const std::string&)> notice;  // one-line notes ("kernel died while booting: booting again")
  int interrupt_fd = -1;                           // readable on Ctrl-C: qemu is stopped at once
  std::optional<bool> kvm;                         // the accelerator; unset: choose_accel() decides
  // --cold-boot: boot the kernel the way without a go line; no snapshot is
  // restored or made (vm/snapshot.h). Without it, the lab VM starts from its kernel's
  // snapshot, made by the first boot of that machine.
  bool cold_boot = false;
};

// The kernel image qemu boots: the uncompressed vmlinux (PVH entry, faster)
// when there is one, else the bzImage.
std::filesystem::path boot_image(const PreparedKernel& k);

enum class LabOutcome {
  Finished,     // the guest run ended; GuestResult holds its exit code
  BootFailed,   // the guest never started the run (after the retry)
  Hung,         // the run did not end within run_timeout
  Crashed,      // qemu ended during the run without a result
  Interrupted,  // Ctrl-C / SIGTERM
};

struct LabRunResult {
  LabOutcome outcome = LabOutcome::BootFailed;
  GuestResult guest;
  double boot_seconds = 0;                // qemu start to the guest's start marker (the last boot)
  int boots = 0;                          // 2 when the first boot failed
  std::string accel;                      // "kvm" or "tcg"
  std::string start = "boot";             // "snapshot" when the guest was restored from one, else "boot"
  std::string detail;                     // why, for every outcome but Finished
  std::vector<std::string> console_tail;  // the console's last lines (kernel messages), for failures
};

// Boots, runs, powers off. An Error only when qemu cannot be started at all
// (not installed, bad kernel file).
Result<LabRunResult> run_lab(const LabRun& run);

// Whether the guest waits for the host's go line (rxerun.go=console,
// vm/boot_protocol.h), the way to a snapshot: with a current initramfs and
// without --cold-boot. A cold boot skips it, and so the copy of rxerun into
// the guest's memory that comes with it (about a second under emulation).
bool uses_go_line(const LabRun& run);

// The qemu command line run_lab uses (for `-v` and for tests).
std::vector<std::string> qemu_command(const LabRun& run, bool kvm, double tsc_khz);

// Whether /dev/kvm can be opened for reading and writing by this user.
bool kvm_usable();

// The accelerator the lab VM uses: KVM when /dev/kvm opens and a probe boot
// of `kernel_image` under KVM ends by itself within a few seconds, software
// emulation (TCG) otherwise. Some machines have a /dev/kvm that cannot run
// an ordinary guest (a nested or paravirtual host: qemu answers "failed to
// set MSR", or the guest never runs). RXERUN_VM_ACCEL=kvm|tcg decides
// instead. The verdict is kept per boot of the host in the cache directory
// (kvm-probe.json), so the probe costs once.
struct Accel {
  bool kvm = false;
  std::string why;  // "KVM (/dev/kvm)", "software emulation: /dev/kvm cannot run a guest here (...)"
};
Accel choose_accel(const std::filesystem::path& kernel_image);

}  // namespace rxerun::vm
