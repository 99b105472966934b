#pragma once
// The scenario model: what the loader produces from YAML, and what the
// runner, planner and reporters read. No YAML type leaks past the loader.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/regex.h"
#include "engine/diag.h"
#include "rxerun/kind.h"

namespace rxerun {

std::string_view to_string(Outcome o);

// What the kernel's reports of its own trouble during a run (a WARNING, an
// oops, a panic: sys/kernel_health.h) do to it: fail it (exit 1), show them
// only, or not read the kernel's log at all.
enum class KernelHealthPolicy { Fail, Warn, Off };
std::string_view to_string(KernelHealthPolicy p);
// "fail", "warn" or "off"; nullopt for anything else.
std::optional<KernelHealthPolicy> parse_kernel_health_policy(std::string_view text);

// A fact matcher: a plain value (equal), "> 0", ">= 100", "< 5", "<= 5",
// "!= 0", "== x", "~ REGEX", "!~ REGEX" (base/regex.h), or a list of plain
// values (a list fact equal to it, item by item, in order).
struct Matcher {
  enum class Op { Eq, Ne, Gt, Ge, Lt, Le, Match, NoMatch };
  Op op = Op::Eq;
  nlohmann::json operand;  // Eq/Ne: the value as written; Gt..Le: a number; (No)Match: the pattern text
  std::string text;        // as written, for messages
  std::optional<Regex> regex;

  // nullopt when it holds, otherwise why not ("12 is not > 20").
  std::optional<std::string> check(const nlohmann::json& actual) const;
};

struct FactExpectation {
  std::string fact;
  Matcher matcher;
  Mark mark;
};

struct Expectation {
  Outcome outcome = Outcome::Ok;
  std::vector<FactExpectation> facts;
};

struct StepSpec {
  int index = 0;  // 0-based position in the scenario
  std::string kind;
  std::string name;    // given, or "KIND-N" (1-based) when not
  bool named = false;  // the user gave the name
  std::optional<std::string> netns;
  // The node (lab VM) it runs on, in a scenario with nodes: `node:`, or,
  // for a pair kind whose ends both name their node (rping server_node /
  // client_node), unset. Always unset without nodes.
  std::optional<std::string> node;
  Expectation expect;
  std::optional<Duration> timeout;  // unset: the kind's default
  int retries = 0;
  Duration delay{1000};
  std::vector<std::string> tags;
  nlohmann::json params;              // object (or the scalar, for scalar kinds); defaults filled in
  std::map<std::string, Mark> marks;  // "" -> the kind key; "dev", "server.netns" -> a parameter's value
  Mark mark;                          // the step itself
  // The file the step is written in, which its marks are in: the
  // scenario's, or a file it includes; empty: the scenario's.
  std::string file;

  Mark mark_of(const std::string& path) const;  // nearest known mark
};

// A lab VM of a scenario with `nodes:`: its name (what `node:` says) and the
// lab kernel it boots (unset: vm.kernel's, else the newest prepared).
struct NodeSpec {
  std::string name;
  std::optional<std::string> kernel;
  Mark mark;
};

// One end of a wire: a NIC of a node, named and addressed as the scenario
// says (the MAC is derived from the wire's and the node's positions when the
// scenario gives none).
struct WireEnd {
  std::string node;
  std::string nic;  // the interface's name in the node: "eth1"
  std::string mac;  // "52:54:00:0a:01:01"
  Mark mark;
};

// A wire joins a NIC of one node to a NIC of another (`wires:`).
struct WireSpec {
  WireEnd a, b;  // in the order the scenario names them
  Mark mark;
};

struct Scenario {
  std::string file;
  std::string name;  // also the id used for the journal, lock and marks
  std::string description;
  std::map<std::string, std::string> vars;                      // after --var overrides
  std::optional<std::string> vm_kernel;                         // vm: {kernel: "7.3"}
  std::vector<std::string> vm_kernels;                          // vm: {kernels: ["6.1", "7.3"]}: run once on each
  std::optional<Duration> vm_timeout;                           // vm: {timeout: 10m}: the whole run in the lab VM
  KernelHealthPolicy kernel_health = KernelHealthPolicy::Fail;  // kernel_health: fail|warn|off
  std::vector<std::string> plugins;                             // plugins: absolute paths, in order
  std::vector<NodeSpec> nodes;                                  // nodes: lab VMs, in the order given; none: one machine
  std::vector<WireSpec> wires;                                  // wires: between the nodes' NICs
  std::vector<StepSpec> steps;

  const StepSpec* find_step(const std::string& name) const;
  // The file a step's marks are in (StepSpec::file, else this scenario's).
  const std::string& file_of(const StepSpec& step) const { return step.file.empty() ? file : step.file; }
  const NodeSpec* find_node(const std::string& name) const;
};

}  // namespace rxerun
