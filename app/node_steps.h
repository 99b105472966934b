#pragma once
// The host's part of a two-node run (docs/nodes.md), apart from the lab VMs:
// each step handed to the agent of its node, with the facts of the steps
// that ran on other nodes, and each answer made the step's report. The lab
// VMs and their control channels are behind NodeLinks (app/nodes.cpp); the
// tests put agents on fake systems there (tests/app/test_node_steps.cpp).

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "vm/control.h"

namespace rxerun {

// How the host reaches the agent of each node.
class NodeLinks {
 public:
  virtual ~NodeLinks() = default;
  // Sends `message` to the agent of `node` and returns its answer, once
  // every tool call the agent made meanwhile has been served. An Error, or
  // no message: the node is gone. `stopped`: Ctrl-C came first.
  virtual Result<vm::ControlChannel::Received> ask(const std::string& node, const nlohmann::json& message) = 0;
  // Why a node that is gone went (its console's last lines).
  virtual std::string gone_because(const std::string& node) = 0;
};

// The node a step runs on, from the nodes it touches (step_nodes): its
// `node:`, or the one node its ends name; a pair across two nodes on its
// client's node (the last end); a step that touches no kernel (sleep) on the
// first node. An Error for a kind whose ends cannot be on two nodes.
Result<std::string> node_for(const StepSpec& step, const std::vector<std::string>& nodes, const Scenario& scenario);

// Runs the scenario's steps in order, each on its node, until one does not
// pass; `stop` set: none runs (they are reported not reached). Each step's
// report goes to `reporter` and into `report`, which is marked interrupted
// on Ctrl-C. `interrupted()` says whether Ctrl-C has come. Each step's start
// is taken on this machine's clock, from `run_start`.
void run_node_steps(const Scenario& scenario, const Registry& registry, NodeLinks& links, Reporter& reporter,
                    const std::function<bool()>& interrupted, bool stop, RunReport& report,
                    std::chrono::steady_clock::time_point run_start);

}  // namespace rxerun
