#pragma once
// A run on this machine's kernel: in this process (one scenario), or, for a
// suite, in a child rxerun of its own.

#include "app/run_options.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "sys/interrupt.h"

namespace rxerun {

// One run on this machine's kernel: preclean, steps, cleanup; with RDMA
// steps, a failed run shows what the kernel's RDMA stack logged.
RunReport run_on_host(const RunCommandOptions& options, const Scenario& scenario, Registry& registry);

// One run of a suite on this kernel, in a child rxerun of its own: each
// scenario starts as it would alone, with nothing left over from the one
// before it in the libraries' process state (librdmacm learns the RDMA
// devices once per process, and a suite's scenarios create and delete
// them), and a run that crashes ends only itself. Its output goes straight
// through; its JSON report comes back through a private directory. Ctrl-C
// (read from `interrupt`, which the caller has bound) is passed on to it
// (it leads its own process group), and the suite stops once it has
// cleaned up.
RunReport run_in_child(const RunCommandOptions& options, const Scenario& scenario, const sys::Interrupt& interrupt);

}  // namespace rxerun
