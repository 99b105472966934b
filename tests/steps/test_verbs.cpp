// verbs: the mapping from parameters to a sys::VerbsRequest and from the
// VerbsResult to outcome, message, hints and facts, against the fake Verbs;
// the counter deltas every traffic step reports; the load-time checks; and
// what `plan` shows. The real check runs in the lab VM (tests/vm/verbs.sh).

#include <doctest/doctest.h>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"
#include "sys/model/traffic.h"

using namespace rxerun;
using fakes::step_named;

namespace {

struct VerbsHarness : fakes::RxePairHarness {
  VerbsHarness() {
    for (const auto& [name, deps] : fake.modules.known) fake.modules.live.insert(name);
  }
};

const char* kAcross =
    "steps:\n"
    "  - name: v\n"
    "    verbs:\n"
    "      server: {addr: 10.10.0.1, netns: a}\n"
    "      client: {addr: 10.10.0.2, netns: b}\n"
    "      sizes: [64, 4096]\n";

sys::VerbsResult failed(std::string stage, std::string message, std::string cause) {
  sys::VerbsResult r;
  r.status = sys::VerbsStatus::Failed;
  r.stage = std::move(stage);
  r.message = std::move(message);
  r.cause = std::move(cause);
  r.client_device = "rxe1";
  return r;
}

}  // namespace

TEST_CASE("verbs: a cm check becomes a request with both ends, every op, the sizes and the defaults") {
  VerbsHarness h;
  auto r = h.run(kAcross);
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.verbs.requests.size() == 1);
  const auto& q = h.fake.verbs.requests[0];
  CHECK(q.mode == sys::VerbsMode::Cm);
  CHECK(q.server.addr == "10.10.0.1");
  CHECK(q.server.netns == std::optional<std::string>("a"));
  CHECK(q.client.addr == "10.10.0.2");
  CHECK(q.client.netns == std::optional<std::string>("b"));
  CHECK(q.client.to.empty());
  CHECK(q.port == 18515);
  CHECK(q.ops == std::vector<sys::VerbsOp>{sys::VerbsOp::Send, sys::VerbsOp::Write, sys::VerbsOp::Read});
  CHECK(q.sizes == std::vector<unsigned>{64, 4096});
  CHECK(q.iterations == 100);
  // The step's deadline: its default timeout of 60s.
  CHECK(h.fake.verbs.deadlines[0] - h.fake.clock.start() == std::chrono::seconds(60));
  const auto& s = step_named(r, "v");
  CHECK(s.facts.at("ops_done") == "send,write,read");
  CHECK(s.facts.at("bytes_verified") == 3 * (64 + 4096));
  CHECK(s.facts.at("mode") == "cm");
  CHECK(r.cleanup.undos.empty());  // changes nothing
}

TEST_CASE("verbs: ops run in a fixed order, duplicates once, iterations 0 verifies only") {
  VerbsHarness h;
  auto r = h.run(
      "steps:\n  - verbs: {server: {addr: 10.10.0.1}, ops: [read, write, read], sizes: [8, 8, 16], iterations: 0, "
      "port: 20000}\n");
  REQUIRE(r.exit_code == 0);
  const auto& q = h.fake.verbs.requests.at(0);
  CHECK(q.ops == std::vector<sys::VerbsOp>{sys::VerbsOp::Read, sys::VerbsOp::Write});
  CHECK(q.sizes == std::vector<unsigned>{8, 16});
  CHECK(q.iterations == 0);
  CHECK(q.port == 20000);
  CHECK_FALSE(q.client.netns);
}

TEST_CASE("verbs: facts name the devices, GIDs, MTU and each size's latency and bandwidth, rounded") {
  VerbsHarness h;
  sys::VerbsResult res;
  res.ops_done = {sys::VerbsOp::Send, sys::VerbsOp::Write};
  res.bytes_verified = 8320;
  res.server_device = "rxe0";
  res.client_device = "rxe1";
  res.local_gid = "::ffff:10.10.0.2";
  res.remote_gid = "::ffff:10.10.0.1";
  res.active_mtu = 1024;
  res.sizes = {{.size = 64,
                .lat_iterations = 100,
                .lat_min_us = 20.123,
                .lat_avg_us = 25.5,
                .lat_p99_us = 40.0,
                .bw_iterations = 100,
                .bw_mib = 3.14159},
               {.size = 4096, .lat_iterations = 0, .bw_iterations = 100, .bw_mib = 30}};
  h.fake.verbs.result = res;
  auto r = h.run(kAcross);
  REQUIRE(r.exit_code == 0);
  const auto& f = step_named(r, "v").facts;
  CHECK(f.at("ops_done") == "send,write");
  CHECK(f.at("bytes_verified") == 8320);
  CHECK(f.at("server_device") == "rxe0");
  CHECK(f.at("client_device") == "rxe1");
  CHECK(f.at("local_gid") == "::ffff:10.10.0.2");
  CHECK(f.at("remote_gid") == "::ffff:10.10.0.1");
  CHECK(f.at("active_mtu") == 1024);
  CHECK(f.at("lat_min_us_64") == 20.12);
  CHECK(f.at("lat_avg_us_64") == 25.5);
  CHECK(f.at("lat_p99_us_64") == 40);
  CHECK(f.at("bw_mib_64") == 3.14);
  CHECK(f.at("bw_mib_4096") == 30);
  CHECK_FALSE(f.contains("lat_avg_us_4096"));  // not measured
  CHECK_FALSE(f.contains("cause"));
  CHECK(step_named(r, "v").hints.empty());  // two devices: no loopback warning
}

TEST_CASE("verbs: the counter deltas of both rxe devices and both namespaces' netdevs are facts") {
  VerbsHarness h;
  // Traffic moves the counters while the check runs.
  h.fake.verbs.on_run = [&] {
    h.fake.rdma.device_counters["rxe0"]["sent_pkts"] += 7;
    h.fake.rdma.device_counters["rxe1"]["rcvd_pkts"] += 7;
    h.fake.links.stats["b"]["vB"]["tx_packets"] += 9;
  };
  auto r = h.run(kAcross);
  REQUIRE(r.exit_code == 0);
  const auto& f = step_named(r, "v").facts;
  CHECK(f.at("rxe0.sent_pkts") == 7);
  CHECK(f.at("rxe0.rcvd_pkts") == 0);  // zeros included
  CHECK(f.at("rxe1.rcvd_pkts") == 7);
  CHECK(f.at("vB.tx_packets") == 9);
  CHECK(f.contains("vA.tx_packets"));
}

TEST_CASE("verbs: expectations on counters and facts hold or fail the step") {
  VerbsHarness h;
  auto ok = h.run(std::string(kAcross) + "    expect: {ops_done: \"send,write,read\", rxe1.sent_pkts: 0}\n");
  CHECK(ok.exit_code == 0);
  auto bad = h.run(std::string(kAcross) + "    expect: {rxe1.sent_pkts: \"> 0\"}\n");
  CHECK(bad.exit_code == 1);  // nothing moved in the fake
}

TEST_CASE("verbs: both ends on one device pass with a warning that nothing crossed the wire") {
  VerbsHarness h;
  sys::VerbsResult looped;
  looped.ops_done = {sys::VerbsOp::Send, sys::VerbsOp::Write, sys::VerbsOp::Read};
  looped.bytes_verified = 3 * 4096;
  looped.server_device = looped.client_device = "rxe0";
  h.fake.verbs.result = looped;
  auto r = h.run("steps:\n  - name: v\n    verbs: {server: {addr: 10.10.0.1}, client: {addr: 10.10.0.2}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "v");
  CHECK(s.facts.at("server_device") == "rxe0");
  CHECK(s.facts.at("client_device") == "rxe0");
  REQUIRE(s.hints.size() == 1);
  CHECK(contains(s.hints[0], "both ends ran on rxe0"));
  CHECK(contains(s.hints[0], "nothing crossed the wire"));
}

TEST_CASE("verbs: a refused connect fails with the CM event and a likely cause, expect: fail passes") {
  VerbsHarness h;
  h.fake.verbs.result = failed("connect",
                               "connect to 10.10.0.1:18515: RDMA_CM_EVENT_REJECTED (status 8: invalid service ID: "
                               "nothing listens on that address and port)",
                               "RDMA_CM_EVENT_REJECTED");
  const std::string yaml = "steps:\n  - name: v\n    verbs: {client: {to: 10.10.0.1, netns: b}}\n";
  auto r = h.run(yaml);
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "v");
  CHECK(s.outcome == Outcome::Fail);
  CHECK(contains(s.message, "RDMA_CM_EVENT_REJECTED"));
  CHECK(s.facts.at("cause") == "RDMA_CM_EVENT_REJECTED");
  CHECK(s.facts.at("stage") == "connect");
  REQUIRE_FALSE(s.hints.empty());
  CHECK(contains(s.hints[0], "nothing listens on 10.10.0.1 port 18515"));
  const auto& q = h.fake.verbs.requests.at(0);
  CHECK(q.server.addr.empty());  // nothing of rxerun's listens
  CHECK(q.client.to == "10.10.0.1");

  VerbsHarness e;
  e.fake.verbs.result = h.fake.verbs.result;
  auto expected = e.run("steps:\n  - name: v\n    verbs: {client: {to: 10.10.0.1, netns: b}}\n    expect: fail\n");
  CHECK(expected.exit_code == 0);
}

TEST_CASE("verbs: unreachable, address and route errors and completion errors each name their likely cause") {
  struct Case {
    const char* cause;
    const char* hint;
  };
  for (const Case& c :
       {Case{"RDMA_CM_EVENT_UNREACHABLE", "UDP 4791 dropped"}, Case{"RDMA_CM_EVENT_ADDR_ERROR", "did not resolve"},
        Case{"rdma_resolve_addr", "no route to 10.10.0.1"}, Case{"RDMA_CM_EVENT_ROUTE_ERROR", "routes and rules"},
        Case{"IBV_WC retry counter exceeded", "stopped answering"}, Case{"mismatch", "the data changed"}}) {
    CAPTURE(c.cause);
    VerbsHarness h;
    h.fake.verbs.result = failed("connect", "it failed", c.cause);
    auto r = h.run(kAcross);
    CHECK(r.exit_code == 1);
    const auto& s = step_named(r, "v");
    CHECK(s.outcome == Outcome::Fail);
    REQUIRE_FALSE(s.hints.empty());
    CHECK(contains(s.hints[0], c.hint));
  }
}

TEST_CASE("verbs: no progress before the deadline is a timeout that says where it stood") {
  VerbsHarness h;
  sys::VerbsResult res;
  res.status = sys::VerbsStatus::TimedOut;
  res.stage = "connect";
  res.message = "no progress before the step's deadline";
  res.cause = "deadline";
  h.fake.verbs.result = res;
  auto r = h.run(std::string(kAcross) + "    timeout: 5s\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "v");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(s.message == "the step's timeout ran out during connect: no progress before the step's deadline");
  REQUIRE_FALSE(s.hints.empty());
  CHECK(contains(s.hints[0], "retried by the kernel"));
  CHECK(h.fake.verbs.deadlines[0] - h.fake.clock.start() == std::chrono::seconds(5));

  VerbsHarness e;
  e.fake.verbs.result = res;
  CHECK(e.run(std::string(kAcross) + "    expect: timeout\n").exit_code == 0);
}

TEST_CASE("verbs: a check that cannot run at all is an error (exit 3) with the reason") {
  VerbsHarness h;
  h.fake.kernel.fail("verbs.run", ENXIO, "", 1, 0,
                     "libibverbs lists no RDMA device although the kernel has rxe0: /etc/libibverbs.d/rxe.driver is "
                     "missing (install ibverbs-providers)");
  auto r = h.run(kAcross);
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "v").message, "rxe.driver is missing"));
}

TEST_CASE("verbs: mode self takes the device, the address and the ops, its facts show the GID index") {
  VerbsHarness h;
  sys::VerbsResult res;
  res.ops_done = {sys::VerbsOp::Write};
  res.bytes_verified = 4096;
  res.server_device = res.client_device = "rxe0";
  res.local_gid = res.remote_gid = "::ffff:10.10.0.1";
  res.gid_index = 1;
  res.active_mtu = 1024;
  h.fake.verbs.result = res;
  auto r = h.run(
      "steps:\n  - name: w\n    verbs: {mode: self, dev: rxe0, addr: 10.10.0.1, ops: [write], iterations: 0}\n"
      "    expect: {ops_done: write, gid_index: 1, bytes_verified: 4096}\n");
  REQUIRE(r.exit_code == 0);
  const auto& q = h.fake.verbs.requests.at(0);
  CHECK(q.mode == sys::VerbsMode::Self);
  CHECK(q.dev == "rxe0");
  CHECK(q.addr == "10.10.0.1");
  CHECK(q.ops == std::vector<sys::VerbsOp>{sys::VerbsOp::Write});
  CHECK(q.sizes == std::vector<unsigned>{4096});
  const auto& s = step_named(r, "w");
  CHECK(s.facts.at("mode") == "self");
  CHECK(s.hints.empty());  // one device is the point of self mode: no warning
}

TEST_CASE("verbs: self mode's failure to reach RTR names the usual suspects") {
  VerbsHarness h;
  h.fake.verbs.result =
      failed("modify QP to RTR", "ibv_modify_qp to RTR (QP 17): Invalid argument", "modify QP to RTR");
  auto r = h.run("steps:\n  - name: w\n    verbs: {mode: self, dev: rxe0}\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "w");
  CHECK(s.message == "ibv_modify_qp to RTR (QP 17): Invalid argument");
  REQUIRE_FALSE(s.hints.empty());
  CHECK(contains(s.hints[0], "GID index"));
}

TEST_CASE("verbs: parameters that do not fit the mode are load errors with their place") {
  VerbsHarness h;
  auto d = h.diagnostics("steps:\n  - verbs: {mode: self}\n");
  CHECK(contains(d, "test.yaml:2:"));
  CHECK(contains(d, "mode self needs 'dev'"));
  d = h.diagnostics("steps:\n  - verbs: {mode: self, dev: rxe0, server: {addr: 10.0.0.1}}\n");
  CHECK(contains(d, "'server' is for mode cm"));
  d = h.diagnostics("steps:\n  - verbs: {dev: rxe0, server: {addr: 10.0.0.1}}\n");
  CHECK(contains(d, "'dev' is for mode self"));
  d = h.diagnostics("steps:\n  - verbs: {client: {addr: 10.0.0.2}}\n");
  CHECK(contains(d, "mode cm needs 'server"));
  d = h.diagnostics("steps:\n  - verbs: {server: {addr: 10.0.0.1}, ops: [write, atomic]}\n");
  CHECK(contains(d, "test.yaml:2:"));
  CHECK(contains(d, "atomic"));
  d = h.diagnostics("steps:\n  - verbs: {server: {addr: 10.0.0.1}, sizes: [0]}\n");
  CHECK_FALSE(d.empty());
  d = h.diagnostics("steps:\n  - verbs: {server: {addr: 10.0.0.1}, sizes: [16777216]}\n");
  CHECK_FALSE(d.empty());
  d = h.diagnostics("steps:\n  - verbs: {server: {addr: 10.0.0.1}, sizes: []}\n");
  CHECK(contains(d, "'sizes' is empty"));
  d = h.diagnostics("steps:\n  - verbs: {server: {addr: not-an-address}}\n");
  CHECK_FALSE(d.empty());
  d = h.diagnostics("steps:\n  - verbs: {server: {netns: a}}\n");
  CHECK(contains(d, "addr"));
  CHECK(h.fake.verbs.requests.empty());
}

TEST_CASE("verbs: plan shows the check in words, with no shell equivalent") {
  VerbsHarness h;
  auto planned = h.plan_run(kAcross);
  std::vector<sys::PlannedAction> verbs;
  for (const auto& a : planned.actions)
    if (contains(a.what, "verbs check")) verbs.push_back(a);
  REQUIRE(verbs.size() == 1);
  CHECK(verbs[0].shell.empty());
  CHECK(verbs[0].what ==
        "verbs check 10.10.0.2 in netns b -> 10.10.0.1:18515 in netns a: send, write, read; sizes 64, 4096; 100 "
        "iterations of latency and bandwidth each (librdmacm/libibverbs in rxerun: no shell equivalent)");
  CHECK(h.fake.verbs.requests.empty());  // the plan ran nothing

  sys::VerbsRequest self;
  self.mode = sys::VerbsMode::Self;
  self.dev = "rxe0";
  self.ops = {sys::VerbsOp::Write};
  self.sizes = {4096};
  self.iterations = 0;
  CHECK(sys::ModelVerbs::describe(self) ==
        "verbs check rxe0 -> rxe0 (two queue pairs, GID of its IPv4 address): write; sizes 4096 "
        "(librdmacm/libibverbs in rxerun: no shell equivalent)");
}

// Across two nodes (docs/nodes.md): the server is `rxerun __verbs-server`, a
// tool of its own node; the client runs here once the server says it
// listens; the two results become one.
namespace {

const char* kTwoNodes =
    "nodes: {a: {kernel: \"6.1\"}, b: {kernel: \"7.3\"}}\n"
    "steps:\n"
    "  - name: v\n"
    "    verbs:\n"
    "      server: {addr: 10.70.0.1, node: a}\n"
    "      client: {addr: 10.70.0.2, node: b}\n"
    "      sizes: [64]\n";

bool is_verbs_server(const sys::ToolSpec& s) {
  return s.argv == std::vector<std::string>{"/proc/self/exe", "__verbs-server"};
}

// Node a's counters, as `rxerun __counters` there prints them: its rxe0
// received 65 packets between the first reading and the second.
struct NodeACounters {
  int reads = 0;
  std::optional<sys::ProgramRun> answer(const sys::ToolSpec& s) {
    if (s.argv.size() < 2 || s.argv[1] != "__counters") return std::nullopt;
    CHECK(s.node == "a");
    const nlohmann::json c = {{"rxe0.rcvd_pkts", reads++ == 0 ? 10 : 75}, {"eth1.rx_packets", 100 + 65 * reads}};
    return sys::ProgramRun{.out = c.dump() + "\n", .exit = sys::ExitStatus{}, .takes = Duration(20)};
  }
};

// The tools of node a: its counter reader as NodeACounters, and `server`
// for the verbs server, on the virtual clock.
struct AcrossHarness : VerbsHarness {
  NodeACounters a;
  std::function<sys::ProgramRun(const sys::ToolSpec&)> server;
  AcrossHarness() {
    fake.tools.clock = &fake.clock;
    fake.tools.on_start = [this](const sys::ToolSpec& s) {
      if (auto c = a.answer(s)) return *c;
      return server(s);
    };
  }
};

// What the server writes: the line that says it listens, then its result.
std::string served(const sys::VerbsResult& r, bool listening = true) {
  return (listening ? std::string(sys::kVerbsListening) + "\n" : std::string()) + sys::verbs_result_json(r).dump() +
         "\n";
}

sys::VerbsResult server_side(std::uint64_t bytes) {
  sys::VerbsResult r;
  r.server_device = "rxe0";
  r.bytes_verified = bytes;
  return r;
}

sys::VerbsResult client_side() {
  sys::VerbsResult r;
  r.ops_done = {sys::VerbsOp::Send, sys::VerbsOp::Write, sys::VerbsOp::Read};
  r.client_device = "rxe0";  // its own kernel's rxe0, not the server's
  r.bytes_verified = 64;     // the RDMA READ it verified itself
  r.local_gid = "::ffff:10.70.0.2";
  r.remote_gid = "::ffff:10.70.0.1";
  return r;
}

}  // namespace

TEST_CASE("verbs across two nodes: the server runs on its node, the client here once it listens, one result") {
  AcrossHarness h;
  h.server = [&](const sys::ToolSpec& s) {
    REQUIRE(is_verbs_server(s));
    return sys::ProgramRun{.out = served(server_side(128)), .exit = sys::ExitStatus{}, .takes = Duration(300)};
  };
  h.fake.verbs.result = client_side();
  h.fake.verbs.on_run = [&] { h.fake.rdma.device_counters["rxe1"]["sent_pkts"] += 33; };
  auto r = h.run(kTwoNodes);
  REQUIRE(r.exit_code == 0);
  // a's counters before, the server, a's counters after.
  REQUIRE(h.fake.tools.started.size() == 3);
  CHECK(h.fake.tools.started[0].argv.at(1) == "__counters");
  CHECK(h.fake.tools.started[2].argv.at(1) == "__counters");
  const sys::ToolSpec& server = h.fake.tools.started[1];
  CHECK(server.node == "a");
  CHECK_FALSE(server.netns);  // the server enters its namespace itself, per thread
  REQUIRE(server.input);
  Duration budget{0};
  auto sent = sys::verbs_request_from_json(nlohmann::json::parse(*server.input), &budget);
  REQUIRE(sent);
  CHECK(sent->server.addr == "10.70.0.1");
  CHECK(sent->sizes == std::vector<unsigned>{64});
  // What is left of the step's 60s after a's counters were read (20ms),
  // and a grace so that a client out of time is the one that says so.
  CHECK(budget == std::chrono::seconds(65) - Duration(20));
  // The client alone, to the server's address.
  REQUIRE(h.fake.verbs.requests.size() == 1);
  const auto& q = h.fake.verbs.requests[0];
  CHECK(q.server.addr.empty());
  CHECK(q.client.to == "10.70.0.1");
  CHECK(q.client.addr == "10.70.0.2");
  const auto& s = step_named(r, "v");
  CHECK(s.facts.at("ops_done") == "send,write,read");
  CHECK(s.facts.at("bytes_verified") == 64 + 128);  // both ends' verified bytes
  CHECK(s.facts.at("server_device") == "rxe0");
  CHECK(s.facts.at("client_device") == "rxe0");
  CHECK(s.hints.empty());  // one name on two kernels is two devices: no loopback warning
  // Each node's counter deltas, named with the node: a's read there, b's here.
  CHECK(s.facts.at("a.rxe0.rcvd_pkts") == 65);
  CHECK(s.facts.at("a.eth1.rx_packets") == 65);
  CHECK(s.facts.at("b.rxe1.sent_pkts") == 33);
  CHECK_FALSE(s.facts.contains("rxe1.sent_pkts"));
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("verbs across two nodes: the other node's counters that cannot be read are the step's error") {
  VerbsHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec& s) {
    if (s.argv.at(1) == "__counters")
      return sys::ProgramRun{.err = "rxerun: __counters: network namespace 'x' does not exist\n",
                             .exit = sys::ExitStatus{.code = 1}};
    return sys::ProgramRun{.out = served(server_side(0)), .exit = sys::ExitStatus{}};
  };
  auto r = h.run(kTwoNodes);
  const auto& s = step_named(r, "v");
  CHECK(s.outcome == Outcome::Error);
  CHECK(s.message == "node a's counters: rxerun: __counters: network namespace 'x' does not exist");
  CHECK(h.fake.verbs.requests.empty());
}

TEST_CASE("verbs across two nodes: a byte the server finds wrong is the step's failure, not the hang-up after it") {
  AcrossHarness h;
  sys::VerbsResult bad = server_side(0);
  bad.status = sys::VerbsStatus::Failed;
  bad.stage = "write 64";
  bad.message = "write 64: RDMA WRITE left 64 bytes at the server: 3 of 64 bytes differ from the pattern";
  bad.cause = "mismatch";
  h.server = [&](const sys::ToolSpec&) {
    return sys::ProgramRun{.out = served(bad), .exit = sys::ExitStatus{}, .takes = Duration(300)};
  };
  sys::VerbsResult hung_up = client_side();
  hung_up.status = sys::VerbsStatus::Failed;
  hung_up.ops_done = {sys::VerbsOp::Send};
  hung_up.stage = "write 64";
  hung_up.message = "write 64: the connection ended: RDMA_CM_EVENT_DISCONNECTED (status 0)";
  hung_up.cause = "RDMA_CM_EVENT_DISCONNECTED";
  h.fake.verbs.result = hung_up;
  auto r = h.run(kTwoNodes);
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "v");
  CHECK(s.outcome == Outcome::Fail);
  CHECK(s.message == bad.message);
  CHECK(s.facts.at("cause") == "mismatch");
  CHECK(s.facts.at("ops_done") == "send");
  REQUIRE_FALSE(s.hints.empty());
  CHECK(contains(s.hints[0], "the data changed on the way"));
}

TEST_CASE("verbs across two nodes: a server that cannot listen is the step's error, and no client runs") {
  AcrossHarness h;
  h.server = [](const sys::ToolSpec&) {
    const Result<sys::VerbsResult> cannot =
        make_error("the server cannot listen on 10.70.0.1:18515: Cannot assign requested address", EADDRNOTAVAIL);
    return sys::ProgramRun{.out = sys::verbs_result_json(cannot).dump() + "\n", .exit = sys::ExitStatus{}};
  };
  auto r = h.run(kTwoNodes);
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "v");
  CHECK(s.outcome == Outcome::Error);
  CHECK(contains(s.message, "the server cannot listen on 10.70.0.1:18515"));
  CHECK(h.fake.verbs.requests.empty());
}

TEST_CASE("verbs across two nodes: a server that never listens is stopped at the step's timeout") {
  AcrossHarness h;
  h.server = [](const sys::ToolSpec&) {
    return sys::ProgramRun{};  // runs, silent, until stopped
  };
  auto r = h.run(std::string(kTwoNodes) + "    timeout: 2s\n");
  const auto& s = step_named(r, "v");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(contains(s.message, "the server on node a did not listen on 10.70.0.1:18515 in time"));
  CHECK(h.fake.verbs.requests.empty());
  CHECK(h.fake.tools.alive.empty());
  CHECK(contains(join(h.fake.tools.log, "\n"), "stop 1002"));  // the server, after a's first counters
}

TEST_CASE("verbs across two nodes: a server that left no result, after a client that passed, is an error") {
  AcrossHarness h;
  h.server = [](const sys::ToolSpec&) {
    return sys::ProgramRun{.out = std::string(sys::kVerbsListening) + "\n",
                           .err = "Segmentation fault\n",
                           .exit = sys::ExitStatus{.code = 0, .signal = 11},
                           .takes = Duration(100)};
  };
  h.fake.verbs.result = client_side();
  auto r = h.run(kTwoNodes);
  const auto& s = step_named(r, "v");
  CHECK(s.outcome == Outcome::Error);
  CHECK(contains(s.message, "the verbs server on node a ended without a result"));
  CHECK(contains(s.message, "Segmentation fault"));
}
