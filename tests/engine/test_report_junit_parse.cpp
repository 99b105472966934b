// The JUnit file as a CI system reads it: to_junit_xml output is parsed by
// tests/tools/junit_check.py (python3-junitparser), which checks that the XML
// is well-formed, that declared counts match the testcases, and the cases we
// expect. A negative case proves that the checker can fail.

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "engine/report.h"

using namespace rxerun;
using namespace std::chrono_literals;

namespace {

// A temporary file, removed at the end of the test.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& content) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rxerun-junit-XXXXXX.xml").string();
    const int fd = mkstemps(tmpl.data(), 4);
    REQUIRE(fd >= 0);
    close(fd);
    path = tmpl;
    std::ofstream(path, std::ios::binary) << content;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs the checker on `xml`; its exit status. `expect_failure` silences the
// checker's complaints, which are the point of a negative test.
int check_junit(const std::string& xml, const std::vector<std::string>& args, bool expect_failure = false) {
  TempFile file(xml);
  std::string cmd = fmt::format("/usr/bin/python3 {} {}", shell_quote(RXERUN_SOURCE_DIR "/tests/tools/junit_check.py"),
                                shell_quote(file.path));
  for (const auto& a : args) cmd += " " + shell_quote(a);
  if (expect_failure) cmd += " 2>/dev/null";
  const int status = std::system(cmd.c_str());
  REQUIRE(status != -1);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::vector<std::string> counts(int tests, int failures, int errors, int skipped) {
  return {"--expect-tests",  std::to_string(tests),  "--expect-failures", std::to_string(failures),
          "--expect-errors", std::to_string(errors), "--expect-skipped",  std::to_string(skipped)};
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

StepReport parse_step(int index, std::string name, StepStatus status) {
  StepReport s;
  s.index = index;
  s.name = std::move(name);
  s.kind = "sleep";
  s.status = status;
  s.attempts = 1;
  s.duration = 100ms;
  return s;
}

RunReport every_status() {
  RunReport r;
  r.file = "scenarios/selftest.yaml";
  r.scenario = "selftest";
  r.started_at = "2024-05-01T10:00:00Z";
  r.duration = 900ms;
  r.exit_code = 1;
  r.host = {{"hostname", "lab1"}, {"kernel", "6.1.0"}};
  auto ok = parse_step(0, "nap", StepStatus::Passed);
  ok.facts = {{"slept_ms", 100}};
  auto flaky = parse_step(1, "settle", StepStatus::Flaky);
  flaky.attempts = 2;
  auto failed = parse_step(2, "expected-to-fail", StepStatus::Failed);
  failed.failures = {"expected fail, got ok"};
  auto error = parse_step(3, "load", StepStatus::Error);
  error.message = "Operation not permitted";
  auto skipped = parse_step(4, "slow", StepStatus::Skipped);
  auto not_run = parse_step(5, "later", StepStatus::NotRun);
  auto interrupted = parse_step(6, "long", StepStatus::Interrupted);
  r.steps = {ok, flaky, failed, error, skipped, not_run, interrupted};
  r.cleanup.phase = "cleanup";
  r.cleanup.undos = {UndoReport{"nap", "veth", "delete veth vA", true, "", 1ms}};
  return r;
}

const std::string kNastyName = "a&b <c> \"d\" 'e' ünï 检查\nsecond line";

RunReport nasty_and_dirty() {
  RunReport r = every_status();
  r.exit_code = 4;
  r.scenario = "<&>\"'\x01\x1b";
  r.description = "tab\tcr\rnul" + std::string(1, '\0') + "end";
  r.host["weird"] = "\x02\xff\xfe";
  r.steps[2].name = kNastyName;
  r.steps[2].failures = {"]]> <![CDATA[ x ]]>", "\x0b\x0c vertical", "\xed\xa0\x80 surrogate", "\xef\xbf\xbe U+FFFE"};
  r.steps[2].message = "<script>alert('x')</script>";
  r.steps[0].facts = {{"ctl", std::string("\0\x01\x1f", 3)}, {"emoji", "🙂"}, {"amp&<", "&amp;"}};
  r.preclean.phase = "preclean";
  r.preclean.undos = {UndoReport{"old", "veth", "delete veth vOld", false, "Device or resource busy", 1ms}};
  r.cleanup.undos = {UndoReport{"nap", "veth", "delete veth vA", false, "busy & <locked>", 1ms},
                     UndoReport{"nap", "netns", "delete netns lab", true, "", 1ms}};
  return r;
}

}  // namespace

TEST_CASE("report: junit file of every status parses with the expected counts") {
  const auto xml = to_junit_xml(every_status());
  // 7 steps + cleanup; failed; error + interrupted; skipped + not run.
  // clang-format off
  const std::vector<std::string> cases = {
      "--expect-failure-case", "expected-to-fail (sleep)",
      "--expect-error-case", "load (sleep)",
      "--expect-error-case", "long (sleep)",
      "--expect-skipped-case", "slow (sleep)",
      "--expect-skipped-case", "later (sleep)",
      "--expect-case", "settle (sleep)",
      "--expect-case", "cleanup",
  };
  // clang-format on
  CHECK(check_junit(xml, counts(8, 1, 2, 2) + cases) == 0);
}

TEST_CASE("report: junit file with nasty strings and a dirty cleanup parses, residue is a failure") {
  const auto xml = to_junit_xml(nasty_and_dirty());
  // + preclean; failures: the step, preclean and cleanup.
  // The name survives the round trip: & < > " ' newline and non-ASCII.
  const std::vector<std::string> cases = {"--expect-failure-case", kNastyName + " (sleep)",  //
                                          "--expect-failure-case", "cleanup",                //
                                          "--expect-failure-case", "preclean"};
  CHECK(check_junit(xml, counts(9, 3, 2, 2) + cases) == 0);
}

TEST_CASE("report: junit file of a kept run and of an empty run parse") {
  RunReport kept = every_status();
  kept.steps.resize(1);
  kept.exit_code = 0;
  kept.cleanup.kept = true;
  kept.cleanup.undos.clear();
  CHECK(check_junit(to_junit_xml(kept),
                    counts(2, 0, 0, 1) + std::vector<std::string>{"--expect-skipped-case", "cleanup"}) == 0);

  RunReport empty;  // nothing filled in: still a valid file
  CHECK(check_junit(to_junit_xml(empty), counts(1, 0, 0, 0)) == 0);
}

TEST_CASE("report: junit checker fails on malformed files and on wrong expectations") {
  const auto xml = to_junit_xml(every_status());
  // Truncated: not well-formed.
  CHECK(check_junit(xml.substr(0, xml.size() / 2), counts(8, 1, 2, 2), true) == 1);
  // A raw control character, which XML 1.0 forbids.
  std::string with_control = xml;
  with_control.insert(with_control.find("nap (sleep)"), "\x01");
  CHECK(check_junit(with_control, counts(8, 1, 2, 2), true) == 1);
  // A bare ampersand.
  std::string with_amp = xml;
  with_amp.insert(with_amp.find("nap (sleep)"), "&");
  CHECK(check_junit(with_amp, counts(8, 1, 2, 2), true) == 1);
  // Declared counts that disagree with the testcases.
  std::string lying = xml;
  const auto at = lying.find("failures=\"1\"", lying.find("<testsuite "));
  REQUIRE(at != std::string::npos);
  lying.replace(at, 12, "failures=\"0\"");
  CHECK(check_junit(lying, counts(8, 1, 2, 2), true) == 1);
  // Well-formed, but not what was expected.
  CHECK(check_junit(xml, counts(8, 0, 2, 2), true) == 1);
  CHECK(check_junit(xml, counts(8, 1, 2, 2) + std::vector<std::string>{"--expect-failure-case", "nap (sleep)"}, true) ==
        1);
  CHECK(check_junit(xml, counts(8, 1, 2, 2) + std::vector<std::string>{"--expect-case", "no such case"}, true) == 1);
}
