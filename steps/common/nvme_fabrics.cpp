#include "steps/common/nvme_fabrics.h"

#include <cstring>

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
                                   "RDMA transports open their connections there whatever the caller's; drop "
                                   "`netns: " +
                                   *ctx.step().netns + "` and put the target's and the host's addresses there");
  return r;
}

std::string errno_symbol(int code) {
  if (const char* name = ::strerrorname_np(code)) return name;
  return std::to_string(code);
}

}  // namespace rxerun::steps
