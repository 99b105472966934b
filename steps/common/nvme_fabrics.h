#pragma once
// What the storage kinds (nvmet, nvme_connect, srpt, srp_login) share: the
// spelling of an NQN, the refusal of a step in another network namespace
// (the kernel's NVMe-oF RDMA transports and ib_srpt live in the initial
// one), the name of an errno for facts, and a refusal of the kernel's as a
// step's `fail`.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/step.h"

namespace rxerun::steps {

// An NQN as the kernel takes it (a configfs directory name, at most 223
// bytes) and as the fabrics options line can carry it (no ',' or '=').
bool valid_nqn(std::string_view nqn, std::string* why = nullptr);

// An error when the step names a network namespace (docs/kernel-notes.md,
// "NVMe over Fabrics"); nullopt in rxerun's own.
std::optional<StepResult> refuse_other_netns(const StepContext& ctx, std::string_view kind);

// Whether `text` is a UUID (8-4-4-4-12 hex digits).
bool is_uuid(std::string_view text);

// The host ID a host NQN gets when the step names none: the UUID in an
// "nqn.2014-08.org.nvmexpress:uuid:UUID" NQN, else one derived from the NQN
// (the same NQN, the same ID). Since Linux 6.x the kernel refuses a host
// NQN other than its default one under its default host ID
// (docs/kernel-notes.md, "NVMe over Fabrics").
std::string host_id_for(std::string_view hostnqn);

// "ECONNRESET" for ECONNRESET; the number for one glibc cannot name.
std::string errno_symbol(int code);

// An RDMA device's interface in the caller's namespace and its addresses
// (without their prefix length; IPv6 link-local ones aside): where an SRP
// target is reached, where an initiator logs in from. nullopt when the
// device has no interface here.
struct DeviceAddresses {
  std::string netdev;
  std::vector<std::string> addresses;
};
Result<std::optional<DeviceAddresses>> device_addresses(StepContext& ctx, const std::string& device);

// What the kernel refused (a connect, a login) as `fail`: "WHAT: its words
// (ERRNO)", facts `errno` and `error` added to `facts`, and the kernel's
// own lines as hints.
StepResult kernel_refusal(int code, const std::string& what, const std::vector<std::string>& kernel_log,
                          nlohmann::json facts);

}  // namespace rxerun::steps
