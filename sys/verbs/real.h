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

// `rxerun __verbs-server` (sys/verbs.h): the server end alone, in this
// process, for a client on another node. Writes kVerbsListening and a line
// end to `out` once it listens, then its result as one line of JSON. Ends
// at the deadline or when `interrupt_fd` turns readable (SIGTERM: the step
// stops it). Returns the process's exit code: 0 once the result is written.
int serve_verbs(const VerbsRequest& request, SteadyTime deadline, int interrupt_fd, int out);

}  // namespace rxerun::sys
