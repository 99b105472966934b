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

}  // namespace

Kind siw_kind() {
  static const SoftDeviceType siw{.type = sys::kSiwType,
                                  .module = "siw",
                                  .title = "soft-iWARP (siw)",
                                  .need = Need::RdmaSiw,
                                  .not_in_this_kernel = siw_not_in_this_kernel,
                                  .after_add = nullptr};
  return soft_device_kind(siw);
}

}  // namespace rxerun::steps
