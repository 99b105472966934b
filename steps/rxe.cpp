// rxe: a Soft-RoCE device over a netdev (`rdma link add NAME type rxe netdev
// NETDEV`), loading rdma_rxe (and rdma_ucm) when the kernel has not. What it
// journals and how it undoes it: steps/common/soft_device.h.
//
// Before Linux 7.1, rxe's UDP 4791 socket lives in the initial namespace
// only: a device inside another namespace is created but cannot talk. After
// adding, the step checks the socket in its namespace and names a kernel
// that has it when there is none.

#include "steps/common/soft_device.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

constexpr Duration kRxeSocketPoll{20};
// How long a missing UDP 4791 socket is waited for after the device appeared.
constexpr Duration kSocketGrace{1000};

StepResult rxe_not_in_this_kernel(const Error& e) {
  StepResult r = StepResult::error(
      "rdma_rxe is not available in this kernel (CONFIG_RDMA_RXE); run the scenario in "
      "the lab VM: rxerun --vm ...");
  r.hints.push_back(e.message);
  r.hints.push_back("rxerun vm setup prepares the lab VM once; rxerun --vm SCENARIO runs the scenario there");
  return r;
}

// rxe talks through a UDP 4791 socket of the device's namespace (Linux 7.1
// and later); older kernels open it in the initial namespace only.
std::optional<StepResult> check_udp_socket(StepContext& ctx, const nlohmann::json& facts) {
  auto& rdma = ctx.sys().rdma;
  const auto since = ctx.sys().clock.now();
  for (;;) {
    auto listening = rdma.udp4791_listening();
    if (!listening) return StepResult::error(listening.error());
    if (*listening) return std::nullopt;
    if (ctx.sys().clock.now() - since >= kSocketGrace || ctx.sleep_for(kRxeSocketPoll) != WaitStatus::Done) {
      const std::string here = ctx.step().netns ? "netns " + *ctx.step().netns : "this network namespace";
      StepResult r = StepResult::error(
          "rxe device " + facts.value("name", std::string()) + " was added over " +
          facts.value("netdev", std::string()) + ", but no UDP 4791 socket listens in " + here +
          ": this kernel runs rxe only in the initial network namespace (before Linux 7.1); run the scenario in "
          "the lab VM with kernel 7.3: rxerun --vm --kernel 7.3 ..., or put vm: {kernel: \"7.3\"} in it");
      r.facts = facts;
      r.hints.push_back("rxerun vm setup --kernel 7.3 prepares that kernel once");
      return r;
    }
  }
}

}  // namespace

Kind rxe_kind() {
  static const SoftDeviceType rxe{.type = sys::kRxeType,
                                  .module = "rdma_rxe",
                                  .title = "Soft-RoCE (rxe)",
                                  .need = Need::RdmaRxe,
                                  .not_in_this_kernel = rxe_not_in_this_kernel,
                                  .after_add = check_udp_socket};
  return soft_device_kind(rxe);
}

}  // namespace rxerun::steps
