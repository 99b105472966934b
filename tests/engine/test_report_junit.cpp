// to_junit_xml: structure and escaping, checked as text. Whether a real JUnit
// reader accepts the file is test_report_junit_parse.cpp's job.

#include <string>
#include <string_view>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "engine/report.h"

using namespace rxerun;
using namespace std::chrono_literals;

namespace {

std::size_t count(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string_view::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

// The <testcase ...>...</testcase> (or self-closed) element whose name is `name`.
std::string testcase(const std::string& xml, std::string_view name) {
  const auto at = xml.find(fmt::format("name=\"{}\"", name));
  if (at == std::string::npos) return "";
  const auto start = xml.rfind("<testcase", at);
  const auto tag_end = xml.find('>', at);
  if (xml[tag_end - 1] == '/') return xml.substr(start, tag_end + 1 - start);
  const auto end = xml.find("</testcase>", at);
  return xml.substr(start, end + 11 - start);
}

StepReport junit_step(int index, std::string name, StepStatus status) {
  StepReport s;
  s.index = index;
  s.name = std::move(name);
  s.kind = "sleep";
  s.status = status;
  s.attempts = 1;
  s.duration = 1234ms;
  return s;
}

RunReport junit_run() {
  RunReport r;
  r.file = "scenarios/selftest.yaml";
  r.scenario = "selftest";
  r.started_at = "2024-05-01T10:00:00Z";
  r.duration = 2500ms;
  r.exit_code = 1;
  r.host = {{"hostname", "lab1"}, {"kernel", "6.1.0"}};
  auto ok = junit_step(0, "nap", StepStatus::Passed);
  ok.facts = {{"slept_ms", 100}, {"note", "fine"}};
  auto flaky = junit_step(1, "settle", StepStatus::Flaky);
  flaky.attempts = 3;
  auto failed = junit_step(2, "expected-to-fail", StepStatus::Failed);
  failed.expected = Outcome::Fail;
  failed.failures = {"expected fail, got ok", "fact slept_ms: 100 is not > 200"};
  failed.hints = {"check the fault"};
  auto error = junit_step(3, "load", StepStatus::Error);
  error.message = "modprobe rdma_rxe: Module not found";
  auto skipped = junit_step(4, "slow", StepStatus::Skipped);
  skipped.tags = {"slow"};
  auto not_run = junit_step(5, "later", StepStatus::NotRun);
  auto interrupted = junit_step(6, "long", StepStatus::Interrupted);
  r.steps = {ok, flaky, failed, error, skipped, not_run, interrupted};
  r.cleanup.phase = "cleanup";
  r.cleanup.undos = {UndoReport{"veth-1", "veth", "delete veth vA", true, "", 10ms}};
  return r;
}

}  // namespace

TEST_CASE("report: junit suite header counts every testcase") {
  const std::string xml = to_junit_xml(junit_run());
  CHECK(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
  CHECK(count(xml, "<testsuite ") == 1);
  CHECK(count(xml, "<testcase ") == 8);  // 7 steps + cleanup
  CHECK(xml.find("<testsuite name=\"selftest\" tests=\"8\" failures=\"1\" errors=\"2\" skipped=\"2\" time=\"2.500\" "
                 "timestamp=\"2024-05-01T10:00:00Z\" hostname=\"lab1\">") != std::string::npos);
  CHECK(xml.find("<property name=\"host.kernel\" value=\"6.1.0\"/>") != std::string::npos);
  CHECK(xml.find("<property name=\"exit_code\" value=\"1\"/>") != std::string::npos);
  CHECK(xml.ends_with("</testsuite>\n</testsuites>\n"));
}

TEST_CASE("report: junit one testcase per step, by status") {
  const std::string xml = to_junit_xml(junit_run());
  const auto ok = testcase(xml, "nap (sleep)");
  CHECK(ok.find("classname=\"rxerun.selftest\"") != std::string::npos);
  CHECK(ok.find("time=\"1.234\"") != std::string::npos);
  CHECK(ok.find("<system-out>slept_ms=100\nnote=fine\n</system-out>") == std::string::npos);  // facts are sorted
  CHECK(ok.find("<system-out>note=fine\nslept_ms=100\n</system-out>") != std::string::npos);
  CHECK(ok.find("<failure") == std::string::npos);

  const auto flaky = testcase(xml, "settle (sleep)");
  CHECK(flaky.find("<system-out>flaky: passed on attempt 3\n") != std::string::npos);
  CHECK(flaky.find("<failure") == std::string::npos);
  CHECK(flaky.find("<skipped") == std::string::npos);

  const auto failed = testcase(xml, "expected-to-fail (sleep)");
  CHECK(failed.find("<failure message=\"expected fail, got ok\" type=\"expectation\">expected fail, got ok\nfact "
                    "slept_ms: 100 is not &gt; 200\nhint: check the fault\n</failure>") != std::string::npos);

  const auto error = testcase(xml, "load (sleep)");
  CHECK(error.find("<error message=\"modprobe rdma_rxe: Module not found\" type=\"error\">") != std::string::npos);

  CHECK(testcase(xml, "slow (sleep)").find("<skipped message=\"left out by --only/--skip (tags: slow)\"/>") !=
        std::string::npos);
  CHECK(testcase(xml, "later (sleep)").find("<skipped message=\"not run:") != std::string::npos);
  CHECK(testcase(xml, "long (sleep)").find("<error message=\"interrupted while it ran\" type=\"interrupted\"/>") !=
        std::string::npos);

  const auto cleanup = testcase(xml, "cleanup");
  CHECK(cleanup.find("time=\"0.010\"") != std::string::npos);
  CHECK(cleanup.find("<failure") == std::string::npos);
  CHECK(cleanup.find("undone: delete veth vA (step veth-1)") != std::string::npos);
  CHECK(testcase(xml, "preclean").empty());  // it did nothing
}

TEST_CASE("report: junit dirty cleanup is a failure, kept cleanup is skipped") {
  RunReport r = junit_run();
  r.exit_code = 4;
  r.preclean.phase = "preclean";
  r.preclean.undos = {UndoReport{"veth-1", "veth", "delete veth vA", true, "", 5ms}};
  r.cleanup.undos = {UndoReport{"veth-1", "veth", "delete veth vA", false, "Device or resource busy", 10ms},
                     UndoReport{"netns-0", "netns", "delete netns lab", false, "", 10ms},
                     UndoReport{"x", "sysctl", "restore net.ipv4.x", true, "", 10ms}};
  std::string xml = to_junit_xml(r);
  CHECK(xml.find("tests=\"9\" failures=\"2\" errors=\"2\" skipped=\"2\"") != std::string::npos);
  const auto cleanup = testcase(xml, "cleanup");
  CHECK(cleanup.find("<failure message=\"cleanup left 2 changes behind on the host\" type=\"cleanup\">") !=
        std::string::npos);
  CHECK(cleanup.find("left behind: delete veth vA (step veth-1): Device or resource busy\n") != std::string::npos);
  CHECK(cleanup.find("left behind: delete netns lab (step netns-0): failed\n") != std::string::npos);
  CHECK(cleanup.find("rxerun cleanup scenarios/selftest.yaml") != std::string::npos);
  CHECK(cleanup.find("undone: restore net.ipv4.x") != std::string::npos);
  const auto preclean = testcase(xml, "preclean");
  CHECK_FALSE(preclean.empty());
  CHECK(preclean.find("<failure") == std::string::npos);

  r.cleanup.kept = true;
  r.cleanup.undos.clear();
  xml = to_junit_xml(r);
  CHECK(testcase(xml, "cleanup").find("<skipped message=\"kept (--keep)") != std::string::npos);
  CHECK(xml.find("tests=\"9\" failures=\"1\" errors=\"2\" skipped=\"3\"") != std::string::npos);
}

TEST_CASE("report: junit escapes metacharacters and drops what XML forbids") {
  RunReport r = junit_run();
  r.scenario = "s<&>\"'";
  r.steps.resize(3);
  r.steps[0].name = "a&b <c> \"d\" 'e'";
  r.steps[0].facts = {{"out", "x\x01y\x1b[0mz\x7f"}, {"cr", "a\rb"}, {"bad", "\xff\xc3("}, {"ok", "ünï 检查 🙂"}};
  r.steps[1].name = "multi\nline\ttab";
  r.steps[2].failures = {"line1\nline2 ]]> <tag>", std::string("nul\0here", 8)};
  r.steps[2].message = "tab\there";
  const std::string xml = to_junit_xml(r);

  CHECK(xml.find("<testsuite name=\"s&lt;&amp;&gt;&quot;&apos;\"") != std::string::npos);
  CHECK(xml.find("classname=\"rxerun.s&lt;&amp;&gt;&quot;&apos;\"") != std::string::npos);
  CHECK(xml.find("name=\"a&amp;b &lt;c&gt; &quot;d&quot; &apos;e&apos; (sleep)\"") != std::string::npos);
  CHECK(xml.find("out=x\\x01y\\x1b[0mz\x7f\n") != std::string::npos);  // DEL is legal XML 1.0
  CHECK(xml.find("cr=a&#13;b\n") != std::string::npos);
  CHECK(xml.find("bad=\\xff\\xc3(\n") != std::string::npos);
  CHECK(xml.find("ok=ünï 检查 🙂\n") != std::string::npos);
  CHECK(xml.find("line1\nline2 ]]&gt; &lt;tag&gt;\nnul\\x00here\ntab\there\n") != std::string::npos);
  // In an attribute a newline must stay a reference, or readers turn it into a space.
  CHECK(xml.find("name=\"multi&#10;line&#9;tab (sleep)\"") != std::string::npos);
  CHECK(xml.find("message=\"line1\"") != std::string::npos);

  for (unsigned char c : xml) {
    CAPTURE(static_cast<int>(c));
    CHECK((c >= 0x20 || c == '\n' || c == '\t'));
  }
}
