// TerminalReporter: what a user reads. The text is asserted line by line,
// because the layout is the product (docs/running.md).

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "engine/report.h"

using namespace rxerun;
using namespace std::chrono_literals;

namespace {

// Captures what a reporter writes to its FILE*.
class Capture {
 public:
  Capture() : file_(open_memstream(&buf_, &len_)) { REQUIRE(file_ != nullptr); }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  ~Capture() {
    std::fclose(file_);
    std::free(buf_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buf_, len_);
  }
  std::vector<std::string> lines() {
    std::vector<std::string> out;
    std::istringstream in(text());
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }

 private:
  char* buf_ = nullptr;
  std::size_t len_ = 0;
  std::FILE* file_;
};

bool has_line_with(const std::vector<std::string>& lines, std::string_view a, std::string_view b = "") {
  for (const auto& l : lines) {
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  }
  return false;
}

std::size_t columns(const std::string& s) {  // UTF-8 code points
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

StepReport step(int index, std::string name, std::string kind, StepStatus status, Duration d = 100ms) {
  StepReport s;
  s.index = index;
  s.name = std::move(name);
  s.kind = std::move(kind);
  s.status = status;
  s.attempts = status == StepStatus::Skipped || status == StepStatus::NotRun ? 0 : 1;
  s.duration = (status == StepStatus::Skipped || status == StepStatus::NotRun) ? 0ms : d;
  return s;
}

UndoReport undo(std::string step, std::string kind, std::string summary, bool ok = true, std::string error = "") {
  return UndoReport{std::move(step), std::move(kind), std::move(summary), ok, std::move(error), 10ms};
}

// A run with one step of every status, and a clean cleanup.
RunReport sample_run() {
  RunReport r;
  r.file = "scenarios/selftest.yaml";
  r.scenario = "selftest";
  r.description = "the runner checks itself";
  r.started_at = "2024-05-01T10:00:00Z";
  r.duration = 720ms;
  r.exit_code = 1;

  auto nap = step(0, "nap", "sleep", StepStatus::Passed);
  nap.facts = {{"slept_ms", 100}};
  auto timeout = step(1, "must-time-out", "sleep", StepStatus::Passed, 200ms);
  timeout.expected = timeout.outcome = Outcome::Timeout;
  auto settle = step(2, "settle", "ping", StepStatus::Flaky, 310ms);
  settle.attempts = 3;
  settle.facts = {{"sent", 2}, {"received", 2}, {"vB.tx_packets", 4}, {"vB.rx_errors", 0}};
  auto bad = step(3, "expected-to-fail", "sleep", StepStatus::Failed);
  bad.expected = Outcome::Fail;
  bad.failures = {"expected fail, got ok", "fact slept_ms: 100 is not > 200"};
  bad.facts = {{"slept_ms", 100}};
  auto broken = step(4, "load-rxe", "rxe", StepStatus::Error, 20ms);
  broken.outcome = Outcome::Error;
  broken.message = "modprobe rdma_rxe: Module not found";
  broken.hints = {"install linux-modules-extra, or run with --vm"};
  auto skipped = step(5, "optional-check", "sleep", StepStatus::Skipped);
  skipped.tags = {"slow"};
  auto later = step(6, "later", "rping", StepStatus::NotRun);

  r.steps = {nap, timeout, settle, bad, broken, skipped, later};
  r.preclean.phase = "preclean";
  r.cleanup.phase = "cleanup";
  r.cleanup.undos = {undo("veth-2", "veth", "delete veth vA"), undo("netns-1", "netns", "delete netns lab")};
  return r;
}

Scenario scenario_of(const RunReport& r) {
  Scenario s;
  s.file = r.file;
  s.name = r.scenario;
  s.description = r.description;
  for (const auto& st : r.steps) {
    StepSpec spec;
    spec.index = st.index;
    spec.name = st.name;
    spec.kind = st.kind;
    s.steps.push_back(spec);
  }
  return s;
}

// Drives a reporter through a whole run, the way the runner does.
void replay(Reporter& rep, const RunReport& r) {
  const Scenario sc = scenario_of(r);
  rep.run_started(sc);
  if (!r.preclean.undos.empty()) {
    rep.cleanup_started("preclean", r.preclean.undos.size());
    for (const auto& u : r.preclean.undos) rep.undo_finished(u);
  }
  rep.cleanup_finished(r.preclean);
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    if (r.steps[i].status != StepStatus::Skipped && r.steps[i].status != StepStatus::NotRun) {
      rep.step_started(sc.steps[i]);
    }
    rep.step_finished(r.steps[i]);
  }
  if (r.interrupted) rep.note("interrupted: cleaning up");
  rep.cleanup_started("cleanup", r.cleanup.undos.size());
  for (const auto& u : r.cleanup.undos) rep.undo_finished(u);
  rep.cleanup_finished(r.cleanup);
  rep.run_finished(r);
}

std::vector<std::string> render(const RunReport& r, TerminalStyle style) {
  Capture cap;
  TerminalReporter rep(cap.file(), style);
  replay(rep, r);
  return cap.lines();
}

}  // namespace

TEST_CASE("report: to_string(StepStatus) names every status") {
  CHECK(to_string(StepStatus::Passed) == "passed");
  CHECK(to_string(StepStatus::Flaky) == "flaky");
  CHECK(to_string(StepStatus::Failed) == "failed");
  CHECK(to_string(StepStatus::Error) == "error");
  CHECK(to_string(StepStatus::Skipped) == "skipped");
  CHECK(to_string(StepStatus::NotRun) == "not-run");
  CHECK(to_string(StepStatus::Interrupted) == "interrupted");
}

TEST_CASE("report: terminal shows one line per step, reasons, cleanup and summary") {
  const auto lines = render(sample_run(), {});
  INFO([&] {
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
  }());

  REQUIRE(lines.size() >= 10);
  CHECK(lines[0] == "rxerun: selftest (scenarios/selftest.yaml, 7 steps)");
  CHECK(lines[1] == "  ok    nap                   sleep     0.10s  slept_ms=100");
  CHECK(lines[2] == "  ok    must-time-out         sleep     0.20s  timeout, as expected");
  // Own facts first, then counters that moved; a zero counter is noise.
  // ... and only as many as fit in 100 columns.
  CHECK(lines[3] == "  FLAKY settle                ping      0.31s  passed on attempt 3  received=2  sent=2  ...");
  CHECK(lines[4] == "  FAIL  expected-to-fail      sleep     0.10s  slept_ms=100");
  CHECK(lines[5] == "        expected fail, got ok");
  CHECK(lines[6] == "        fact slept_ms: 100 is not > 200");
  CHECK(lines[7] == "  ERROR load-rxe              rxe       0.02s");
  CHECK(lines[8] == "        modprobe rdma_rxe: Module not found");
  CHECK(lines[9] == "        hint: install linux-modules-extra, or run with --vm");
  CHECK(lines[10] == "  skip  optional-check        sleep            skipped (tags: slow)");
  CHECK(lines[11] == "  --    later                 rping            not run");
  CHECK(lines[12] == "cleanup: 2 undone, nothing left");
  CHECK(lines[13] == "FAIL selftest: 3 passed (1 flaky), 1 failed, 1 error, 1 skipped, 1 not run in 0.72s (exit 1)");
  CHECK(lines.size() == 14);
  // An empty preclean is not news.
  CHECK_FALSE(has_line_with(lines, "preclean"));
}

TEST_CASE("report: terminal colour only when asked") {
  const auto plain = render(sample_run(), {.color = false});
  for (const auto& l : plain) CHECK(l.find('\x1b') == std::string::npos);

  const auto colored = render(sample_run(), {.color = true});
  CHECK(has_line_with(colored, "\x1b[32mok\x1b[0m", "nap"));
  CHECK(has_line_with(colored, "\x1b[31mFAIL\x1b[0m", "expected-to-fail"));
  CHECK(has_line_with(colored, "\x1b[31mERROR\x1b[0m", "load-rxe"));
  CHECK(has_line_with(colored, "\x1b[33mFLAKY\x1b[0m", "settle"));
  CHECK(has_line_with(colored, "\x1b[33mskip\x1b[0m", "optional-check"));
  CHECK(has_line_with(colored, "\x1b[2m ", "0.10s\x1b[0m"));  // durations dim
  CHECK(has_line_with(colored, "\x1b[31mFAIL\x1b[0m selftest:"));
  // Colour does not move the columns: strip it and the text is the plain one.
  REQUIRE(colored.size() == plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    std::string stripped;
    const auto& l = colored[i];
    for (std::size_t k = 0; k < l.size(); ++k) {
      if (l[k] == '\x1b') {
        k = l.find('m', k);
        continue;
      }
      stripped += l[k];
    }
    CHECK(stripped == plain[i]);
  }
}

TEST_CASE("report: terminal quiet shows only problems and the summary") {
  const auto lines = render(sample_run(), {.verbosity = Verbosity::Quiet});
  CHECK_FALSE(has_line_with(lines, "rxerun: selftest"));
  CHECK_FALSE(has_line_with(lines, "nap"));
  CHECK_FALSE(has_line_with(lines, "settle"));
  CHECK_FALSE(has_line_with(lines, "optional-check"));
  CHECK_FALSE(has_line_with(lines, "cleanup:"));  // a clean cleanup is not a problem
  CHECK(has_line_with(lines, "FAIL  expected-to-fail"));
  CHECK(has_line_with(lines, "fact slept_ms: 100 is not > 200"));
  CHECK(has_line_with(lines, "ERROR load-rxe"));
  CHECK(has_line_with(lines, "hint: install linux-modules-extra"));
  CHECK(lines.back().starts_with("FAIL selftest: 3 passed"));
  CHECK(lines.size() == 7);
}

TEST_CASE("report: terminal shows the warning of a step that passed, and -q keeps it quiet") {
  RunReport r;
  r.file = "lab.yaml";
  r.scenario = "lab";
  auto blk = step(0, "no-roce-out", "block", StepStatus::Passed, 40ms);
  blk.facts = {{"changed", true}};
  blk.hints = {"dropping UDP 4791 on the output hook wedges rxe"};
  // Expected to fail, and failed: its likely causes are what the scenario set up.
  auto blocked = step(1, "blocked", "ping", StepStatus::Passed);
  blocked.expected = blocked.outcome = Outcome::Fail;
  blocked.hints = {"a firewall rule drops it on the way out"};
  auto settle = step(2, "settle", "ping", StepStatus::Flaky);
  settle.attempts = 2;
  settle.hints = {"the first replies waited for ARP"};
  r.steps = {blk, blocked, settle};
  r.preclean.phase = "preclean";
  r.cleanup.phase = "cleanup";

  const auto lines = render(r, {});
  INFO([&] {
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
  }());
  REQUIRE(lines.size() == 8);
  CHECK(lines[1] == "  ok    no-roce-out           block     0.04s  changed=true");
  CHECK(lines[2] == "        hint: dropping UDP 4791 on the output hook wedges rxe");
  CHECK(lines[3] == "  ok    blocked               ping      0.10s  fail, as expected");
  CHECK(lines[4] == "  FLAKY settle                ping      0.10s  passed on attempt 2");
  CHECK(lines[5] == "        hint: the first replies waited for ARP");
  CHECK_FALSE(has_line_with(lines, "firewall"));
  CHECK(lines[7] == "PASS lab: 3 passed (1 flaky) in 0.00s (exit 0)");

  const auto colored = render(r, {.color = true});
  CHECK(has_line_with(colored, "        \x1b[33mhint: \x1b[0mdropping UDP 4791"));

  const auto quiet = render(r, {.verbosity = Verbosity::Quiet});
  CHECK_FALSE(has_line_with(quiet, "hint:"));
  CHECK_FALSE(has_line_with(quiet, "no-roce-out"));
  CHECK(quiet.size() == 1);
}

TEST_CASE("report: terminal verbose adds running lines, every undo and every fact") {
  auto run = sample_run();
  run.steps[2].netns = "lab";
  const auto lines = render(run, {.verbosity = Verbosity::Verbose});
  CHECK(has_line_with(lines, "  the runner checks itself"));
  CHECK(has_line_with(lines, "running nap (sleep)..."));
  CHECK(has_line_with(lines, "cleanup: undoing 2 changes"));
  CHECK(has_line_with(lines, "  undo  delete veth vA", "(step veth-2)"));
  CHECK(has_line_with(lines, "  undo  delete netns lab"));
  // All facts, zero counters included, under the step.
  CHECK(has_line_with(lines, "facts: received=2 sent=2 vB.rx_errors=0 vB.tx_packets=4"));
  CHECK(has_line_with(lines, "settle", "netns=lab"));

  const auto normal = render(run, {});
  CHECK_FALSE(has_line_with(normal, "undo  delete"));
  CHECK_FALSE(has_line_with(normal, "running"));
  CHECK_FALSE(has_line_with(normal, "vB.rx_errors"));
}

TEST_CASE("report: terminal key facts: own facts first, counters only when they moved") {
  RunReport r = sample_run();
  r.steps.resize(1);
  r.steps[0].facts = {{"a.zero", 0}, {"b.moved", 5}, {"z_own", "x y"}, {"nested", {{"k", 1}}}, {"empty", ""}};
  const auto lines = render(r, {});
  REQUIRE(lines.size() > 1);
  CHECK(lines[1].ends_with("0.10s  empty=\"\"  nested={\"k\":1}  z_own=\"x y\"  b.moved=5"));
}

TEST_CASE("report: terminal step line stays within 100 columns") {
  RunReport r = sample_run();
  auto& s = r.steps[0];
  s.facts = nlohmann::json::object();
  for (int i = 0; i < 10; ++i) s.facts[fmt::format("fact_{}", i)] = std::string(30, 'x');
  const auto lines = render(r, {});
  REQUIRE(lines.size() > 1);
  CHECK(columns(lines[1]) <= 100);
  CHECK(lines[1].ends_with("  fact_0=" + std::string(30, 'x') + "  ..."));
  CHECK(lines[1].find("fact_4") == std::string::npos);  // at most four facts

  s.facts = {{"huge", std::string(300, 'y')}};
  const auto cut = render(r, {});
  CHECK(columns(cut[1]) == 100);
  CHECK(cut[1].ends_with("yyy..."));
}

TEST_CASE("report: terminal dirty cleanup shows the residue at every verbosity") {
  RunReport r = sample_run();
  r.exit_code = 4;
  r.steps.resize(1);
  r.cleanup.undos = {undo("veth-2", "veth", "delete veth vA", false, "Device or resource busy"),
                     undo("netns-1", "netns", "delete netns lab")};
  for (auto v : {Verbosity::Quiet, Verbosity::Normal, Verbosity::Verbose}) {
    CAPTURE(static_cast<int>(v));
    const auto lines = render(r, {.verbosity = v});
    CHECK(has_line_with(lines, "  LEFT  delete veth vA", "Device or resource busy"));
    CHECK(has_line_with(lines, "cleanup: 1 undone, 1 left behind"));
    CHECK(has_line_with(lines, "DIRTY selftest: 1 passed, cleanup left 1 behind in 0.72s (exit 4)"));
    CHECK(has_line_with(lines, "rxerun cleanup scenarios/selftest.yaml"));
  }
}

TEST_CASE("report: terminal preclean only when it did something, kept cleanup") {
  RunReport r = sample_run();
  r.steps.resize(1);
  r.exit_code = 0;
  r.preclean.undos = {undo("veth-2", "veth", "delete veth vA")};
  r.cleanup.kept = true;
  r.cleanup.undos.clear();
  const auto lines = render(r, {});
  CHECK(has_line_with(lines, "preclean: removed 1 leftover of an earlier run"));
  CHECK(has_line_with(lines, "cleanup: skipped (--keep), the lab is still up"));
  CHECK(has_line_with(lines, "PASS selftest: 1 passed, lab kept in 0.72s (exit 0)"));
  CHECK(has_line_with(lines, "`rxerun cleanup scenarios/selftest.yaml` removes the lab"));

  const auto quiet = render(r, {.verbosity = Verbosity::Quiet});
  CHECK(quiet.size() == 1);  // only the summary
}

TEST_CASE("report: terminal interrupted run") {
  RunReport r = sample_run();
  r.interrupted = true;
  r.exit_code = 130;
  r.steps.resize(2);
  r.steps[1].status = StepStatus::Interrupted;
  r.steps[1].message = "stopped by SIGINT";
  r.steps.push_back(step(2, "never", "ping", StepStatus::NotRun));
  const auto lines = render(r, {});
  CHECK(has_line_with(lines, "  INTR  must-time-out", "interrupted"));
  CHECK(has_line_with(lines, "        stopped by SIGINT"));
  CHECK(has_line_with(lines, "interrupted: cleaning up"));  // the runner's note
  CHECK(has_line_with(lines, "interrupted: 1 step not run, cleanup ran"));
  CHECK(lines.back() == "INTERRUPTED selftest: 1 passed, 1 interrupted, 1 not run in 0.72s (exit 130)");

  const auto quiet = render(r, {.verbosity = Verbosity::Quiet});
  CHECK(has_line_with(quiet, "INTR  must-time-out"));
  CHECK(has_line_with(quiet, "interrupted: cleaning up"));
}

TEST_CASE("report: terminal neutralises control characters and keeps non-ASCII") {
  RunReport r = sample_run();
  r.steps.resize(1);
  r.steps[0].status = StepStatus::Failed;
  r.steps[0].name = "evil\x1b[2Jname\nnext";
  r.steps[0].facts = {{"out",
                       "a\x07"
                       "b\xff"},
                      {"名前", "значение"}};
  r.steps[0].failures = {"line one\nline two\r\n"};
  r.steps[0].message = "tool said \x1b]0;title\x07";
  const auto text = [&] {
    Capture cap;
    TerminalReporter rep(cap.file(), {.color = false});
    replay(rep, r);
    return cap.text();
  }();
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find("evil\\x1b[2Jname\\nnext") != std::string::npos);
  CHECK(text.find("out=a\\x07b\\xff") != std::string::npos);
  CHECK(text.find("名前=значение") != std::string::npos);
  CHECK(text.find("\n        line one\n        line two\n") != std::string::npos);
  CHECK(text.find("tool said \\x1b]0;title\\x07") != std::string::npos);
}

TEST_CASE("report: terminal aligns wide characters by columns, not bytes") {
  RunReport r = sample_run();
  r.steps.resize(2);
  r.steps[0].name = "检查";  // 4 columns, 6 bytes
  r.steps[1].name = "ok12";  // 4 columns
  const auto lines = render(r, {});
  REQUIRE(lines.size() > 2);
  CHECK(lines[1].find("sleep") - lines[1].find("检查") - 6 == lines[2].find("sleep") - lines[2].find("ok12") - 4);
}

TEST_CASE("report: MultiReporter forwards every call to every reporter") {
  Capture a, b;
  TerminalReporter ra(a.file(), {.verbosity = Verbosity::Verbose});
  TerminalReporter rb(b.file(), {.verbosity = Verbosity::Verbose});
  MultiReporter multi;
  multi.add(ra);
  multi.add(rb);
  replay(multi, sample_run());
  CHECK_FALSE(a.text().empty());
  CHECK(a.text() == b.text());
  Capture direct;
  TerminalReporter rd(direct.file(), {.verbosity = Verbosity::Verbose});
  replay(rd, sample_run());
  CHECK(direct.text() == a.text());
}

TEST_CASE("report: CleanupReport::clean") {
  CleanupReport c;
  CHECK(c.clean());
  c.undos = {undo("a", "veth", "delete veth vA")};
  CHECK(c.clean());
  c.undos.push_back(undo("b", "netns", "delete netns lab", false, "busy"));
  CHECK_FALSE(c.clean());
  CleanupReport kept;
  kept.kept = true;
  CHECK(kept.clean());
}
