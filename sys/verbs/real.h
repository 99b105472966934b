#pragma once
// Verbs over the real librdmacm and libibverbs (verbs_cm.cpp, verbs_self.cpp,
// verbs_ops.cpp), run in a short-lived worker process.
//
// Why a process: librdmacm keeps every device context it opened until the
// device disappears, and a device with an open context cannot be deleted
// (`rdma link delete` waits in D state). rxerun deletes its rxe devices in
// cleanup, in the same process, so the check runs in a forked child that
// takes every context with it when it ends. The child keeps to the step's
// deadline and Ctrl-C itself; rxerun still kills it when it outlives them.

#include "sys/verbs.h"

namespace rxerun::sys {

class RealVerbs final : public Verbs {
 public:
  Result<VerbsResult> run(const VerbsRequest& request, SteadyTime deadline, Interrupt& interrupt) override;
};

}  // namespace rxerun::sys
