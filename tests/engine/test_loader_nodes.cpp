// Two-node labs in the loader: `nodes:`, `wires:`, a step's `node:` and the
// nodes of the pair kinds' ends (engine/loader_nodes.cpp), with the real
// kinds (their end_nodes are part of what is tested), and step_nodes
// (engine/nodes.h).

#include <doctest/doctest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/loader.h"
#include "engine/nodes.h"
#include "steps/kinds.h"

using namespace rxerun;

namespace {

const Registry& nodes_registry() {
  static const Registry r(steps::all_kinds());
  return r;
}

LoadResult load_nodes(const std::string& text) {
  return load_scenario_text(text, "lab.yaml", nodes_registry(), {});
}

// Every diagnostic, as printed.
std::vector<std::string> node_errors(const std::string& text) {
  auto r = load_nodes(text);
  CHECK_FALSE(r.scenario.has_value());
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(d.to_string());
  return out;
}

// The one diagnostic of an invalid scenario.
std::string node_error(const std::string& text) {
  auto all = node_errors(text);
  REQUIRE_MESSAGE(all.size() == 1, fmt::format("{}", fmt::join(all, "\n")));
  return all.front();
}

Scenario node_valid(const std::string& text) {
  auto r = load_nodes(text);
  std::string all;
  for (const auto& d : r.diagnostics) all += d.to_string() + "\n";
  REQUIRE_MESSAGE(r.scenario.has_value(), all);
  return *r.scenario;
}

// Two nodes and a wire; the steps follow (from line 6).
const std::string kTwoNodes = R"(nodes:
  a: {kernel: "6.1"}
  b: {kernel: "7.3"}
wires:
  - {a: eth1, b: eth1}
steps:
)";

std::vector<std::string> nodes_of(const Scenario& s, const std::string& step) {
  const StepSpec* st = s.find_step(step);
  REQUIRE(st);
  return step_nodes(*st, nodes_registry().find(st->kind));
}

}  // namespace

TEST_CASE("nodes: a two-node lab becomes the model") {
  const Scenario s = node_valid(R"(name: interop
vm: {kernel: "7.3"}
nodes:
  a: {kernel: "6.1"}
  b:
  c: {}
wires:
  - {a: eth1, b: eth1}
  - {a: {nic: eth2, mac: "02:AA:bb:00:00:01"}, c: eth1}
  - b: {nic: eth2}
    c: {nic: eth2}
steps:
  - name: addr
    address: {dev: eth1, cidr: 10.70.0.1/24}
    node: a
  - name: nap
    sleep: {duration: 1s}
  - name: ping
    rping: {server: 10.70.0.1, server_node: a, client: 10.70.0.2, client_node: b}
  - name: bw
    perftest: {test: write_bw, server: {dev: rxe0, node: b}, client: {dev: rxe0, to: 10.70.0.2}}
    node: c
  - name: back
    revert: addr
)");
  REQUIRE(s.nodes.size() == 3);
  CHECK(s.nodes[0].name == "a");
  CHECK(s.nodes[0].kernel == "6.1");
  CHECK(s.nodes[0].mark.line == 4);
  CHECK(s.nodes[0].mark.col == 3);
  CHECK(s.nodes[1].name == "b");
  CHECK_FALSE(s.nodes[1].kernel);  // vm.kernel's, at run time
  CHECK(s.vm_kernel == "7.3");
  CHECK(s.nodes[2].name == "c");
  CHECK(s.find_node("c") == &s.nodes[2]);
  REQUIRE(s.wires.size() == 3);
  CHECK(s.wires[0].a.node == "a");
  CHECK(s.wires[0].a.nic == "eth1");
  CHECK(s.wires[0].a.mac == "52:54:00:0a:01:01");
  CHECK(s.wires[0].b.node == "b");
  CHECK(s.wires[0].b.mac == "52:54:00:0a:01:02");
  CHECK(s.wires[0].mark.line == 8);
  CHECK(s.wires[1].a.mac == "02:aa:bb:00:00:01");  // as given, lower-cased
  CHECK(s.wires[1].b.node == "c");
  CHECK(s.wires[1].b.mac == "52:54:00:0a:02:02");
  CHECK(s.wires[2].a.nic == "eth2");
  CHECK(s.wires[2].a.mac == "52:54:00:0a:03:01");
  CHECK(s.wires[2].b.mac == "52:54:00:0a:03:02");
  CHECK(s.wires[2].a.mark.line == 10);
  CHECK(s.wires[2].b.mark.line == 11);

  CHECK(s.find_step("addr")->node == "a");
  CHECK_FALSE(s.find_step("nap")->node);
  CHECK_FALSE(s.find_step("ping")->node);  // both ends name theirs
  CHECK(s.find_step("bw")->node == "c");
  CHECK(s.find_step("back")->node == "a");  // the reverted step's
  CHECK(nodes_of(s, "addr") == std::vector<std::string>{"a"});
  CHECK(nodes_of(s, "nap").empty());
  CHECK(nodes_of(s, "ping") == std::vector<std::string>{"a", "b"});
  CHECK(nodes_of(s, "bw") == std::vector<std::string>{"b", "c"});  // the client takes the step's
}

TEST_CASE("nodes: names, kernels and keys of nodes") {
  CHECK(node_error("nodes:\n  1a: {}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:2:3: node name '1a' must be a letter, then letters, digits, '-' or '_', at most 15 bytes");
  CHECK(node_error("nodes:\n  a.b: {}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:2:3: node name 'a.b' must be a letter, then letters, digits, '-' or '_', at most 15 bytes");
  CHECK(node_error("nodes:\n  abcdefghijklmnop: {}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:2:3: node name 'abcdefghijklmnop' must be a letter, then letters, digits, '-' or '_', at most 15 "
        "bytes");
  CHECK(node_valid("nodes:\n  abcdefghijklmno: {}\n  B-2_x: {}\nsteps: [{sleep: {duration: 1s}}]\n").nodes.size() == 2);
  CHECK(node_error("nodes:\n  a: {kernal: \"6.1\"}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:2:7: unknown key 'kernal' in node 'a' (did you mean 'kernel'?)");
  CHECK(node_error("nodes:\n  a: 6.1\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:2:6: node 'a' must be a mapping such as {kernel: \"6.1\"}, got '6.1'");
  CHECK(node_error("nodes:\n  a: {kernel: \"\"}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:2:15: the kernel of node 'a' cannot be empty");
  CHECK(node_error("nodes:\n  a: {kernel: [6.1]}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:2:15: 'nodes.a.kernel' must be a string, got a list");
  CHECK(node_error("nodes:\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:1:1: 'nodes' is empty: declare at least one node, such as nodes: {a: {kernel: \"6.1\"}}");
  CHECK(node_error("nodes: {}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:1:8: 'nodes' is empty: declare at least one node, such as nodes: {a: {kernel: \"6.1\"}}");
  CHECK(node_error("nodes: [a, b]\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:1:8: 'nodes' must be a mapping of node names to {kernel: ...}, such as {a: {kernel: \"6.1\"}, b: "
        "{}}, got a list");
  CHECK(node_error("nodes: {a: {}, b: {}, c: {}, d: {}, e: {}, f: {}}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:1:37: node 'e' is one too many: a scenario has at most 4 nodes, each a lab VM of about 1.4 GB of "
        "memory");
  CHECK(node_error("nodes: {a: {}}\nnode: {a: {}}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:2:1: unknown key 'node' at the top level (did you mean 'nodes'?)");
}

TEST_CASE("nodes: vm.kernels cannot go with nodes, vm.kernel is their default") {
  CHECK(node_error("vm: {kernels: [\"6.1\", \"7.3\"]}\nnodes: {a: {}}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:1:6: 'vm.kernels' cannot go with 'nodes': each node names its own kernel (nodes: {a: {kernel: "
        "\"6.1\"}, b: {kernel: \"7.3\"}})");
  const Scenario s = node_valid("vm: {kernel: \"7.3\"}\nnodes: {a: {}}\nsteps: [{sleep: {duration: 1s}}]\n");
  CHECK(s.vm_kernel == "7.3");
  CHECK_FALSE(s.nodes.front().kernel);
}

TEST_CASE("nodes: the shape of wires") {
  CHECK(node_error("wires:\n  - {a: eth1, b: eth1}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "lab.yaml:1:1: 'wires' joins nodes' NICs, but the scenario declares no 'nodes' (nodes: {a: {}, b: {}})");
  const std::string nodes = "nodes: {a: {}, b: {}}\n";
  const std::string steps = "steps: [{sleep: {duration: 1s}}]\n";
  CHECK(node_error(nodes + "wires: {a: eth1, b: eth1}\n" + steps) ==
        "lab.yaml:2:8: 'wires' must be a list of wires such as [{a: eth1, b: eth1}], got a mapping");
  CHECK(node_error(nodes + "wires: [a]\n" + steps) ==
        "lab.yaml:2:9: a wire must be a mapping of two nodes to their NICs, such as {a: eth1, b: eth1}, got 'a'");
  CHECK(node_error(nodes + "wires: [{a: eth1}]\n" + steps) ==
        "lab.yaml:2:9: a wire joins two nodes' NICs, such as {a: eth1, b: eth1}; this one names 1 node");
  CHECK(node_error("nodes: {a: {}, b: {}, c: {}}\nwires: [{a: eth1, b: eth1, c: eth1}]\n" + steps) ==
        "lab.yaml:2:9: a wire joins two nodes' NICs, such as {a: eth1, b: eth1}; this one names 3 nodes");
  CHECK(node_error(nodes + "wires: [{a: eth1, a: eth2}]\n" + steps) ==
        "lab.yaml:2:19: duplicate key 'a' (first at 2:10)");
  CHECK(node_error(nodes + "wires: [{a: eth1, c: eth1}]\n" + steps) ==
        "lab.yaml:2:19: wire names node 'c', which 'nodes' does not declare (nodes: a, b)");
  CHECK(node_error(nodes + "wires: [{a: {nic: eth1, colour: red}, b: eth1}]\n" + steps) ==
        "lab.yaml:2:25: unknown key 'colour' in the wire end of node 'a'");
  CHECK(node_error(nodes + "wires: [{a: {nic: eth1, mca: \"52:54:00:00:00:01\"}, b: eth1}]\n" + steps) ==
        "lab.yaml:2:25: unknown key 'mca' in the wire end of node 'a' (did you mean 'mac'?)");
  CHECK(node_error(nodes + "wires: [{a: {mac: \"52:54:00:00:00:01\"}, b: eth1}]\n" + steps) ==
        "lab.yaml:2:13: the wire end of node 'a' names no 'nic': {nic: eth1, mac: \"52:54:00:12:34:56\"}");
  CHECK(node_error(nodes + "wires: [{a: [eth1], b: eth1}]\n" + steps) ==
        "lab.yaml:2:13: the wire end of node 'a' must be a NIC's name (eth1) or {nic: eth1, mac: ...}, got a list");
  CHECK(node_error(nodes + "wires: [{a: , b: eth1}]\n" + steps) ==
        "lab.yaml:2:10: the wire end of node 'a' must be a NIC's name (eth1) or {nic: eth1, mac: ...}, got nothing");
}

TEST_CASE("nodes: a wire's NICs and MACs") {
  const std::string nodes = "nodes: {a: {}, b: {}}\n";
  const std::string steps = "steps: [{sleep: {duration: 1s}}]\n";
  CHECK(node_error(nodes + "wires: [{a: eth/1, b: eth1}]\n" + steps) ==
        "lab.yaml:2:13: 'eth/1' is not a valid interface name: contains '/'");
  CHECK(node_error(nodes + "wires: [{a: averyveryverylongname, b: eth1}]\n" + steps) ==
        "lab.yaml:2:13: 'averyveryverylongname' is not a valid interface name: longer than 15 bytes (21)");
  CHECK(node_error(nodes + "wires: [{a: lo, b: eth1}]\n" + steps) ==
        "lab.yaml:2:13: 'lo' is the loopback of node 'a': a wire joins a NIC of its own (eth1)");
  CHECK(node_valid(nodes + "wires: [{a: eth0, b: eth0}]\n" + steps).wires.size() == 1);
  CHECK(node_error(nodes + "wires:\n  - {a: eth1, b: eth1}\n  - {a: eth2, b: eth1}\n" + steps) ==
        "lab.yaml:4:18: eth1 of node 'b' is on wire 1 already (at 3:18): a NIC joins one wire");
  // The same NIC name on two nodes is two NICs.
  CHECK(node_valid(nodes + "wires:\n  - {a: eth1, b: eth1}\n  - {a: eth2, b: eth2}\n" + steps).wires.size() == 2);
  CHECK(node_error(nodes + "wires: [{a: {nic: eth1, mac: \"52:54:00:12:34\"}, b: eth1}]\n" + steps) ==
        "lab.yaml:2:30: '52:54:00:12:34' is not a NIC's MAC address: a MAC address is six pairs of hex digits "
        "joined by ':' (52:54:00:12:34:56)");
  CHECK(node_error(nodes + "wires: [{a: {nic: eth1, mac: \"52-54-00-12-34-56\"}, b: eth1}]\n" + steps) ==
        "lab.yaml:2:30: '52-54-00-12-34-56' is not a NIC's MAC address: a MAC address is six pairs of hex digits "
        "joined by ':' (52:54:00:12:34:56)");
  CHECK(node_error(nodes + "wires: [{a: {nic: eth1, mac: \"01:00:5e:00:00:01\"}, b: eth1}]\n" + steps) ==
        "lab.yaml:2:30: '01:00:5e:00:00:01' is not a NIC's MAC address: a multicast address (the first octet is "
        "odd): a NIC's own address is unicast");
  CHECK(node_error(nodes + "wires: [{a: {nic: eth1, mac: \"ff:ff:ff:ff:ff:ff\"}, b: eth1}]\n" + steps) ==
        "lab.yaml:2:30: 'ff:ff:ff:ff:ff:ff' is not a NIC's MAC address: a multicast address (the first octet is "
        "odd): a NIC's own address is unicast");
  CHECK(node_error(nodes + "wires: [{a: {nic: eth1, mac: \"00:00:00:00:00:00\"}, b: eth1}]\n" + steps) ==
        "lab.yaml:2:30: '00:00:00:00:00:00' is not a NIC's MAC address: the all-zero address is no NIC's");
  CHECK(node_error(nodes +
                   "wires:\n  - {a: {nic: eth1, mac: \"02:00:00:00:00:01\"}, b: eth1}\n"
                   "  - {a: eth2, b: {nic: eth2, mac: \"02:00:00:00:00:01\"}}\n" +
                   steps) ==
        "lab.yaml:4:35: MAC 02:00:00:00:00:01 is given twice: wire 1's first end (a) has it already (at 3:26)");
  CHECK(node_error(nodes +
                   "wires:\n  - {a: {nic: eth1, mac: \"52:54:00:0a:02:01\"}, b: eth1}\n"
                   "  - {a: eth2, b: eth2}\n" +
                   steps) ==
        "lab.yaml:4:6: the MAC derived for this end, 52:54:00:0a:02:01, is the one wire 1's first end (a) is given "
        "(at 3:26): give this end a MAC, or that one another");
}

TEST_CASE("nodes: a step's node") {
  CHECK(node_error("steps:\n  - sleep: {duration: 1s}\n    node: a\n") ==
        "lab.yaml:3:11: 'node' names node 'a', but this scenario declares no 'nodes' (the lab VMs of a two-node lab)");
  CHECK(node_error(kTwoNodes + "  - address: {dev: eth1, cidr: 10.70.0.1/24}\n    node: aa\n") ==
        "lab.yaml:8:11: unknown node 'aa' in 'node' (did you mean 'a'?); 'nodes' declares a, b");
  CHECK(node_error(kTwoNodes + "  - address: {dev: eth1, cidr: 10.70.0.1/24}\n    node: [a]\n") ==
        "lab.yaml:8:11: 'node' must be a scalar, got a list");
  CHECK(node_errors(kTwoNodes + "  - address: {dev: eth1, cidr: 10.70.0.1/24}\n    nodes: a\n") ==
        std::vector<std::string>{
            "lab.yaml:7:5: step 'address-1' runs on a node: this scenario has nodes (a, b); add 'node: a' or 'node: b'",
            "lab.yaml:8:5: unknown key 'nodes' in step (did you mean 'node'?)"});
  CHECK(node_error(kTwoNodes + "  - name: up\n    link: {dev: eth1, up: true}\n") ==
        "lab.yaml:7:5: step 'up' runs on a node: this scenario has nodes (a, b); add 'node: a' or 'node: b'");
  CHECK(node_error("nodes: {a: {}}\nsteps:\n  - link: {dev: eth1, up: true}\n") ==
        "lab.yaml:3:5: step 'link-1' runs on a node: this scenario has nodes (a); add 'node: a'");
  CHECK(node_error("nodes: {a: {}, b: {}, c: {}}\nsteps:\n  - link: {dev: eth1, up: true}\n") ==
        "lab.yaml:3:5: step 'link-1' runs on a node: this scenario has nodes (a, b, c); add 'node: a', 'node: b' or "
        "'node: c'");
  // A sleep touches no kernel; it may name a node all the same.
  const Scenario s =
      node_valid(kTwoNodes + "  - sleep: {duration: 1s}\n  - name: nap\n    sleep: {duration: 1s}\n    node: b\n");
  CHECK_FALSE(s.steps[0].node);
  CHECK(s.steps[1].node == "b");
}

TEST_CASE("nodes: the nodes of a pair kind's ends") {
  CHECK(node_errors("steps:\n  - rping: {server: 10.0.0.1, server_node: a, client_node: b}\n") ==
        std::vector<std::string>{
            "lab.yaml:2:44: 'server_node' names node 'a', but this scenario declares no 'nodes' (the lab VMs of a "
            "two-node lab)",
            "lab.yaml:2:60: 'client_node' names node 'b', but this scenario declares no 'nodes' (the lab VMs of a "
            "two-node lab)"});
  CHECK(node_error("steps:\n  - perftest: {test: write_bw, server: {dev: rxe0, node: a}, client: {dev: rxe1, to: "
                   "10.0.0.1}}\n") ==
        "lab.yaml:2:58: 'server.node' names node 'a', but this scenario declares no 'nodes' (the lab VMs of a "
        "two-node lab)");
  CHECK(node_error(kTwoNodes + "  - rping: {server: 10.70.0.1, server_node: a, client_node: c}\n") ==
        "lab.yaml:7:61: unknown node 'c' in 'client_node' (did you mean 'a'?); 'nodes' declares a, b");
  CHECK(node_error(kTwoNodes +
                   "  - perftest: {test: write_bw, server: {dev: rxe0, node: a}, client: {dev: rxe0, to: 10.70.0.1, "
                   "node: bb}}\n") ==
        "lab.yaml:7:103: unknown node 'bb' in 'client.node' (did you mean 'b'?); 'nodes' declares a, b");
  CHECK(node_error(kTwoNodes + "  - verbs: {server: {addr: 10.70.0.1, node: x}, client: {node: b}}\n") ==
        "lab.yaml:7:45: unknown node 'x' in 'server.node' (did you mean 'a'?); 'nodes' declares a, b");
  // One end named, the other without the step's node.
  CHECK(node_error(kTwoNodes + "  - rping: {server: 10.70.0.1, server_node: a}\n") ==
        "lab.yaml:7:5: step 'rping-1' runs on a node: this scenario has nodes (a, b); add 'node: a' or 'node: b', "
        "or name each end's node (server_node, client_node)");
  CHECK(node_error(kTwoNodes + "  - verbs: {mode: self, dev: rxe0}\n") ==
        "lab.yaml:7:5: step 'verbs-1' runs on a node: this scenario has nodes (a, b); add 'node: a' or 'node: b', "
        "or name each end's node (server.node, client.node)");
  // An end without its node takes the step's.
  Scenario s = node_valid(kTwoNodes + "  - name: half\n    rping: {server: 10.70.0.1, client_node: b}\n    node: a\n" +
                          "  - name: same\n    rping: {server: 10.70.0.1}\n    node: b\n" +
                          "  - name: both\n    verbs: {server: {addr: 10.70.0.1, node: b}, client: {node: a}}\n" +
                          "  - name: client-only\n    verbs: {client: {to: 10.70.0.1, node: b}}\n" +
                          "  - name: self\n    verbs: {mode: self, dev: rxe0}\n    node: a\n");
  CHECK(nodes_of(s, "half") == std::vector<std::string>{"a", "b"});
  CHECK(nodes_of(s, "same") == std::vector<std::string>{"b"});
  CHECK(nodes_of(s, "both") == std::vector<std::string>{"b", "a"});
  CHECK_FALSE(s.find_step("both")->node);
  CHECK(nodes_of(s, "client-only") == std::vector<std::string>{"b"});  // verbs without a server: one end
  CHECK(nodes_of(s, "self") == std::vector<std::string>{"a"});
}

TEST_CASE("nodes: wait and revert run where the step they name ran") {
  Scenario s = node_valid(kTwoNodes +
                          "  - name: srv\n    exec: {argv: [sleep, \"1\"], background: true}\n    node: b\n"
                          "  - wait: srv\n"
                          "  - name: two\n    rping: {server: 10.70.0.1, server_node: a, client_node: b}\n"
                          "  - revert: two\n    node: a\n");
  CHECK(s.steps[1].node == "b");
  CHECK(nodes_of(s, "wait-2") == std::vector<std::string>{"b"});
  CHECK(s.steps[3].node == "a");
  // A step on two nodes, or on none: say which.
  CHECK(node_error(kTwoNodes + "  - name: two\n    rping: {server: 10.70.0.1, server_node: a, client_node: b}\n" +
                   "  - revert: two\n") ==
        "lab.yaml:9:5: step 'revert-2' runs on a node: this scenario has nodes (a, b); add 'node: a' or 'node: b'");
  CHECK(node_error(kTwoNodes + "  - name: nap\n    sleep: {duration: 1s}\n  - revert: nap\n") ==
        "lab.yaml:9:5: step 'revert-2' runs on a node: this scenario has nodes (a, b); add 'node: a' or 'node: b'");
}

TEST_CASE("nodes: step_nodes without nodes, and for a step of no kind") {
  StepSpec step;
  CHECK(step_nodes(step, nullptr).empty());
  step.params = {{"server_node", "a"}};
  CHECK(step_nodes(step, nullptr).empty());  // no kind: the params name no ends
  step.node = "c";
  CHECK(step_nodes(step, nullptr) == std::vector<std::string>{"c"});
  const Kind* rping = nodes_registry().find("rping");
  REQUIRE(rping);
  CHECK(rping->end_nodes == std::vector<std::string>{"server_node", "client_node"});
  CHECK(step_nodes(step, rping) == std::vector<std::string>{"a", "c"});
  step.params = {{"server_node", "a"}, {"client_node", "a"}};
  CHECK(step_nodes(step, rping) == std::vector<std::string>{"a"});  // distinct
  CHECK(nodes_registry().find("perftest")->end_nodes == std::vector<std::string>{"server.node", "client.node"});
  CHECK(nodes_registry().find("verbs")->end_nodes == std::vector<std::string>{"server.node", "client.node"});
  CHECK(nodes_registry().find("ping")->end_nodes.empty());
  // A scenario without nodes: no step touches one.
  const Scenario s = node_valid("steps:\n  - rping: {server: 10.0.0.1}\n  - sleep: {duration: 1s}\n");
  for (const auto& st : s.steps) CHECK(step_nodes(st, nodes_registry().find(st.kind)).empty());
}

TEST_CASE("nodes: MAC addresses") {
  std::string why;
  CHECK(normalized_mac("52:54:00:AB:cd:0F", &why) == "52:54:00:ab:cd:0f");
  CHECK(normalized_mac("02:00:00:00:00:01", &why) == "02:00:00:00:00:01");
  CHECK(normalized_mac("52:54:00:ab:cd:0g", &why).empty());
  CHECK(normalized_mac("52:54:00:ab:cd:0", &why).empty());
  CHECK(normalized_mac("52:54:00:ab:cd:0ff", &why).empty());
  CHECK(normalized_mac("03:00:00:00:00:01", &why).empty());
  CHECK(derived_mac(1, 2) == "52:54:00:0a:01:02");
  CHECK(derived_mac(26, 1) == "52:54:00:0a:1a:01");
  CHECK(valid_node_name("a"));
  CHECK_FALSE(valid_node_name(""));
  CHECK_FALSE(valid_node_name("_a"));
  CHECK_FALSE(valid_node_name("a b"));
}
