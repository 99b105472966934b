#pragma once
// A scenario with nodes (docs/nodes.md): each node is a lab VM with its own
// kernel, all booted at once and joined by the scenario's wires. The host's
// rxerun runs the steps in order, handing each to the agent of its node
// (app/agent.h) over the node's control channel, with the facts of the
// steps that ran elsewhere; each node keeps its own journal and cleans up
// its own lab. The VMs never outlive the run.

#include <vector>

#include "app/run.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "sys/interrupt.h"
#include "vm/kernel/kernels.h"

namespace rxerun {

// Runs `scenario` (which has nodes) on the `prepared` lab kernels; the
// report's exit code is the run's. Ctrl-C is read from `interrupt` when the
// caller has bound one (a suite), else from one bound here.
RunReport run_nodes(const RunCommandOptions& options, const Scenario& scenario, const Registry& registry,
                    const std::vector<vm::PreparedKernel>& prepared, const sys::Interrupt* interrupt = nullptr);

}  // namespace rxerun
