// perftest against the fake Tools: the command lines (program, devices, GID
// index found per side or given, rdma_cm, size, iterations or duration,
// MTU, port, -F, LC_ALL=C), the parsed result as facts, failures quoting
// perftest's own lines with a likely cause, the loopback warning, nothing
// left running, the load-time checks and the plan. The parser itself:
// test_perftest_output.cpp; the real tools: tests/vm/perftest.sh.

#include <algorithm>

#include <doctest/doctest.h>

#include "base/strings.h"
#include "fakes/harness.h"

using namespace rxerun;
using fakes::step_named;
using sys::ProgramRun;

namespace {

bool is_client(const sys::ToolSpec& s) {
  return !s.argv.empty() && s.argv.back().find('.') != std::string::npos;  // ends with the server's address
}

const char* kBwOut =
    "---------------------------------------------------------------------------------------\n"
    " local address: LID 0000 QPN 0x0011 PSN 0x6c1f0b RKey 0x000209 VAddr 0x007f2a1c5ff000\n"
    " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:10:00:02\n"
    " remote address: LID 0000 QPN 0x0011 PSN 0x8d3a2f RKey 0x000209 VAddr 0x007f61a5ad5000\n"
    " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:10:00:01\n"
    "---------------------------------------------------------------------------------------\n"
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
    " 4096       2000             25.10              15.06  \t\t   0.003855\n"
    "---------------------------------------------------------------------------------------\n";

struct PerftestHarness : fakes::RxePairHarness {
  PerftestHarness() {
    fake.links.addrs["a"]["vA"] = {"10.10.0.1/24"};
    fake.links.addrs["b"]["vB"] = {"10.10.0.9/24", "10.10.0.2/24"};
    fake.tools.on_start = [](const sys::ToolSpec& s) {
      if (!is_client(s)) return sys::ProgramRun{.exit = sys::ExitStatus{}, .takes = Duration(2100)};
      return sys::ProgramRun{.out = kBwOut, .exit = sys::ExitStatus{}, .takes = Duration(2000)};
    };
  }
};

const char* kBw =
    "steps:\n"
    "  - name: p\n"
    "    perftest:\n"
    "      test: write_bw\n"
    "      server: {dev: rxe0, netns: a}\n"
    "      client: {dev: rxe1, to: 10.10.0.1, netns: b}\n"
    "      rdma_cm: true\n"
    "      size: 4096\n"
    "      iterations: 2000\n";

}  // namespace

TEST_CASE("perftest: the two command lines, with the GID index found per device, LC_ALL=C and -F") {
  PerftestHarness h;
  // rxe0: fe80::1, then 10.10.0.1 at 1. rxe1: fe80::1, 10.10.0.9 at 1, 10.10.0.2 at 2.
  auto r = h.run(kBw);
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.tools.started.size() == 2);
  const auto& server = h.fake.tools.started[0];
  const auto& client = h.fake.tools.started[1];
  CHECK(server.argv == std::vector<std::string>{"ib_write_bw", "-d", "rxe0", "-x", "1", "-F", "-R", "-p", "18515", "-s",
                                                "4096", "-n", "2000"});
  CHECK(server.netns == std::optional<std::string>("a"));
  CHECK(server.env.at("LC_ALL") == "C");
  CHECK(client.argv == std::vector<std::string>{"ib_write_bw", "-d", "rxe1", "-x", "1", "-F", "-R", "-p", "18515", "-s",
                                                "4096", "-n", "2000", "10.10.0.1"});
  CHECK(client.netns == std::optional<std::string>("b"));
  CHECK(client.env.at("LC_ALL") == "C");
  const auto& f = step_named(r, "p").facts;
  CHECK(f.at("server_gid_index") == 1);
  CHECK(f.at("client_gid_index") == 1);
  CHECK(f.at("bytes") == 4096);
  CHECK(f.at("iterations") == 2000);
  CHECK(f.at("bw_peak_mib_s") == 25.1);
  CHECK(f.at("bw_avg_mib_s") == 15.06);
  CHECK(f.at("msg_rate_mpps") == 0.003855);
  CHECK(f.at("local_gid") == "::ffff:10.10.0.2");
  CHECK(f.at("remote_gid") == "::ffff:10.10.0.1");
  CHECK(f.at("client_exit") == "exit 0");
  CHECK(f.at("server_exit") == "exit 0");
  CHECK(f.contains("rxe0.sent_pkts"));
  CHECK(step_named(r, "p").hints.empty());
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("perftest: the server's GID is the one of the address the client connects to") {
  PerftestHarness h;
  auto r = h.run(
      "steps:\n  - name: p\n    perftest: {test: write_bw, server: {dev: rxe1, netns: b}, client: {dev: rxe0, to: "
      "10.10.0.2, netns: a}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.tools.started[0].argv[4] == "2");  // rxe1's 10.10.0.2, not its first IPv4 entry
  CHECK(step_named(r, "p").facts.at("server_gid_index") == 2);
}

TEST_CASE("perftest: a given gid_index, duration and MTU, no rdma_cm: no -R") {
  PerftestHarness h;
  h.fake.rdma.gid_tables["rxe0"] = {};  // would fail if it were looked up
  auto r = h.run(
      "steps:\n  - name: p\n    perftest: {test: read_lat, server: {dev: rxe0}, client: {dev: rxe1, to: 10.10.0.1}, "
      "gid_index: 3, duration: 2500ms, mtu: 1024, port: 20000}\n");
  REQUIRE(h.fake.tools.started.size() == 2);
  CHECK(h.fake.tools.started[0].argv ==
        std::vector<std::string>{"ib_read_lat", "-d", "rxe0", "-x", "3", "-F", "-p", "20000", "-D", "3", "-m", "1024"});
  CHECK_FALSE(h.fake.tools.started[0].netns);
  CHECK(h.fake.tools.started[1].argv.back() == "10.10.0.1");
  CHECK(step_named(r, "p").facts.at("server_gid_index") == 3);
}

TEST_CASE("perftest: latency figures become facts") {
  PerftestHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec& s) {
    if (!is_client(s)) return sys::ProgramRun{.exit = sys::ExitStatus{}};
    return sys::ProgramRun{.out =
                               " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                               "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
                               " 64      500          51.23          812.40       58.11    \t       60.02     \t4.31   "
                               "\t\t95.70  \t\t812.40 \n",
                           .exit = sys::ExitStatus{}};
  };
  auto r = h.run(
      "steps:\n  - name: p\n    perftest: {test: write_lat, server: {dev: rxe0}, client: {dev: rxe1, to: 10.10.0.1}, "
      "size: 64, iterations: 500}\n    expect: {lat_typical_us: \"> 0\"}\n");
  REQUIRE(r.exit_code == 0);
  const auto& f = step_named(r, "p").facts;
  CHECK(f.at("lat_min_us") == 51.23);
  CHECK(f.at("lat_max_us") == 812.4);
  CHECK(f.at("lat_typical_us") == 58.11);
  CHECK(f.at("lat_avg_us") == 60.02);
  CHECK(f.at("lat_stdev_us") == 4.31);
  CHECK(f.at("lat_p99_us") == 95.7);
  CHECK(f.at("lat_p999_us") == 812.4);
  CHECK_FALSE(f.contains("bw_avg_mib_s"));
}

TEST_CASE("perftest: rates perftest could not time are left out, with a hint, and an expectation on them fails") {
  PerftestHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec& s) {
    if (!is_client(s)) return sys::ProgramRun{.exit = sys::ExitStatus{}};
    return sys::ProgramRun{.out =
                               " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
                               " 4096       2000             0.00               0.00   \t\t   0.000000\n",
                           .err = "Correlation coefficient r^2: 0.34 < 0.9\n",
                           .exit = sys::ExitStatus{}};
  };
  auto r = h.run(std::string(kBw) + "    expect: {iterations: 2000}\n");
  REQUIRE(r.exit_code == 0);
  const auto& step = step_named(r, "p");
  CHECK(step.facts.at("clock_calibrated") == false);
  CHECK(step.facts.at("iterations") == 2000);
  CHECK_FALSE(step.facts.contains("bw_avg_mib_s"));
  REQUIRE(step.hints.size() == 1);
  CHECK(contains(step.hints[0], "could not calibrate its cycle counter"));
  auto strict = h.run(std::string(kBw) + "    expect: {bw_avg_mib_s: \"> 0\"}\n");
  CHECK(strict.exit_code == 1);
}

TEST_CASE("perftest: a QP that cannot reach RTR fails with perftest's lines and the likely causes") {
  PerftestHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec& s) {
    if (!is_client(s)) return sys::ProgramRun{};  // the server waits for ever
    return sys::ProgramRun{.out = " local address: LID 0000 QPN 0x0017 PSN 0x1\n",
                           .err = " Failed to modify QP 23 to RTR\n Unable to Connect the HCA's through the link\n",
                           .exit = sys::ExitStatus{.code = 1}};
  };
  auto r = h.run(std::string(kBw) + "    expect: fail\n");
  CHECK(r.exit_code == 0);
  const auto& s = step_named(r, "p");
  CHECK(s.outcome == Outcome::Fail);
  CHECK(s.message ==
        "ib_write_bw client ended with exit 1: Failed to modify QP 23 to RTR / Unable to Connect the HCA's through the "
        "link");
  REQUIRE(s.hints.size() == 1);
  CHECK(contains(s.hints[0], "GID index (server 1, client 1)"));
  CHECK(contains(s.hints[0], "MTU"));
  CHECK(contains(s.hints[0], "start order"));
  CHECK(s.facts.at("server_exit") == "killed by SIGTERM");
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("perftest: a refused client is started again while the server comes up") {
  PerftestHarness h;
  int clients = 0;
  h.fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (!is_client(s)) return sys::ProgramRun{.exit = sys::ExitStatus{}, .takes = Duration(3000)};
    if (++clients == 1)
      return sys::ProgramRun{
          .err = "Couldn't connect to 10.10.0.1:18515\nUnable to open file descriptor for socket connection",
          .exit = sys::ExitStatus{.code = 1}};
    return sys::ProgramRun{.out = kBwOut, .exit = sys::ExitStatus{}, .takes = Duration(2000)};
  };
  auto r = h.run(kBw);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "p").facts.at("attempts") == 2);
}

TEST_CASE("perftest: with rdma_cm a refused client is started again against a fresh server") {
  // A listening server that saw a refused request may wait on the wrong
  // connection for ever: the next client gets a new one.
  PerftestHarness h;
  int clients = 0;
  h.fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (!is_client(s)) return sys::ProgramRun{};  // runs until stopped, or serves its client
    if (++clients == 1)
      return sys::ProgramRun{.err =
                                 "Unexpected CM event bl blka 8\nERRNO: Operation not supported.\n"
                                 "Failed to connect RDMA CM events.",
                             .exit = sys::ExitStatus{.code = 1}};
    return sys::ProgramRun{.out = kBwOut, .exit = sys::ExitStatus{}, .takes = Duration(2000)};
  };
  auto r = h.run(kBw);
  REQUIRE(r.exit_code == 0);
  const auto& f = step_named(r, "p").facts;
  CHECK(f.at("attempts") == 2);
  REQUIRE(h.fake.tools.started.size() == 4);  // server, client, server, client
  CHECK_FALSE(is_client(h.fake.tools.started[0]));
  CHECK(is_client(h.fake.tools.started[1]));
  CHECK_FALSE(is_client(h.fake.tools.started[2]));
  CHECK(is_client(h.fake.tools.started[3]));
  CHECK(h.fake.rdma.cm_probes == 2);  // each server waited for
  CHECK(f.at("server_pid") == 1003);
  // The first server was stopped before the second started.
  const auto& log = h.fake.tools.log;
  const auto stop_first = std::find(log.begin(), log.end(), "stop 1001");
  const auto start_third =
      std::find_if(log.begin(), log.end(), [](const std::string& l) { return l.starts_with("start 1003"); });
  REQUIRE(stop_first != log.end());
  CHECK(stop_first < start_third);
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("perftest: without rdma_cm a refused client is started again against the same server") {
  PerftestHarness h;
  h.fake.tools.on_start = [n = 0](const sys::ToolSpec& s) mutable {
    if (!is_client(s)) return sys::ProgramRun{.exit = sys::ExitStatus{}, .takes = Duration(3000)};
    if (++n == 1)
      return sys::ProgramRun{.err = "Couldn't connect to 10.10.0.1:18515", .exit = sys::ExitStatus{.code = 1}};
    return sys::ProgramRun{.out = kBwOut, .exit = sys::ExitStatus{}, .takes = Duration(2000)};
  };
  auto r = h.run(std::string(kBw).replace(std::string(kBw).find("      rdma_cm: true\n"), 20, ""));
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "p").facts.at("attempts") == 2);
  CHECK(h.fake.tools.started.size() == 3);  // server, client, client
}

TEST_CASE("perftest: with rdma_cm the client starts once rdma_cm lists the server listening") {
  PerftestHarness h;
  h.fake.rdma.cm_listen_after = 3;  // three probes see nothing, the fourth the listener
  auto r = h.run(kBw);
  REQUIRE(r.exit_code == 0);
  const auto& f = step_named(r, "p").facts;
  CHECK(f.at("attempts") == 1);
  CHECK(f.at("server_ready_s") == 0.06);  // three waits of 20 ms
  CHECK(h.fake.rdma.cm_probes == 4);
  CHECK(h.fake.rdma.cm_probed_ports.front() == 18515);
  REQUIRE(h.fake.tools.started.size() == 2);
  CHECK_FALSE(is_client(h.fake.tools.started[0]));
}

TEST_CASE("perftest: without rdma_cm, or when the probe fails, the client starts at once") {
  PerftestHarness tcp;
  auto r = tcp.run(std::string(kBw).replace(std::string(kBw).find("      rdma_cm: true\n"), 20, ""));
  REQUIRE(r.exit_code == 0);
  CHECK(tcp.fake.rdma.cm_probes == 0);
  CHECK_FALSE(step_named(r, "p").facts.contains("server_ready_s"));

  PerftestHarness old;
  old.fake.kernel.fail("rdma.cm_listening", EOPNOTSUPP);
  auto o = old.run(kBw);
  REQUIRE(o.exit_code == 0);
  CHECK(old.fake.rdma.cm_probes == 1);
  CHECK(step_named(o, "p").facts.at("attempts") == 1);
  CHECK_FALSE(step_named(o, "p").facts.contains("server_ready_s"));
}

TEST_CASE("perftest: a client that ends well without a result table fails") {
  PerftestHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec&) {
    return sys::ProgramRun{.out = "nothing\n", .exit = sys::ExitStatus{}};
  };
  auto r = h.run(kBw);
  CHECK(r.exit_code == 1);
  CHECK(contains(step_named(r, "p").message, "perftest printed no result table"));
}

TEST_CASE("perftest: one GID on both ends passes with the loopback warning") {
  PerftestHarness h;
  std::string looped = kBwOut;
  looped.replace(looped.find("10:10:00:02"), 11, "10:10:00:01");
  h.fake.tools.on_start = [&](const sys::ToolSpec& s) {
    if (!is_client(s)) return sys::ProgramRun{.exit = sys::ExitStatus{}};
    return sys::ProgramRun{.out = looped, .exit = sys::ExitStatus{}};
  };
  auto r = h.run(kBw);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "p");
  REQUIRE(s.hints.size() == 1);
  CHECK(contains(s.hints[0], "nothing crossed the wire"));
}

TEST_CASE("perftest: a device without an IPv4 RoCE v2 GID fails before anything runs") {
  PerftestHarness h;
  h.fake.rdma.gid_tables["rxe1"] = {{.index = 0, .gid = "fe80::1", .type = "RoCE v2", .netdev = "vB"}};
  auto r = h.run(kBw);
  CHECK(r.exit_code == 1);
  CHECK(contains(step_named(r, "p").message, "rxe1 has no RoCE v2 GID with an IPv4 address"));
  CHECK(h.fake.tools.started.empty());
}

TEST_CASE("perftest: a client still running at the timeout is stopped with its server") {
  PerftestHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec&) { return sys::ProgramRun{}; };
  auto r = h.run(std::string(kBw) + "    timeout: 15s\n    expect: timeout\n");
  CHECK(r.exit_code == 0);
  CHECK(h.fake.tools.alive.empty());
  CHECK(h.fake.clock.now() - h.fake.clock.start() == std::chrono::seconds(15));
  // Neither said anything: the message has no quote, the hints no server lines.
  const auto& s = step_named(r, "p");
  CHECK(s.message == "ib_write_bw client was still running at the step's timeout (stopped)");
  REQUIRE(s.hints.size() == 1);
  CHECK(contains(s.hints[0], "retried by the kernel for over a minute"));
}

TEST_CASE("perftest: a stalled client's message quotes its last lines, a hint the server's") {
  PerftestHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec& s) {
    if (!is_client(s)) return sys::ProgramRun{.out = " Waiting for client to connect...\n"};
    return sys::ProgramRun{.out = " local address: LID 0000 QPN 0x0011\n remote address: LID 0000 QPN 0x0012\n"};
  };
  auto r = h.run(std::string(kBw) + "    timeout: 15s\n    expect: timeout\n");
  CHECK(r.exit_code == 0);
  const auto& s = step_named(r, "p");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(s.message ==
        "ib_write_bw client was still running at the step's timeout (stopped): local address: LID 0000 QPN 0x0011 / "
        "remote address: LID 0000 QPN 0x0012");
  REQUIRE(s.hints.size() == 2);
  CHECK(s.hints[0] == "the server's last lines: Waiting for client to connect...");
  CHECK(contains(s.hints[1], "retried by the kernel for over a minute"));
  CHECK(s.facts.at("client_exit") == "killed by SIGTERM");
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("perftest: parameters are checked at load time") {
  PerftestHarness h;
  CHECK(contains(h.diagnostics("steps:\n  - perftest: {test: write_bw, server: {dev: rxe0}, client: {dev: rxe1, to: "
                               "10.0.0.1}, iterations: 100, duration: 5s}\n"),
                 "exclude each other"));
  CHECK(contains(h.diagnostics("steps:\n  - perftest: {test: write_bww, server: {dev: rxe0}, client: {dev: rxe1, to: "
                               "10.0.0.1}}\n"),
                 "test.yaml:2:"));
  CHECK(contains(h.diagnostics("steps:\n  - perftest: {test: write_bw, server: {dev: rxe0}, client: {dev: rxe1}}\n"),
                 "missing required parameter 'client.to'"));
  CHECK(contains(h.diagnostics("steps:\n  - perftest: {test: write_bw, server: {dev: rxe0}, client: {dev: rxe1, to: "
                               "10.0.0.1}, mtu: 1000}\n"),
                 "test.yaml:2:"));
}

TEST_CASE("perftest: the plan shows both command lines with LC_ALL=C and the namespaces") {
  PerftestHarness h;
  // The plan's GID tables hold what its own address steps put there.
  const std::string plan = h.plan(
      "steps:\n"
      "  - address: {dev: vA, cidr: 10.10.0.1/24}\n"
      "    netns: a\n"
      "  - address: {dev: vB, cidr: 10.10.0.2/24}\n"
      "    netns: b\n"
      "  - rxe: {name: rxe0, netdev: vA}\n"
      "    netns: a\n"
      "  - rxe: {name: rxe1, netdev: vB}\n"
      "    netns: b\n" +
      std::string(kBw).substr(std::string("steps:\n").size()));
  CHECK(contains(plan, "LC_ALL=C ip netns exec a ib_write_bw -d rxe0 -x 1 -F -R -p 18515 -s 4096 -n 2000"));
  CHECK(contains(plan, "LC_ALL=C ip netns exec b ib_write_bw -d rxe1 -x 1 -F -R -p 18515 -s 4096 -n 2000 10.10.0.1"));
}
