#pragma once
// The picture of a lab (`rxerun graph`): what a scenario builds, read from
// its steps' parameters alone, in step order, without running anything.
// Each kind says what its steps add (Kind::picture); the engine walks the
// steps and knows no kind by name. Pure data: app/graph.cpp draws it.
//
// Every element has a stable id made of names alone (a namespace's or an
// interface's name cannot hold '/'), so that a test or a reader can find it
// in the drawing: "host" (rxerun's own namespace), "netns/lab",
// "netns/lab/vA" (an interface), "rdma/rxe0", "block/no-icmp" (a fault, by
// its step's name), "veth/host/vA--netns/lab/vB" (a veth pair).
//
// In a scenario with nodes (lab VMs) each node is a cluster, "node/a", and
// what lives in it carries the node's prefix: "node/a/host" (rxerun's own
// namespace in node a), "node/a/netns/lab", "node/a/host/eth1" (an
// interface; a wire's NIC is one of kind "wire"), "node/a/rdma/rxe0",
// "veth/node/a/host/vA--node/a/netns/lab/vB". A wire between two nodes is
// "wire/a/eth1--b/eth1" (NODE/NIC of each end, in the order of `wires:`).
// Faults keep "block/STEP": step names are unique in a scenario.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace rxerun {

class Registry;
struct Scenario;
struct StepSpec;

// Where a thing lives: a network namespace of a machine. netns "" is
// rxerun's own namespace ("host"); node "" is the one machine of a scenario
// without nodes (two-node scenarios will name the lab VMs here, and their
// namespaces are then drawn inside the node's cluster).
struct PicturePlace {
  std::string node;
  std::string netns;
  bool operator==(const PicturePlace&) const = default;
};

struct PictureNamespace {
  PicturePlace place;
  std::string step;  // the step that makes it; "" for rxerun's own, or one only named
};

struct PictureInterface {
  PicturePlace place;
  std::string name;
  std::string kind;                    // "veth"; "" when the scenario does not make it (it is found there)
  std::vector<std::string> addresses;  // as the steps give them: 10.10.0.1/24
  std::string mtu;                     // the last MTU a step sets; "" when none does
  std::vector<std::string> routes;     // routes leaving by it: "10.10.0.2/32 table 100"
};

// A wire packets can cross between two interfaces: a veth pair, or a wire
// between two nodes' NICs (`wires:`).
struct PictureLink {
  std::string kind;  // "veth", "wire"
  std::string step;  // the step that makes it; "" for a wire of `wires:`
  PicturePlace a_place;
  std::string a;
  PicturePlace b_place;
  std::string b;
  std::vector<std::string> details;  // its label's lines under the kind: a wire's two MACs
};

// A node (lab VM) of a scenario with `nodes:`: a cluster of its own.
struct PictureNode {
  std::string name;
  std::string kernel;  // the node's kernel, else vm.kernel's; "" when neither names one
};

// An RDMA device over a netdev of its namespace.
struct PictureDevice {
  std::string type;  // "rxe", "siw"
  std::string name;
  PicturePlace place;
  std::string netdev;
  std::string step;
};

// What acts on the packets of an interface, or of a whole namespace when
// `dev` is "": a block rule, netem, a capture.
struct PictureFault {
  std::string kind;  // "block", "netem", "capture": also the first word of its label
  std::string step;
  PicturePlace place;
  std::string dev;
  std::vector<std::string> details;  // its label's lines: "udp dport 4791", "hook input: drop"
  std::string lifted_by;             // the step that reverts it; "" when it lasts until cleanup
};

struct LabPicture {
  std::string title;               // the scenario's name
  std::vector<PictureNode> nodes;  // none: the one machine of a scenario without nodes
  std::vector<PictureNamespace> namespaces;
  std::vector<PictureInterface> interfaces;
  std::vector<PictureLink> links;
  std::vector<PictureDevice> devices;
  std::vector<PictureFault> faults;

  // The namespace at `place`, added when new; `step` is kept when it is the
  // first to make it.
  PictureNamespace& add_namespace(const PicturePlace& place, const std::string& step = "");
  // The interface `name` at `place`, added (with its namespace) when new.
  PictureInterface& add_interface(const PicturePlace& place, const std::string& name);
  // A fault, with the interface it acts on (its namespace when `dev` is "").
  void add_fault(PictureFault fault);
  // Marks the faults made by step `target` as lifted by step `by`.
  void lift(const std::string& target, const std::string& by);

  const PictureNamespace* find_namespace(const PicturePlace& place) const;
  const PictureInterface* find_interface(const PicturePlace& place, const std::string& name) const;
};

// Where a step runs: its `node:` and its `netns:` (rxerun's own namespace
// when unset).
PicturePlace place_of(const StepSpec& step);
// A parameter's value as written: a string as it is ({{steps.X.Y}} too), a
// number or a bool as YAML writes it.
std::string picture_text(const nlohmann::json& value);
// The parameter `key` of a step's parameters as written (picture_text); ""
// when the step does not give it.
std::string picture_param(const nlohmann::json& params, const std::string& key);

// The ids (see the top of this file).
std::string picture_id(const PicturePlace& place);
std::string picture_id(const PictureNode& n);
std::string picture_id(const PictureInterface& i);
std::string picture_id(const PictureDevice& d);
std::string picture_id(const PictureFault& f);
std::string picture_id(const PictureLink& l);
std::string interface_id(const PicturePlace& place, const std::string& name);

// What `scenario` builds, as its kinds describe it. rxerun's own namespace
// comes first, whether anything lives there or not; in a scenario with
// nodes, each node's own namespace, in the order of `nodes:`, then each
// wire's two NICs and the wire between them.
LabPicture picture_of(const Scenario& scenario, const Registry& registry);

// The picture as JSON (a run report's "picture", which the report page
// draws), and back. Keys are the fields' names; a missing key is its default.
nlohmann::json picture_json(const LabPicture& picture);
Result<LabPicture> picture_from_json(const nlohmann::json& j);

}  // namespace rxerun
