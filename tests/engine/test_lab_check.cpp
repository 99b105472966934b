// The lab checked as a whole (engine/lab_check.h), over the shipped kinds'
// declarations, at a site given outright (the host or the lab VM, its
// kernels), so that no case depends on the machine the tests run on.

#include <doctest/doctest.h>

#include "engine/lab_check.h"
#include "engine/loader.h"
#include "engine/registry.h"
#include "steps/kinds.h"

using namespace rxerun;

namespace {

const Registry& kinds() {
  static const Registry r(steps::all_kinds());
  return r;
}

// The lab check's messages for `text` (which must load), at `site`.
std::vector<std::string> problems(const std::string& text, const LabSite& site) {
  auto r = load_scenario_text(text, "lab.yaml", kinds(), {});
  REQUIRE_MESSAGE(r.scenario, (r.diagnostics.empty() ? "" : r.diagnostics.front().to_string()));
  std::vector<std::string> out;
  for (const auto& d : check_lab(*r.scenario, kinds(), site)) out.push_back(d.to_string());
  return out;
}

const LabSite kHost{};
const LabSite kVm73{.lab_vm = true, .kernels = {"7.3"}};
const LabSite kVm61{.lab_vm = true, .kernels = {"6.1"}};

}  // namespace

TEST_CASE("lab check: a lab that makes what it uses is clean, on the host and in the lab VM") {
  const std::string lab =
      "name: pair\nsteps:\n"
      "  - netns: {name: a}\n"
      "  - veth: {name: vA, peer: vB, peer_netns: a}\n"
      "  - address: {dev: vA, cidr: 10.1.0.1/24}\n"
      "  - {netns: a, address: {dev: vB, cidr: 10.1.0.2/24}}\n"
      "  - {netns: a, link: {dev: lo, up: true}}\n"
      "  - rxe: {name: rxe0, netdev: vA}\n"
      "  - {netns: a, rxe: {name: rxe1, netdev: vB}}\n"
      "  - port: {dev: rxe1}\n"
      "  - name: bw\n"
      "    rping: {server: 10.1.0.2, server_netns: a}\n"
      "    expect: {rxe0.sent_pkts: '> 0', vB.rx_packets: '> 0', iterations: 5}\n";
  CHECK(problems(lab, kHost).empty());
  CHECK(problems(lab, kVm73).empty());
}

TEST_CASE("lab check: what is not made may be the host's, but not in the lab VM or a namespace of the lab's") {
  const std::string host_things =
      "name: h\nsteps:\n"
      "  - link: {dev: eth0, up: true}\n"
      "  - {netns: handmade, address: {dev: vX, cidr: 10.2.0.1/24}}\n"
      "  - rping: {server: 10.2.0.1}\n"
      "    expect: {rxe7.sent_pkts: 0}\n";
  CHECK(problems(host_things, kHost).empty());
  const auto in_vm = problems(host_things, kVm73);
  REQUIRE(in_vm.size() == 3);  // vX is not reported on top of its namespace
  CHECK(in_vm[0] == "lab.yaml:3:17: no interface 'eth0' in rxerun's own namespace: no earlier step makes it");
  CHECK(in_vm[1].find("namespace 'handmade' does not exist") != std::string::npos);
  CHECK(in_vm[2].find("no device 'rxe7' in the lab") != std::string::npos);

  const std::string own_namespace =
      "name: n\nsteps:\n"
      "  - netns: {name: a}\n"
      "  - {netns: a, link: {dev: vX, up: true}}\n";
  const auto p = problems(own_namespace, kHost);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("no interface 'vX' in namespace 'a'") != std::string::npos);
}

TEST_CASE("lab check: a revert removes what the step made, and what went with it") {
  const std::string lab =
      "name: r\nsteps:\n"
      "  - name: ns\n    netns: {name: a}\n"
      "  - veth: {name: vA, peer: vB, peer_netns: a}\n"
      "  - rxe: {name: rxe0, netdev: vA}\n"
      "  - revert: ns\n"  // the namespace goes, vB in it, and its peer vA with the pair
      "  - link: {dev: vA, up: true}\n"
      "  - port: {dev: rxe0}\n"  // rxe0 went with vA
      "  - port: {dev: rxe0, state: ABSENT}\n";
  const auto p = problems(lab, kHost);
  REQUIRE(p.size() == 2);
  CHECK(p[0].find("interface 'vA' is gone: step 'ns' removed it") == std::string::npos);
  CHECK(p[0].find("interface 'vA' is gone: step 'revert-4' removed it before step 'link-5'") != std::string::npos);
  CHECK(p[1].find("RDMA device 'rxe0' is gone") != std::string::npos);
}

TEST_CASE("lab check: the same step written twice is the kind's own idempotence, another one a clash") {
  const std::string again =
      "name: a\nsteps:\n"
      "  - veth: {name: vA, peer: vB}\n"
      "  - rxe: {name: rxe0, netdev: vA}\n"
      "  - rxe: {name: rxe0, netdev: vA}\n"
      "    expect: {changed: false}\n";
  CHECK(problems(again, kVm73).empty());
  const std::string clash =
      "name: c\nsteps:\n"
      "  - netns: {name: a}\n"
      "  - veth: {name: vA, peer: vB, peer_netns: a}\n"
      "  - rxe: {name: rxe0, netdev: vA}\n"
      "  - {netns: a, rxe: {name: rxe0, netdev: vB}}\n";
  const auto p = problems(clash, kVm73);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("RDMA device 'rxe0' is made twice") != std::string::npos);
}

TEST_CASE("lab check: facts by moment: a background start, its wait, a revert") {
  const std::string lab =
      "name: m\nsteps:\n"
      "  - name: srv\n    exec: {argv: [sleep, '9'], background: true}\n    expect: {pid: '> 0'}\n"
      "  - wait: srv\n    expect: {exit: 0}\n"
      "  - name: cap\n    capture: {dev: any}\n    expect: {file: '~ pcap'}\n"
      "  - revert: cap\n    expect: {packets: 0, CNP: 0, file: '~ pcap'}\n"
      "  - name: fault\n    block: {proto: udp, port: 4791}\n"
      "  - revert: fault\n    expect: {packets: 0, handle: 1}\n";
  const auto p = problems(lab, kHost);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("'handle' is reported when it runs, not at its revert") != std::string::npos);
}

TEST_CASE("lab check: exec facts that need a parameter, and extract's names") {
  const std::string lab =
      "name: x\nsteps:\n"
      "  - exec: {argv: [echo, '1 usec'], extract: {usec: '([0-9]+) usec'}, parse: json}\n"
      "    expect: {usec: 1, jobs.0.bw: 1}\n"
      "  - exec: {argv: [echo, '1 usec'], extract: {usec: '([0-9]+) usec'}}\n"
      "    expect: {usecs: 1}\n";
  const auto p = problems(lab, kHost);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("'usecs' is no FACT this step reports (did you mean 'usec'?)") != std::string::npos);
}

TEST_CASE("lab check: one item of a list fact, in an expectation and in a reference") {
  const std::string lab =
      "name: l\nsteps:\n"
      "  - name: server\n    nfsd: {clients: [10.1.0.2]}\n    expect: {clients.0: 10.1.0.2, listeners.1: rdma 20049}\n"
      "  - exec: {argv: [echo, '{{steps.server.clients.0}}']}\n";
  // The loader refuses an index after a fact the kind does not report; the
  // lab check, which also knows the moment and the parameters, takes the rest.
  CHECK(problems(lab, kHost).empty());
  CHECK(problems(lab, kVm73).empty());
}

TEST_CASE("lab check: rxe in a namespace before Linux 7.1, unless the step expects it to fail") {
  const std::string lab =
      "name: k\nsteps:\n"
      "  - netns: {name: a}\n"
      "  - veth: {name: vA, peer: vB, peer_netns: a}\n"
      "  - netns: a\n"
      "    rxe: {name: rxe1, netdev: vB}\n";
  CHECK(problems(lab, kVm73).empty());
  CHECK(problems(lab, kHost).empty());  // the host's kernel is not known here
  REQUIRE(problems(lab, kVm61).size() == 1);
  CHECK(problems(lab + "    expect: fail\n", kVm61).empty());
  CHECK(kernel_has_rxe_netns("7.1") == true);
  CHECK(kernel_has_rxe_netns("6.12.38") == false);
  CHECK(kernel_has_rxe_netns("7.3.4+deb13-amd64") == true);
  CHECK_FALSE(kernel_has_rxe_netns("./linux").has_value());
}

TEST_CASE("lab check: an RDMA device's port counters are its counters, not an interface's") {
  const std::string lab =
      "name: c\nsteps:\n"
      "  - veth: {name: vA, peer: vB}\n"
      "  - rxe: {name: rxe0, netdev: vA}\n"
      "  - counters: {devs: [rxe0, vA]}\n"
      "    expect: {rxe0.port_xmit_data: '>= 0', rxe0.port_rcv_packets: '>= 0', rxe0.sent_pkts: '>= 0'}\n";
  CHECK(problems(lab, kVm73).empty());
  const std::string wrong =
      "name: c\nsteps:\n"
      "  - veth: {name: vA, peer: vB}\n"
      "  - counters: {devs: [vA]}\n"
      "    expect: {vA.port_xmit_data: 0}\n";
  const auto p = problems(wrong, kVm73);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("'vA' is an interface: its counters are rx_packets") != std::string::npos);
}
