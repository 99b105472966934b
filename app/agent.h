#pragma once
// Inside a node of a two-node lab (docs/nodes.md): `rxerun __agent`, which
// the node's lab VM runs instead of a whole run. It reads the scenario as
// the host did, gives the node's wire NICs the scenario's names, opens the
// control port and says hello; then it runs each step the host hands it,
// with the facts of steps that ran on other nodes, under its own journal,
// and on `finish` cleans up and sends its whole run report.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app/run.h"
#include "engine/registry.h"
#include "engine/runner.h"

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

class ToolService;

// One node's agent apart from its control channel: each message of the
// host's answered, the steps run by the node's Runner, the tools other
// nodes' steps start here run by its ToolService. cmd_agent passes the
// messages; the tests of step dispatch pass them from a host of their own
// to agents on fake systems.
class AgentSession {
 public:
  AgentSession(const Scenario& scenario, std::string node, Runner& runner, ToolService& tools,
               nlohmann::json host_record);
  // Preclean; whether it left the node clean (the hello says so).
  bool start();
  // The answer to one message: {"step": NAME, "facts": {...}} gets
  // {"step_report": ...}, {"tool": ...} {"tool_reply": ...}, {"finish":
  // true} {"finished": RUN REPORT} after cleanup; anything else {"failed":
  // why}.
  nlohmann::json answer(const nlohmann::json& message);
  bool finished() const { return finished_; }

 private:
  const Scenario& scenario_;
  std::string node_;
  Runner& runner_;
  ToolService& tools_;
  nlohmann::json host_;
  RunReport report_;
  bool finished_ = false;
};

// `rxerun __verbs-server`: the server end of a verbs step whose client is on
// another node (sys/verbs.h), which that step starts here as a tool. Reads
// the request on stdin; exit 2 when it is not one.
int cmd_verbs_server();

// `rxerun __counters [--netns NS]`: every rxe device's counters of this
// kernel and the statistics of the netdevs of NS (default: its own), as one
// JSON object (steps/common/traffic.h); a pair step across two nodes runs it
// on the server's node before and after its traffic. Exit 1 when it cannot
// read them (the reason on stderr).
int cmd_counters(const std::optional<std::string>& netns);

}  // namespace rxerun
