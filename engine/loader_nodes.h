#pragma once
// The reader of a two-node lab's parts: `nodes:` (the lab VMs), `wires:`
// (between their NICs), a step's `node:`, and the nodes of a pair kind's
// ends (Kind::end_nodes). docs/scenarios.md, "Nodes and wires", says the
// rules.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "engine/loader_sink.h"
#include "engine/loader_step_table.h"
#include "engine/loader_vars.h"
#include "engine/loader_yaml.h"
#include "engine/model.h"
#include "engine/registry.h"

namespace rxerun::loading {

class NodesReader {
 public:
  NodesReader(Scenario& scenario, const Registry& registry, Variables& vars, DiagnosticSink& sink)
      : scenario_(scenario), registry_(registry), vars_(vars), sink_(sink) {}

  // The value of `nodes:`; `vm_kernels` is where `vm.kernels` is, when it
  // is (each node names its own kernel instead).
  void read_nodes(const YAML::Node& value, const YAML::Node& key, std::optional<Mark> vm_kernels);
  // The value of `wires:`, after the nodes.
  void read_wires(const YAML::Node& value, const YAML::Node& key);

  // A step's `node:`, its expanded text `name` at `value`.
  void read_step_node(StepSpec& step, const std::string& name, const YAML::Node& value);
  // The nodes of a step's ends (Kind::end_nodes), and its own `node:` where
  // the scenario has nodes and the step needs one (or takes it from the step
  // a `wait` or `revert` names, among `steps`); `node_given`: the step has a
  // `node:` key.
  void check_step_nodes(StepSpec& step, bool node_given, const StepTable& steps);

 private:
  // A wire end as read, and where its parts are.
  struct WireEndRead {
    WireEnd end;
    Mark nic_mark;
    Mark mac_mark;  // where the MAC is given; the end's key when it is derived
    bool mac_given = false;
  };

  void read_node(const std::string& name, const YAML::Node& key, const YAML::Node& value);
  void read_wire(const YAML::Node& item, std::size_t index);
  std::optional<WireEndRead> read_wire_end(const std::string& node, const YAML::Node& key, const YAML::Node& value);
  // The end's NIC name, from the scalar `nic`; `key` is the end's node key.
  std::optional<std::string> read_nic(const std::string& node, const YAML::Node& key, const YAML::Node& nic);
  // The end's MAC, normalised, from the scalar `mac`.
  std::optional<std::string> read_mac(const YAML::Node& key, const YAML::Node& mac);
  // A wire end's NIC and MAC, each used once in the scenario; `which` is 1
  // for the wire's first end, 2 for its second.
  void claim_wire_end(const WireEndRead& read, std::size_t index, int which);
  // "unknown node 'c' in 'node' (did you mean 'a'?); 'nodes' declares a, b",
  // or, in a scenario without nodes, why `what` cannot name one.
  std::string unknown_node(const std::string& name, std::string_view what) const;

  Scenario& scenario_;
  const Registry& registry_;
  Variables& vars_;
  DiagnosticSink& sink_;
  bool has_nodes_ = false;                                    // the scenario has a `nodes:` key
  std::map<std::string, std::pair<Mark, std::size_t>> nics_;  // "a/eth1" -> where a wire first joined it, the wire
  // A wire end's MAC -> where, and whose: "wire 1's first end (a)".
  std::map<std::string, std::pair<Mark, std::string>> macs_;
};

}  // namespace rxerun::loading
