// rping against the fake Tools: the two command lines (namespaces, count,
// size, port), the server started before the client and the client started
// again while nobody listens, outcomes (ok, fail with the tool's own lines
// and a likely cause, timeout with both killed, interrupted), that nothing
// is left running on any path, a tool stuck in the kernel reported and let
// go, the counter deltas, the load-time checks and the plan. The real tools
// run in tests/sys/test_tools_real.cpp (fake programs) and the lab VM
// (tests/vm/rping.sh).

#include <doctest/doctest.h>

#include <csignal>

#include "base/strings.h"
#include "fakes/harness.h"

using namespace rxerun;
using fakes::step_named;
using sys::ProgramRun;

namespace {

bool is_server(const sys::ToolSpec& s) {
  return s.argv.size() > 1 && s.argv[1] == "-s";
}

// rping -v's client output for `n` round trips.
std::string ping_lines(int n, const char* prefix = "ping data: ") {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += std::string(prefix) + "rdma-ping-" + std::to_string(i) + ": ABCDEFGHIJKLMNOPQRSTUVWXYZ\n";
  return out;
}

struct RpingHarness : fakes::RxePairHarness {
  RpingHarness() {
    // By default a good pair: the server serves `count` pings and ends, the
    // client does them in 400ms.
    fake.tools.on_start = [this](const sys::ToolSpec& s) {
      if (is_server(s))
        return sys::ProgramRun{
            .out = ping_lines(5, "server ping data: "), .exit = sys::ExitStatus{}, .takes = Duration(500)};
      fake.rdma.device_counters["rxe1"]["sent_pkts"] += 33;
      fake.links.stats["b"]["vB"]["tx_packets"] += 65;
      return sys::ProgramRun{.out = ping_lines(5), .exit = sys::ExitStatus{}, .takes = Duration(400)};
    };
  }
};

const char* kAcross =
    "steps:\n"
    "  - name: r\n"
    "    rping: {server: 10.10.0.1, server_netns: a, client: 10.10.0.2, client_netns: b}\n";

}  // namespace

TEST_CASE("rping: server then client, each in its namespace, with count, size and port, LC_ALL=C") {
  RpingHarness h;
  auto r = h.run(kAcross);
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.tools.started.size() == 2);
  const auto& server = h.fake.tools.started[0];
  const auto& client = h.fake.tools.started[1];
  CHECK(server.argv ==
        std::vector<std::string>{"rping", "-s", "-a", "10.10.0.1", "-p", "7174", "-C", "5", "-S", "64", "-v"});
  CHECK(server.netns == std::optional<std::string>("a"));
  CHECK(client.argv == std::vector<std::string>{"rping", "-c", "-a", "10.10.0.1", "-I", "10.10.0.2", "-p", "7174", "-C",
                                                "5", "-S", "64", "-v"});
  CHECK(client.netns == std::optional<std::string>("b"));
  // Its output is parsed (round trips, refusals, hints): in the C locale.
  CHECK(server.env.at("LC_ALL") == "C");
  CHECK(client.env.at("LC_ALL") == "C");
  const auto& s = step_named(r, "r");
  CHECK(s.outcome == Outcome::Ok);
  CHECK(s.facts.at("iterations") == 5);
  CHECK(s.facts.at("server_iterations") == 5);
  CHECK(s.facts.at("attempts") == 1);
  CHECK(s.facts.at("duration_s") == 0.4);
  CHECK(s.facts.at("client_exit") == "exit 0");
  CHECK(s.facts.at("server_exit") == "exit 0");  // it ended by itself, after its client
  CHECK(s.facts.at("rxe1.sent_pkts") == 33);
  CHECK(s.facts.at("rxe0.sent_pkts") == 0);  // zeros included
  CHECK(s.facts.at("vB.tx_packets") == 65);
  CHECK(h.fake.tools.alive.empty());
  CHECK(r.cleanup.undos.empty());  // changes nothing
  // The step's own timeout: 30s by default, and no fixed sleep anywhere: the
  // client's 0.4 s, waited for in two slices (the server's output is read
  // between them), and the server's end.
  CHECK(h.fake.clock.waits.size() <= 3);
}

TEST_CASE("rping: without namespaces both run in the step's, count, size and port as given") {
  RpingHarness h;
  auto r = h.run("steps:\n  - rping: {server: 10.10.0.1, count: 50, size: 1024, port: 20000}\n    netns: a\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.tools.started.size() == 2);
  CHECK_FALSE(h.fake.tools.started[0].netns);
  CHECK_FALSE(h.fake.tools.started[1].netns);
  CHECK(h.fake.tools.started[1].argv ==
        std::vector<std::string>{"rping", "-c", "-a", "10.10.0.1", "-p", "20000", "-C", "50", "-S", "1024", "-v"});
}

TEST_CASE("rping: a client that finds nobody listening yet is started again, with no fixed sleep before") {
  RpingHarness h;
  int clients = 0;
  h.fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (is_server(s)) return sys::ProgramRun{.exit = sys::ExitStatus{}, .takes = Duration(2000)};
    if (++clients < 3)
      return sys::ProgramRun{
          .err = "cma event RDMA_CM_EVENT_REJECTED, error 8\nwait for CONNECTED state 10\nconnect error -1\n",
          .exit = sys::ExitStatus{.code = 255},
          .takes = Duration(5)};
    return sys::ProgramRun{.out = ping_lines(5), .exit = sys::ExitStatus{}, .takes = Duration(300)};
  };
  auto r = h.run(kAcross);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "r");
  CHECK(s.facts.at("attempts") == 3);
  CHECK(s.facts.at("iterations") == 5);
  REQUIRE(h.fake.tools.started.size() == 6);  // each client against a fresh server (rdma_cm)
  for (std::size_t i = 0; i < 6; ++i) CHECK(is_server(h.fake.tools.started[i]) == (i % 2 == 0));
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("rping: a server that cannot bind its address fails the step with its own words, no retries") {
  RpingHarness h;
  h.fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (is_server(s))
      return sys::ProgramRun{.err = "rdma_bind_addr: Cannot assign requested address\n",
                             .exit = sys::ExitStatus{.code = 255}};
    return sys::ProgramRun{.err = "cma event RDMA_CM_EVENT_REJECTED, error 8\nconnect error -1\n",
                           .exit = sys::ExitStatus{.code = 255},
                           .takes = Duration(5)};
  };
  auto r = h.run(
      "steps:\n  - name: r\n    rping: {server: 10.10.0.9, server_netns: a, client_netns: b}\n    expect: fail\n");
  CHECK(r.exit_code == 0);  // expected
  const auto& s = step_named(r, "r");
  CHECK(s.outcome == Outcome::Fail);
  CHECK(contains(s.message, "the rping server ended with exit 255"));
  CHECK(contains(s.message, "rdma_bind_addr: Cannot assign requested address"));
  CHECK(s.facts.at("attempts") == 1);
  REQUIRE_FALSE(s.hints.empty());
  CHECK(contains(s.hints[0], "cannot bind 10.10.0.9"));
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("rping: an unreachable server fails with the CM event and a likely cause") {
  RpingHarness h;
  h.fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (is_server(s)) return sys::ProgramRun{};  // waits for ever
    return sys::ProgramRun{
        .err = "cma event RDMA_CM_EVENT_UNREACHABLE, error -110\nwait for CONNECTED state 10\nconnect error -1\n",
        .exit = sys::ExitStatus{.code = 255},
        .takes = Duration(20'000)};
  };
  auto r = h.run(kAcross);
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "r");
  CHECK(s.outcome == Outcome::Fail);
  CHECK(
      s.message ==
      "the rping client ended with exit 255 after 0 of 5 round trips: cma event RDMA_CM_EVENT_UNREACHABLE, error -110 "
      "/ wait for CONNECTED state 10 / connect error -1");
  REQUIRE_FALSE(s.hints.empty());
  CHECK(s.hints[0] ==
        "the connection request got no answer: UDP 4791 dropped on the way (a `block` on the input hook?), or no rxe "
        "device over the netdev that holds 10.10.0.1");
  CHECK(s.facts.at("server_exit") == "killed by SIGTERM");  // it was still waiting: stopped
  CHECK(s.facts.at("attempts") == 1);                       // not a refusal: no retry
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("rping: a client still running at the step's timeout is a timeout, both are stopped") {
  RpingHarness h;
  h.fake.tools.on_start = [&](const sys::ToolSpec&) { return sys::ProgramRun{}; };  // nothing ever ends
  auto r = h.run(std::string(kAcross) + "    timeout: 12s\n    expect: timeout\n");
  CHECK(r.exit_code == 0);
  const auto& s = step_named(r, "r");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(contains(s.message, "still running at the step's timeout after 0 of 5 round trips"));
  REQUIRE_FALSE(s.hints.empty());
  CHECK(contains(s.hints[0], "78 s"));
  CHECK(s.facts.at("client_exit") == "killed by SIGTERM");
  CHECK(s.facts.at("server_exit") == "killed by SIGTERM");
  CHECK(h.fake.tools.alive.empty());
  CHECK(h.fake.clock.now() - h.fake.clock.start() == std::chrono::seconds(12));
  // Stopped explicitly (SIGTERM), the client first; none dropped by a destructor.
  std::vector<std::string> stops;
  for (const auto& l : h.fake.tools.log)
    if (!contains(l, "start")) stops.push_back(l);
  CHECK(stops == std::vector<std::string>{"stop 1002", "stop 1001"});
}

TEST_CASE("rping: Ctrl-C during the client stops both and the step errs as interrupted") {
  RpingHarness h;
  h.fake.tools.on_start = [&](const sys::ToolSpec&) { return sys::ProgramRun{}; };
  h.fake.clock.interrupt_at(h.fake.clock.start() + std::chrono::seconds(3));
  auto r = h.run(kAcross);
  CHECK(r.exit_code == 130);
  CHECK(h.fake.tools.alive.empty());
  CHECK(h.fake.tools.started.size() == 2);
}

TEST_CASE("rping: a tool that survives SIGKILL is reported with its pid and let go") {
  RpingHarness h;
  h.fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (is_server(s)) return sys::ProgramRun{};
    return sys::ProgramRun{.stuck = true};
  };
  auto r = h.run(std::string(kAcross) + "    timeout: 5s\n    expect: timeout\n");
  CHECK(r.exit_code == 0);
  const auto& s = step_named(r, "r");
  CHECK(s.facts.at("stuck") == 1);
  CHECK(s.facts.at("client_exit") == "stuck");
  bool reported = false;
  for (const auto& hint : s.hints)
    reported |= contains(hint, "rping client (pid 1002) did not die after SIGKILL") && contains(hint, "model_wchan");
  CHECK(reported);
  CHECK(h.fake.tools.alive == std::set<pid_t>{1002});  // let go, not waited on
}

TEST_CASE("rping: not installed, or no such namespace, is an error (exit 3)") {
  RpingHarness h;
  h.fake.kernel.fail("tools.start", ENOENT, "", 1, 0, "cannot run rping: not installed (not found in PATH)");
  auto r = h.run(kAcross);
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "r").message, "not installed"));
}

TEST_CASE("rping: parameters are checked at load time") {
  RpingHarness h;
  CHECK(contains(h.diagnostics("steps:\n  - rping: {server: 10.10.0.1, size: 10}\n"), "test.yaml:2:"));
  CHECK(contains(h.diagnostics("steps:\n  - rping: {count: 5}\n"), "missing required parameter 'server'"));
  CHECK(contains(h.diagnostics("steps:\n  - rping: {server: not-an-address}\n"), "test.yaml:2:"));
}

TEST_CASE("rping: the plan shows the two command lines a person would type") {
  RpingHarness h;
  const std::string plan = h.plan(kAcross);
  CHECK(contains(plan, "LC_ALL=C ip netns exec a rping -s -a 10.10.0.1 -p 7174 -C 5 -S 64 -v"));
  CHECK(contains(plan, "LC_ALL=C ip netns exec b rping -c -a 10.10.0.1 -I 10.10.0.2 -p 7174 -C 5 -S 64 -v"));
  // Without namespaces of its own a tool runs in the step's.
  const std::string in_step = h.plan("steps:\n  - rping: {server: 10.10.0.1}\n    netns: a\n");
  CHECK(contains(in_step, "ip netns exec a rping -c -a 10.10.0.1"));
}

TEST_CASE("rping across two nodes: the server on its node, no listener lookup, each node's counters named") {
  RpingHarness h;
  int reads = 0;
  auto pair = h.fake.tools.on_start;
  h.fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (s.argv.at(1) == "__counters") {
      CHECK(s.node == "a");
      CHECK(s.argv == std::vector<std::string>{"/proc/self/exe", "__counters", "--netns", "a"});
      const nlohmann::json c = {{"rxe0.rcvd_pkts", reads++ == 0 ? 5 : 38}};
      return sys::ProgramRun{.out = c.dump(), .exit = sys::ExitStatus{}};
    }
    return pair(s);
  };
  auto r = h.run(
      "nodes: {a: {kernel: \"6.1\"}, b: {kernel: \"7.3\"}}\n"
      "steps:\n"
      "  - name: r\n"
      "    rping: {server: 10.10.0.1, server_netns: a, server_node: a, client: 10.10.0.2, client_netns: b, "
      "client_node: b}\n"
      "    expect: {a.rxe0.rcvd_pkts: 33, b.rxe1.sent_pkts: \"> 0\"}\n");
  REQUIRE(r.exit_code == 0);
  // a's counters, the server (on a), the client (here, on b), a's counters.
  REQUIRE(h.fake.tools.started.size() == 4);
  CHECK(h.fake.tools.started[1].node == "a");
  CHECK(is_server(h.fake.tools.started[1]));
  CHECK(h.fake.tools.started[2].node.empty());
  CHECK(h.fake.tools.probes == 0);  // a listener on another kernel is not looked up
  const auto& s = step_named(r, "r");
  CHECK(s.facts.at("a.rxe0.rcvd_pkts") == 33);
  CHECK(s.facts.at("b.rxe1.sent_pkts") == 33);
  CHECK(s.facts.at("b.vB.tx_packets") == 65);
  CHECK(h.fake.tools.alive.empty());
}
