#pragma once
// Snapshots of the lab VM: a guest booted to the point where /init waits for
// the host's go line (vm/boot_protocol.h), saved by qemu's migration into a
// file beside its kernel, and restored by later runs instead of a boot (a
// few tenths of a second instead of seconds under software emulation).
//
// A snapshot is named by the machine's shape (the accelerator, and the
// devices that are not the same for every run) and a key of everything it
// was made from: the kernel image and initramfs, the rxerun binary and the
// shared libraries it started with (the guest holds a copy of them, loaded), the
// qemu binary, and qemu's command line with the paths that change from run
// to run left out.
// A change of any of them gives another key, so a stale snapshot is never
// restored: it is made again, and the stale one of that shape removed.
// Files are written under a temporary name and renamed, so that a run
// restoring one never reads half of it; one maker at a time per shape
// (SnapshotLock), the others boot meanwhile.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/fd.h"
#include "base/result.h"
#include "vm/control.h"
#include "vm/kernel/cache.h"

namespace rxerun::vm {

// qemu's monitor (QMP) over its unix socket: one JSON object a line each
// way, the ControlChannel's framing.
class Qmp {
 public:
  // Connects and leaves the greeting's capabilities negotiation done.
  static Result<Qmp> connect(const std::filesystem::path& socket, std::chrono::milliseconds timeout);
  // A command's "return", or an Error with qemu's description. Events in
  // between are skipped.
  Result<nlohmann::json> execute(const std::string& command, const nlohmann::json& arguments = nullptr,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Hands qemu an open file as `name` (QMP's getfd, the descriptor passed
  // with the command), for a migration to "fd:NAME".
  Result<void> pass_fd(const std::string& name, int fd);

 private:
  explicit Qmp(ControlChannel channel) : channel_(std::move(channel)) {}
  // The answer to the command just sent: its "return", or its error.
  Result<nlohmann::json> reply(const std::string& command, std::chrono::milliseconds timeout);
  ControlChannel channel_;
};

// Where one machine's snapshot lives.
struct SnapshotSlot {
  std::filesystem::path dir;  // KERNEL_DIR/snapshots
  std::string shape;          // "tcg", "kvm", "tcg-control", "tcg-control-1wire"
  std::string key;            // 16 hex digits
  std::filesystem::path path() const { return dir / (shape + "-" + key + ".snap"); }
  // Where its maker writes it before the rename.
  std::filesystem::path temporary() const;
  // The snapshots of the same shape and another key: made from something
  // that has changed since.
  std::vector<std::filesystem::path> stale() const;
};

// The slot of `kernel`'s machine: `machine` is qemu's command line as
// qemu_command() makes it for a template run (its paths placeholders); the
// accelerator, the control port and the number of wire NICs name the shape.
SnapshotSlot snapshot_slot(const PreparedKernel& kernel, const std::vector<std::string>& machine, bool kvm,
                           bool control, std::size_t wires = 0);

// The right to make a slot's snapshot; held until destroyed.
class SnapshotLock {
 public:
  // nullopt when another run holds it, or the directory cannot be written
  // (`why` then says so; empty for the first).
  static std::optional<SnapshotLock> try_take(const SnapshotSlot& slot, std::string* why);

 private:
  explicit SnapshotLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// The snapshots in the cache, per kernel, for `vm status`.
struct SnapshotFile {
  std::string kernel;  // the kernel's label
  std::filesystem::path path;
  std::uintmax_t bytes = 0;
};
std::vector<SnapshotFile> list_snapshots(const std::vector<PreparedKernel>& kernels);

// Removes them all (`vm setup --remove-snapshots`): how many.
Result<int> remove_snapshots(const std::vector<PreparedKernel>& kernels);

}  // namespace rxerun::vm
