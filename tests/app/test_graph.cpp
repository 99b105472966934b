// `rxerun graph`: the picture of a scenario (engine/picture.h), made by the
// real kinds from the steps' parameters, and its SVG (app/graph.h), in which
// every element carries its stable id.

#include <doctest/doctest.h>

#include <algorithm>

#include <fmt/format.h>

#include "app/graph.h"
#include "engine/loader.h"
#include "engine/picture.h"
#include "steps/kinds.h"

using namespace rxerun;

namespace {

const Registry& graph_registry() {
  static const Registry r(steps::all_kinds());
  return r;
}

LabPicture picture(const std::string& yaml) {
  LoadResult r = load_scenario_text(yaml, "lab.yaml", graph_registry(), {});
  REQUIRE(r.scenario);
  return picture_of(*r.scenario, graph_registry());
}

const PicturePlace kHost{};
PicturePlace netns(const std::string& name) {
  return {"", name};
}

// Two namespaces, a veth between them, addresses, an MTU, rxe on both ends,
// a block on one end, netem on the other (lifted later), a capture, a route.
const std::string kLab = R"(name: two-sides
vars: {a: 10.10.0.1, b: 10.10.0.2}
steps:
  - netns: {name: left}
  - netns: {name: right}
  - netns: {name: spare}
  - veth: {name: vA, peer: vB, peer_netns: right, mtu: 9000}
    netns: left
  - address: {dev: vA, cidr: "{{a}}/24"}
    netns: left
  - address: {dev: vB, cidr: "{{b}}/24"}
    netns: right
  - link: {dev: vB, up: true, mtu: 4000}
    netns: right
  - sysctl: {key: net.ipv4.conf.eth7.rp_filter, value: 0}
  - sysctl: {key: net.ipv4.conf.all.rp_filter, value: 0}
  - rxe: {name: rxe0, netdev: vA}
    netns: left
  - siw: {name: siw1, netdev: vB}
    netns: right
  - name: no-roce
    block: {proto: udp, port: 4791, hook: input, dev: vB}
    netns: right
  - name: no-icmp
    block: {proto: icmp}
    netns: left
  - name: lossy
    netem: {dev: vA, loss: 5, delay: 10ms, jitter: 2ms}
    netns: left
  - name: wire
    capture: {dev: vB}
    netns: right
  - route: {dst: 10.10.0.2/32, dev: vA, table: 100}
    netns: left
  - name: lift
    revert: lossy
  - ping: {to: "{{b}}", count: 1}
    netns: left
)";

}  // namespace

TEST_CASE("graph: the picture has every namespace, interface, address, wire, device and fault") {
  const LabPicture p = picture(kLab);
  CHECK(p.title == "two-sides");

  REQUIRE(p.namespaces.size() == 4);
  CHECK(p.namespaces[0].place == kHost);  // rxerun's own, first
  CHECK(p.namespaces[1].place == netns("left"));
  CHECK(p.namespaces[1].step == "netns-1");
  CHECK(p.namespaces[3].place == netns("spare"));

  const PictureInterface* va = p.find_interface(netns("left"), "vA");
  const PictureInterface* vb = p.find_interface(netns("right"), "vB");
  REQUIRE(va);
  REQUIRE(vb);
  CHECK(va->kind == "veth");
  CHECK(va->addresses == std::vector<std::string>{"10.10.0.1/24"});  // {{a}} expanded
  CHECK(va->mtu == "9000");
  CHECK(va->routes == std::vector<std::string>{"route 10.10.0.2/32 table 100"});
  CHECK(vb->addresses == std::vector<std::string>{"10.10.0.2/24"});
  CHECK(vb->mtu == "4000");  // the link step's, after the veth's
  CHECK_FALSE(p.find_interface(kHost, "vB"));

  // An interface the scenario names but does not make; no `all`.
  const PictureInterface* eth7 = p.find_interface(kHost, "eth7");
  REQUIRE(eth7);
  CHECK(eth7->kind.empty());
  CHECK_FALSE(p.find_interface(kHost, "all"));
  CHECK(p.interfaces.size() == 3);

  REQUIRE(p.links.size() == 1);
  CHECK(picture_id(p.links[0]) == "veth/netns/left/vA--netns/right/vB");

  REQUIRE(p.devices.size() == 2);
  CHECK(p.devices[0].type == "rxe");
  CHECK(picture_id(p.devices[0]) == "rdma/rxe0");
  CHECK(p.devices[0].place == netns("left"));
  CHECK(p.devices[0].netdev == "vA");
  CHECK(p.devices[1].type == "siw");
  CHECK(p.devices[1].netdev == "vB");

  REQUIRE(p.faults.size() == 4);
  CHECK(picture_id(p.faults[0]) == "block/no-roce");
  CHECK(p.faults[0].dev == "vB");
  CHECK(p.faults[0].details == std::vector<std::string>{"udp dport 4791", "hook input: drop"});
  CHECK(p.faults[0].lifted_by.empty());
  CHECK(p.faults[1].dev.empty());  // the whole namespace
  CHECK(p.faults[1].details == std::vector<std::string>{"icmp", "hook input: drop"});
  CHECK(picture_id(p.faults[2]) == "netem/lossy");
  CHECK(p.faults[2].details == std::vector<std::string>{"loss 5%", "delay 10ms jitter 2ms", "egress"});
  CHECK(p.faults[2].lifted_by == "lift");
  CHECK(picture_id(p.faults[3]) == "capture/wire");
  CHECK(p.faults[3].details == std::vector<std::string>{"udp port 4791"});
}

TEST_CASE("graph: ids are made of names") {
  CHECK(picture_id(kHost) == "host");
  CHECK(picture_id(netns("host")) == "netns/host");  // a namespace called host is not rxerun's own
  CHECK(interface_id(netns("lab"), "vA") == "netns/lab/vA");
  CHECK(interface_id(PicturePlace{"a", ""}, "eth1") == "node/a/host/eth1");
}

TEST_CASE("graph: a fact of an earlier step is shown as written") {
  const LabPicture p = picture(
      "name: facts\nsteps:\n  - name: v\n    veth: {name: vA, peer: vB}\n"
      "  - address: {dev: vA, cidr: \"{{steps.v.mtu}}\"}\n");
  const PictureInterface* va = p.find_interface(kHost, "vA");
  REQUIRE(va);
  CHECK(va->addresses == std::vector<std::string>{"{{steps.v.mtu}}"});
}

TEST_CASE("graph: a kind without a picture adds nothing") {
  const LabPicture p = picture("name: idle\nsteps:\n  - sleep: {duration: 1s}\n");
  CHECK(p.namespaces.size() == 1);
  CHECK(p.interfaces.empty());
  CHECK(p.links.empty());
  CHECK(p.devices.empty());
  CHECK(p.faults.empty());
}

namespace {

// The SVG with the character references Graphviz writes for '-' resolved.
std::string svg_of(const LabPicture& p) {
  auto svg = render_svg(p);
  REQUIRE(svg);
  std::string s = *svg;
  for (std::size_t at; (at = s.find("&#45;")) != std::string::npos;) s.replace(at, 5, "-");
  return s;
}

}  // namespace

TEST_CASE("graph: the SVG names every element by its id") {
  const std::string s = svg_of(picture(kLab));
  CHECK(s.find("<svg") != std::string::npos);
  for (const char* id :
       {"id=\"host\"", "id=\"netns/left\"", "id=\"netns/right\"", "id=\"netns/spare\"", "id=\"netns/spare/empty\"",
        "id=\"netns/left/vA\"", "id=\"netns/right/vB\"", "id=\"host/eth7\"",
        "id=\"veth/netns/left/vA--netns/right/vB\"", "id=\"rdma/rxe0\"", "id=\"rdma/siw1\"",
        "id=\"rdma/rxe0--netns/left/vA\"", "id=\"block/no-roce\"", "id=\"block/no-icmp\"", "id=\"netem/lossy\"",
        "id=\"capture/wire\"", "id=\"block/no-roce--netns/right/vB\""})
    CHECK_MESSAGE(s.find(id) != std::string::npos, id);
  for (const char* text : {"10.10.0.1/24", "10.10.0.2/24", "mtu 9000", "udp dport 4791", "loss 5%", "until step lift"})
    CHECK_MESSAGE(s.find(text) != std::string::npos, text);
}

TEST_CASE("graph: rxerun's own namespace is left out when empty and not alone") {
  const std::string s = svg_of(picture("name: ns\nsteps:\n  - netns: {name: a}\n"));
  CHECK(s.find("id=\"netns/a\"") != std::string::npos);
  CHECK(s.find("id=\"host\"") == std::string::npos);

  const std::string alone = svg_of(picture("name: idle\nsteps:\n  - sleep: {duration: 1s}\n"));
  CHECK(alone.find("id=\"host\"") != std::string::npos);
}

TEST_CASE("graph: names are escaped as XML") {
  auto svg = render_svg(picture("name: esc\nsteps:\n  - veth: {name: \"v<1&\", peer: v2}\n"));
  REQUIRE(svg);
  CHECK(svg->find("v&lt;1&amp;") != std::string::npos);
  CHECK(svg->find("v<1&") == std::string::npos);
}

TEST_CASE("graph: a node's namespaces are drawn inside the node's cluster") {
  LabPicture p;
  p.title = "two-nodes";
  const PicturePlace a{"a", ""}, b{"b", ""};
  p.nodes = {{"a", "6.1"}, {"b", ""}};
  p.add_interface(a, "eth1").addresses.push_back("10.70.0.1/24");
  p.add_interface(b, "eth1").addresses.push_back("10.70.0.2/24");
  p.links.push_back({.kind = "wire", .a_place = a, .a = "eth1", .b_place = b, .b = "eth1"});
  const std::string s = svg_of(p);
  CHECK(s.find("id=\"node/a\"") != std::string::npos);
  CHECK(s.find("id=\"node/a/host\"") != std::string::npos);
  CHECK(s.find("id=\"node/a/host/eth1\"") != std::string::npos);
  CHECK(s.find("id=\"node/b/host/eth1\"") != std::string::npos);
  CHECK(s.find("id=\"wire/a/eth1--b/eth1\"") != std::string::npos);
  CHECK(s.find("kernel 6.1") != std::string::npos);
  CHECK(s.find("the newest kernel") != std::string::npos);  // b names none, nor does vm.kernel
  // The node's cluster opens before its namespace's.
  CHECK(s.find("id=\"node/a\"") < s.find("id=\"node/a/host\""));
}

// Two nodes, a wire with one MAC given, steps on each node and a pair step
// across them.
const std::string kTwoNodeLab = R"(name: interop
vm: {kernel: "7.3"}
nodes:
  a: {kernel: "6.1"}
  b: {}
  c: {}
wires:
  - {a: eth1, b: {nic: eth1, mac: "02:00:00:00:00:0b"}}
steps:
  - address: {dev: eth1, cidr: 10.70.0.1/24}
    node: a
  - netns: {name: lab}
    node: b
  - veth: {name: vA, peer: vB, peer_netns: lab}
    node: b
  - rxe: {name: rxe0, netdev: eth1}
    node: b
  - name: nap
    sleep: {duration: 1s}
  - rping: {server: 10.70.0.1, server_node: a, client_node: b}
)";

TEST_CASE("graph: a scenario with nodes draws each node, its namespaces and the wires between them") {
  const LabPicture p = picture(kTwoNodeLab);
  REQUIRE(p.nodes.size() == 3);
  CHECK(p.nodes[0].name == "a");
  CHECK(p.nodes[0].kernel == "6.1");
  CHECK(p.nodes[1].kernel == "7.3");  // vm.kernel's
  CHECK(picture_id(p.nodes[2]) == "node/c");
  // No namespace outside the nodes; each node's own namespace first.
  CHECK_FALSE(p.find_namespace(kHost));
  REQUIRE(p.namespaces.size() == 4);
  CHECK(picture_id(p.namespaces[0].place) == "node/a/host");
  CHECK(picture_id(p.namespaces[1].place) == "node/b/host");
  CHECK(picture_id(p.namespaces[2].place) == "node/c/host");
  CHECK(picture_id(p.namespaces[3].place) == "node/b/netns/lab");
  CHECK(p.namespaces[3].step == "netns-2");
  const PictureInterface* a_eth1 = p.find_interface({"a", ""}, "eth1");
  REQUIRE(a_eth1);
  CHECK(a_eth1->kind == "wire");
  CHECK(a_eth1->addresses == std::vector<std::string>{"10.70.0.1/24"});
  CHECK(p.find_interface({"b", ""}, "vA"));
  CHECK(p.find_interface({"b", "lab"}, "vB"));
  REQUIRE(p.devices.size() == 1);
  CHECK(picture_id(p.devices[0]) == "node/b/rdma/rxe0");
  REQUIRE(p.links.size() == 2);
  CHECK(picture_id(p.links[0]) == "wire/a/eth1--b/eth1");
  CHECK(p.links[0].details == std::vector<std::string>{"52:54:00:0a:01:01", "02:00:00:00:00:0b"});
  CHECK(picture_id(p.links[1]) == "veth/node/b/host/vA--node/b/netns/lab/vB");

  const std::string s = svg_of(p);
  for (const char* id : {"node/a", "node/b", "node/c", "node/a/host/eth1", "node/b/host/eth1", "node/b/netns/lab/vB",
                         "wire/a/eth1--b/eth1", "node/b/rdma/rxe0", "node/c/host/empty"})
    CHECK_MESSAGE(s.find(fmt::format("id=\"{}\"", id)) != std::string::npos, std::string(id));
  CHECK(s.find("52:54:00:0a:01:01") != std::string::npos);
  CHECK(s.find("02:00:00:00:00:0b") != std::string::npos);
  CHECK(s.find("id=\"host\"") == std::string::npos);
  CHECK(s.find("id=\"node/b\"") < s.find("id=\"node/b/netns/lab\""));
}
