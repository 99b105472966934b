#pragma once
// Inside the lab VM: `rxerun __vm-guest` is PID 1 after the initramfs hands
// over. It finishes the guest's root (tmpfs /tmp and /run, devpts, lo up),
// runs the host's request (`rxerun run ...`, from the share) with its output
// on the second serial port, reaps every orphan, collects the kernel
// messages of the RDMA modules, writes the result into the share and powers
// the VM off. The host reads the first serial port for its markers.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace rxerun::vm {

// Lines on the console (ttyS0) the host waits for.
inline constexpr std::string_view kStartedMarker = "rxerun-guest: started";
inline constexpr std::string_view kFinishedMarker = "rxerun-guest: finished";

// The host's request, written to the share as request.json.
struct GuestRequest {
  std::string program;            // what the guest runs: empty for rxerun itself, else a path or a name on PATH
  std::vector<std::string> args;  // its arguments: rxerun's {"run", "/abs/lab.yaml", ...}
  std::string cwd;                // the host's working directory (read-only in the guest)
  std::string term;               // TERM for the run ("dumb" when the host is not a terminal)
  // Wire NICs that booted with a stand-in MAC address (wire_boot_mac()):
  // {that address, the lab's}. The guest loads virtio_net and gives each
  // its lab's address before it starts the program.
  std::vector<std::pair<std::string, std::string>> wire_macs;
  nlohmann::json to_json() const;
  static GuestRequest from_json(const nlohmann::json& j);
};

// What the guest writes to the share as result.json.
struct GuestResult {
  int exit_code = 3;
  std::string ended;           // "exit 1", "killed by SIGKILL"
  double uptime_at_start = 0;  // seconds since the guest kernel booted
  double uptime_at_end = 0;
  std::vector<std::string> dmesg;  // rdma_rxe, ib_core, rdma_cm lines: "[  12.345678] rdma_rxe: loaded"
  nlohmann::json to_json() const;
  static GuestResult from_json(const nlohmann::json& j);
};

// rxerun's command line run in this process: `args` without the program's
// name ({"run", "/abs/lab.yaml", ...}); returns the exit code.
using RunSelf = std::function<int(const std::vector<std::string>& args)>;

// The guest's PID 1. Never returns: powers the VM off. A request for rxerun
// itself (an empty program) runs `run_self` in a forked copy of PID 1
// instead of executing the binary again.
[[noreturn]] void guest_main(const RunSelf& run_self);

}  // namespace rxerun::vm
