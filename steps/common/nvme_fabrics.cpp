#include "steps/common/nvme_fabrics.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "base/try.h"

namespace rxerun::steps {

bool valid_nqn(std::string_view nqn, std::string* why) {
  auto no = [&](std::string text) {
    if (why) *why = std::move(text);
    return false;
  };
  if (nqn.empty()) return no("an NQN cannot be empty");
  if (nqn.size() > 223) return no("longer than 223 bytes (" + std::to_string(nqn.size()) + ")");
  if (nqn == "." || nqn == "..") return no("'.' and '..' are not NQNs");
  for (char c : nqn) {
    if (c == '/') return no("contains '/'");
    if (c == ',' || c == '=') return no("contains ',' or '=', which the fabrics options line cannot carry");
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return no("contains whitespace or a control character");
  }
  if (nqn == "nqn.2014-08.org.nvmexpress.discovery") return no("that is the discovery subsystem's NQN");
  return true;
}

std::optional<StepResult> refuse_other_netns(const StepContext& ctx, std::string_view kind) {
  if (!ctx.step().netns) return std::nullopt;
  StepResult r = StepResult::error(std::string(kind) +
                                   " runs in the initial network namespace only: the kernel's NVMe over Fabrics "
                                   "RDMA transports and its SRP target open their connections there whatever the "
                                   "caller's; drop `netns: " +
                                   *ctx.step().netns + "` and put the addresses there");
  return r;
}

bool is_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string host_id_for(std::string_view hostnqn) {
  constexpr std::string_view kUuidNqn = "nqn.2014-08.org.nvmexpress:uuid:";
  if (hostnqn.starts_with(kUuidNqn) && is_uuid(hostnqn.substr(kUuidNqn.size())))
    return std::string(hostnqn.substr(kUuidNqn.size()));
  // Two FNV-1a hashes of the NQN, as the UUID's 128 bits (version 8: custom).
  auto fnv = [&](std::uint64_t h) {
    for (unsigned char c : hostnqn) h = (h ^ c) * 0x100000001b3ULL;
    return h;
  };
  const std::uint64_t hi = fnv(0xcbf29ce484222325ULL), lo = fnv(0x84222325cbf29ce4ULL);
  char out[37];
  std::snprintf(out, sizeof out, "%08x-%04x-8%03x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xfff),
                static_cast<unsigned>(0x8000 | ((lo >> 48) & 0x3fff)),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return out;
}

Result<std::optional<DeviceAddresses>> device_addresses(StepContext& ctx, const std::string& device) {
  RXERUN_TRY_ASSIGN(const auto devices, ctx.sys().rdma.soft_devices());
  auto d = std::find_if(devices.begin(), devices.end(), [&](const sys::SoftDevice& s) { return s.name == device; });
  if (d == devices.end() || d->netdev.empty()) return std::optional<DeviceAddresses>();
  RXERUN_TRY_ASSIGN(const auto cidrs, ctx.sys().links.addresses(d->netdev));
  DeviceAddresses found{.netdev = d->netdev};
  for (const auto& cidr : cidrs)
    if (std::string a = cidr.substr(0, cidr.find('/')); !a.starts_with("fe80")) found.addresses.push_back(std::move(a));
  return std::optional<DeviceAddresses>(std::move(found));
}

StepResult kernel_refusal(int code, const std::string& what, const std::vector<std::string>& kernel_log,
                          nlohmann::json facts) {
  facts["errno"] = errno_symbol(code);
  facts["error"] = std::string(std::strerror(code));
  StepResult r = StepResult::fail(what + ": " + std::strerror(code) + " (" + errno_symbol(code) + ")", facts);
  for (const auto& line : kernel_log) r.hints.push_back("kernel: " + line);
  return r;
}

std::string errno_symbol(int code) {
  if (const char* name = ::strerrorname_np(code)) return name;
  return std::to_string(code);
}

}  // namespace rxerun::steps
