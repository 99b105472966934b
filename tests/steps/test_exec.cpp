// exec against the fake Tools: what is started (argv or /bin/sh -c, env,
// cwd, stdin, the namespace the step runs in), the outcome of each ending
// (exit 0, an exit code, a signal, the timeout, a tool that survives
// SIGKILL), the output facts within their bounds, parse: json, extract,
// the journaled undo, the load-time checks and the plan. The real program:
// tests/e2e/exec.sh.

#include <doctest/doctest.h>

#include <string>

#include "fakes/harness.h"

using namespace rxerun;
using fakes::step_named;
using sys::ProgramRun;
using Strings = std::vector<std::string>;

namespace {

struct ExecHarness : fakes::Harness {
  ExecHarness() {
    fake.links.add_host_link("", {.name = "eth0", .mtu = 1500});
    fake.tools.clock = &fake.clock;  // `takes` moves virtual time
  }
  // Every program behaves as `run` says.
  void programs(sys::ProgramRun run) {
    fake.tools.on_start = [run](const sys::ToolSpec&) { return run; };
  }
};

bool has_hint(const StepReport& s, const std::string& part) {
  for (const auto& h : s.hints)
    if (h.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("exec: runs argv without a shell, with env, cwd and stdin, and reports exit and output") {
  ExecHarness h;
  h.programs({.out = "hello\n", .err = "warn\n", .exit = sys::ExitStatus{}, .takes = Duration(250)});
  auto r = h.run(
      "steps:\n"
      "  - name: e\n"
      "    exec: {argv: [prog, -x, \"a b\"], env: {FOO: bar, N: 3}, cwd: /tmp, stdin: \"in\\n\"}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.tools.started.size() == 1);
  const auto& spec = h.fake.tools.started[0];
  CHECK(spec.argv == Strings{"prog", "-x", "a b"});
  CHECK(spec.env == std::map<std::string, std::string>{{"FOO", "bar"}, {"N", "3"}});
  CHECK(spec.cwd == "/tmp");
  CHECK(spec.input == "in\n");
  CHECK_FALSE(spec.netns);  // the step's namespace is the thread's: the child inherits it
  const auto& f = step_named(r, "e").facts;
  CHECK(f.at("exit") == 0);
  CHECK(f.at("stdout") == "hello\n");
  CHECK(f.at("stderr") == "warn\n");
  CHECK(f.at("duration_s") == 0.25);
  CHECK(f.contains("eth0.rx_packets"));  // the traffic facts of its namespace
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("exec: shell runs the string by /bin/sh -c") {
  ExecHarness h;
  auto r = h.run("steps:\n  - {name: e, exec: {shell: \"a | b > c\"}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.tools.started.at(0).argv == Strings{"/bin/sh", "-c", "a | b > c"});
}

TEST_CASE("exec: a non-zero exit fails with the program's last lines, an expected failure passes") {
  ExecHarness h;
  h.programs({.err = "one\ntwo\nthree\nfour\n", .exit = sys::ExitStatus{.code = 3}});
  auto r = h.run("steps:\n  - {name: e, exec: {argv: [prog]}}\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "e");
  CHECK(s.outcome == Outcome::Fail);
  CHECK(s.facts.at("exit") == 3);
  CHECK(s.message == "prog ended with exit 3: two / three / four");

  auto expected = h.run("steps:\n  - {name: e, exec: {argv: [prog]}, expect: {outcome: fail, exit: 3}}\n");
  CHECK(expected.exit_code == 0);
}

TEST_CASE("exec: a program killed by a signal reports the signal's name") {
  ExecHarness h;
  h.programs({.exit = sys::ExitStatus{.signal = 9}});
  auto r = h.run("steps:\n  - {name: e, exec: {argv: [prog]}, expect: {outcome: fail, exit: SIGKILL}}\n");
  CHECK(r.exit_code == 0);
}

TEST_CASE("exec: at the step's timeout the program is stopped and the step is timeout") {
  ExecHarness h;
  h.programs({.out = "working\n"});  // runs until stopped
  auto r = h.run("steps:\n  - {name: e, exec: {argv: [server]}, timeout: 2s}\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "e");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(s.message == "server was still running at the step's timeout (stopped); it last said: working");
  CHECK(s.facts.at("exit") == "SIGTERM");
  CHECK(h.fake.tools.alive.empty());
  CHECK(h.fake.tools.log.at(1) == "stop 1001");
}

TEST_CASE("exec: one that survives SIGKILL is reported and let go") {
  ExecHarness h;
  h.programs({.stuck = true});
  auto r = h.run("steps:\n  - {name: e, exec: {argv: [prog]}, timeout: 1s}\n");
  const auto& s = step_named(r, "e");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(s.facts.at("stuck").get<std::string>().starts_with("prog (pid 1001) did not die after SIGKILL"));
  CHECK_FALSE(s.facts.contains("exit"));
  CHECK(has_hint(s, "let go"));
}

TEST_CASE("exec: stdout and stderr facts hold the last 64 KiB") {
  ExecHarness h;
  const std::string big = std::string(200'000, 'x') + "END\n";
  h.programs({.out = big, .err = big, .exit = sys::ExitStatus{}});
  auto r = h.run("steps:\n  - {name: e, exec: {argv: [prog]}, expect: {stdout: \"~ END\\n$\"}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.tools.started.at(0).keep_bytes == 64 * 1024);
  const auto& f = step_named(r, "e").facts;
  CHECK(f.at("stdout").get<std::string>().size() == 64 * 1024);
  CHECK(f.at("stderr").get<std::string>().ends_with("END\n"));
}

TEST_CASE("exec: parse json makes a fact of every value, named by its path") {
  ExecHarness h;
  h.programs({.out = R"({"jobs": [{"jobname": "w", "write": {"bw": 2048, "iops": 51.5}}], "ok": true})",
              .exit = sys::ExitStatus{}});
  auto r = h.run(
      "steps:\n  - name: e\n    exec: {argv: [fio, --output-format=json], parse: json}\n"
      "    expect: {jobs.0.write.bw: \"> 1000\", jobs.0.jobname: w, ok: true}\n");
  REQUIRE(r.exit_code == 0);
  const auto& f = step_named(r, "e").facts;
  CHECK(f.at("jobs.0.write.iops") == 51.5);
  CHECK(h.fake.tools.started.at(0).keep_bytes == 16 * 1024 * 1024);
}

TEST_CASE("exec: output that is not JSON parses to nothing, with a hint") {
  ExecHarness h;
  h.programs({.out = "not json", .exit = sys::ExitStatus{}});
  auto r = h.run("steps:\n  - {name: e, exec: {argv: [prog], parse: json}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(has_hint(step_named(r, "e"), "stdout is not JSON"));
}

TEST_CASE("exec: extract takes the first group, as a number when it is one, from stdout then stderr") {
  ExecHarness h;
  h.programs({.out = "8192000 bytes in 0.05 seconds = 1310.72 Mbit/sec\n1000 iters in 0.05 seconds = 50.00 usec/iter\n",
              .err = "local address: LID 0x0000, QPN 0x000011\n",
              .exit = sys::ExitStatus{}});
  auto r = h.run(
      "steps:\n  - name: e\n    exec:\n      argv: [ibv_rc_pingpong]\n"
      "      extract: {usec: \"([0-9.]+) usec/iter\", qpn: \"QPN (0x[0-9a-f]+)\", none: \"(nothing)\"}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "e");
  CHECK(s.facts.at("usec") == 50.0);
  CHECK(s.facts.at("qpn") == "0x000011");
  CHECK_FALSE(s.facts.contains("none"));
  CHECK(has_hint(s, "extract none: '(nothing)' matched nothing in the output"));
}

TEST_CASE("exec: the undo is journaled before the program starts and runs at cleanup") {
  ExecHarness h;
  auto r = h.run_keep("steps:\n  - {name: e, exec: {argv: [mkfile], undo: [rm, -f, /tmp/x], env: {A: b}, cwd: /}}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.tools.started.size() == 1);
  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "run rm -f /tmp/x");
  REQUIRE(h.fake.tools.started.size() == 2);
  CHECK(h.fake.tools.started[1].argv == Strings{"rm", "-f", "/tmp/x"});
  CHECK(h.fake.tools.started[1].env.at("A") == "b");
  CHECK(h.fake.tools.started[1].cwd == "/");
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("exec: an undo that fails is left behind with its words (exit 4)") {
  ExecHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec& s) {
    if (s.argv[0] == "rm") return sys::ProgramRun{.err = "rm: cannot remove\n", .exit = sys::ExitStatus{.code = 1}};
    return sys::ProgramRun{.exit = sys::ExitStatus{}};
  };
  auto r = h.run("steps:\n  - {name: e, exec: {argv: [mk], undo: [rm, x]}}\n");
  CHECK(r.exit_code == 4);
  REQUIRE(r.cleanup.undos.size() == 1);
  CHECK(r.cleanup.undos[0].error.find("rm x ended with exit 1: rm: cannot remove") != std::string::npos);
}

TEST_CASE("exec: a program that cannot start is the step's error") {
  ExecHarness h;
  h.fake.kernel.fail("tools.start", 2, "", 1, 0, "cannot run nosuch: not installed (not found in PATH)");
  auto r = h.run("steps:\n  - {name: e, exec: {argv: [nosuch]}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "e").message.find("not installed") != std::string::npos);
}

TEST_CASE("exec: parameters are checked at load time") {
  ExecHarness h;
  CHECK(h.diagnostics("steps:\n  - exec: {cwd: /}\n").find("exec needs `argv` (a list) or `shell`") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], shell: b}\n").find("one of them") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: []}\n").find("test.yaml:2:18: argv is empty") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: a}\n").find("'argv' must be a list") != std::string::npos);
  CHECK(
      h.diagnostics("steps:\n  - exec: {argv: [a], env: {1X: y}}\n").find("'1X' is not an environment variable name") !=
      std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], extract: {n: \"[0-9]+\"}}\n").find("has no group") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], extract: {n: \"([0-9]+\"}}\n")
            .find("test.yaml:2:36: invalid regex") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], output: ../x}\n").find("output is a file name") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], parse: yaml}\n").find("must be one of json") != std::string::npos);
}

TEST_CASE("exec: the plan shows the command as a person would type it") {
  ExecHarness h;
  const std::string plan =
      h.plan("steps:\n  - {name: e, exec: {shell: \"echo hi\", cwd: /tmp, env: {A: b}}, netns: lab}\n");
  CHECK(plan.find("cd /tmp && A=b ip netns exec lab /bin/sh -c 'echo hi'") != std::string::npos);
}

TEST_CASE("exec background: ready once its port listens, kept running, and wait takes its end") {
  ExecHarness h;
  h.fake.tools.sockets = {{sys::SocketProto::Tcp, 18515}};
  h.fake.tools.ready_after = 3;  // three probes find nothing
  h.fake.tools.on_start = [](const sys::ToolSpec& s) {
    if (s.argv[0] == "server")
      return sys::ProgramRun{.out = "served\n", .exit = sys::ExitStatus{}, .takes = Duration(5000)};
    return sys::ProgramRun{.exit = sys::ExitStatus{}};
  };
  auto r = h.run(
      "steps:\n"
      "  - {name: s, exec: {argv: [server], background: true, ready: {tcp: 18515}}}\n"
      "  - {name: c, exec: {argv: [client]}}\n"
      "  - {name: w, wait: s, expect: {exit: 0, stdout: \"~ served\"}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "s").facts;
  CHECK(s.at("pid") == 1001);
  CHECK(s.at("ready_s") == 0.06);  // three waits of 20 ms
  CHECK(h.fake.tools.probes == 4);
  const auto& env = h.fake.tools.started.at(0).env;
  REQUIRE(env.contains("RXERUN_TOKEN"));
  CHECK(env.at("RXERUN_TOKEN").starts_with("test/s/"));
  CHECK(env.at("RXERUN_TOKEN").size() == std::string("test/s/").size() + 16);
  // The client ran while the server did; wait took the server's end.
  CHECK(h.fake.tools.log.at(1).starts_with("start 1002 client"));
  CHECK(h.fake.tools.alive.empty());
  // Cleanup looked for what it might have left outside its group.
  CHECK(h.fake.tools.stopped_marked == Strings{"RXERUN_TOKEN=" + env.at("RXERUN_TOKEN")});
}

TEST_CASE("exec background: one still running at the end is stopped by cleanup") {
  ExecHarness h;
  h.programs({});  // runs until stopped
  auto r = h.run("steps:\n  - {name: s, exec: {argv: [server], background: true}}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.cleanup.undos.size() == 1);
  CHECK(r.cleanup.undos[0].summary == "stop server and whatever it started");
  CHECK(h.fake.tools.log.at(1) == "stop 1001");
  CHECK(h.fake.tools.alive.empty());
}

TEST_CASE("exec background: rxerun cleanup after a crash stops the processes that carry its token") {
  ExecHarness h;
  h.programs({});
  auto r = h.run_keep("steps:\n  - {name: s, exec: {argv: [server], background: true}}\n");
  REQUIRE(r.exit_code == 0);
  const std::string token = "RXERUN_TOKEN=" + h.fake.tools.started.at(0).env.at("RXERUN_TOKEN");
  h.fake.tools.marked[token] = {4242, 4243};
  fakes::Harness later;  // another rxerun: nothing of the first in memory
  later.journal = std::move(h.journal);
  later.fake.tools.marked[token] = {4242, 4243};
  auto c = later.cleanup();
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].ok);
  CHECK(later.fake.tools.stopped_marked == Strings{token});
  CHECK(later.fake.tools.marked.empty());
}

TEST_CASE("exec background: not ready by the timeout is stopped (timeout), ended before ready fails") {
  ExecHarness h;
  h.programs({});
  auto r = h.run("steps:\n  - {name: s, exec: {argv: [server], background: true, ready: {udp: 4791}}, timeout: 1s}\n");
  const auto& s = step_named(r, "s");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(s.message == "server was not ready within the step's timeout (stopped)");
  CHECK(h.fake.tools.alive.empty());

  ExecHarness e;
  e.programs({.err = "bind: Address already in use\n", .exit = sys::ExitStatus{.code = 1}, .takes = Duration(30)});
  auto f = e.run("steps:\n  - {name: s, exec: {argv: [server], background: true, ready: {tcp: 80}}}\n");
  CHECK(step_named(f, "s").outcome == Outcome::Fail);
  CHECK(step_named(f, "s").message == "server ended before it was ready: exit 1: bind: Address already in use");
}

TEST_CASE("exec background: ready on a line of its output, or a file") {
  ExecHarness h;
  h.programs({.out = "server listening on 7471\n"});
  auto r =
      h.run("steps:\n  - {name: s, exec: {argv: [server], background: true, ready: {log: \"listening on \\\\d+\"}}}\n");
  CHECK(r.exit_code == 0);

  ExecHarness f;
  f.programs({});
  f.fake.tools.files = {"/run/server.pid"};
  auto g = f.run("steps:\n  - {name: s, exec: {argv: [server], background: true, ready: {file: /run/server.pid}}}\n");
  CHECK(g.exit_code == 0);
}

TEST_CASE("wait: a step that left nothing running is the wait's error") {
  ExecHarness h;
  auto r = h.run("steps:\n  - {name: s, exec: {argv: [prog]}}\n  - {wait: s}\n");
  CHECK(r.exit_code == 3);
  CHECK(r.steps.at(1).message.starts_with("step s left no program running"));
}

TEST_CASE("exec background: its parameters are checked at load time") {
  ExecHarness h;
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], ready: {tcp: 1}}\n").find("add `background: true`") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], background: true, ready: {tcp: 1, udp: 2}}\n")
            .find("ready takes one of") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], background: true, output: x}\n")
            .find("output is not for a background program") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - exec: {argv: [a], background: true, ready: {tcp: 70000}}\n").find("70000") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - {wait: nosuch}\n").find("no earlier step is named 'nosuch'") != std::string::npos);
}
