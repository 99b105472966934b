#pragma once
// Inside a node of a two-node lab (docs/nodes.md): `rxerun __agent`, which
// the node's lab VM runs instead of a whole run. It reads the scenario as
// the host did, gives the node's wire NICs the scenario's names, opens the
// control port and says hello; then it runs each step the host hands it,
// with the facts of steps that ran on other nodes, under its own journal,
// and on `finish` cleans up and sends its whole run report.

#include <string>

#include "app/run.h"
#include "engine/registry.h"

namespace rxerun {

struct AgentOptions {
  std::string node;      // which of the scenario's nodes this is
  std::string scenario;  // the scenario file (the host's path; the guest sees the host's root)
  CommonOptions common;  // plugins, vars, only, skip: as the host was given them
  bool force = false;
  std::string kernel_health;  // the host's --kernel-health; empty: the scenario's
  std::string output_dir;     // the share's directory for files the steps write
};

// The agent's exit code: 0 when the host said finish, 3 when it could not
// start (the reason on stderr, which the host shows).
int cmd_agent(const AgentOptions& options, Registry& registry);

}  // namespace rxerun
