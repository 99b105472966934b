// siw: a soft-iWARP device over a netdev (`rdma link add NAME type siw netdev
// NETDEV`), loading siw (and rdma_ucm) when the kernel has not. What it
// journals and how it undoes it: steps/common/soft_device.h. iWARP runs over
// TCP: siw opens no socket of its own until a connection is made, so there
// is nothing to check after adding (unlike rxe's UDP 4791 socket).

#include "steps/common/soft_device.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

StepResult siw_not_in_this_kernel(const Error& e) {
  StepResult r = StepResult::error(
      "siw is not available in this kernel (CONFIG_RDMA_SIW is not set, and no siw module was built for it): Debian "
      "builds its kernels without it; `rxerun vm setup` builds it for the lab VM's kernels where it can, and "
      "`rxerun vm status` says which (then: rxerun --vm --kernel 6.1 ...)");
  r.hints.push_back(e.message);
  return r;
}

const SoftDeviceType& siw_type() {
  static const SoftDeviceType t{
      .type = sys::kSiwType, .module = "siw", .not_in_this_kernel = siw_not_in_this_kernel, .after_add = nullptr};
  return t;
}

}  // namespace

Kind siw_kind() {
  KindSpec spec;
  spec.name = "siw";
  spec.needs = {Need::NetAdmin, Need::RdmaSiw};
  spec.summary =
      "Add a soft-iWARP (siw) device over a netdev, loading siw when needed; undo deletes it and unloads what the "
      "run loaded.";
  spec.params = soft_device_params("siw0");
  spec.facts = soft_device_facts("siw");
  spec.example =
      "- veth: {name: vA, peer: vB}\n"
      "- link: {dev: vA, up: true}\n"
      "- link: {dev: vB, up: true}\n"
      "- siw: {name: siw0, netdev: vA}\n";
  spec.default_timeout = Duration{30'000};
  return Kind{std::move(spec), [](const Params& p, StepContext& ctx) { return run_soft_device(siw_type(), p, ctx); },
              [](const nlohmann::json& args, UndoContext& ctx) { return undo_soft_device(siw_type(), args, ctx); }};
}

}  // namespace rxerun::steps
