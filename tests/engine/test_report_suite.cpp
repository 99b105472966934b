// Reports of several runs: a run report read back from its JSON (how the host
// reads what the lab VM ran), the suite's JSON shape, one JUnit testsuite per
// run named NAME@KERNEL, and the exit code a suite ends with.

#include <chrono>
#include <string>

#include <doctest/doctest.h>

#include "engine/exit_code.h"
#include "engine/report.h"

using namespace rxerun;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

RunReport suite_run(std::string name, std::string kernel, int exit_code) {
  RunReport r;
  r.file = "scenarios/" + name + ".yaml";
  r.scenario = std::move(name);
  r.lab_kernel = std::move(kernel);
  r.started_at = "2026-12-05T10:00:00Z";
  r.duration = 2500ms;
  r.exit_code = exit_code;
  r.host = {{"kernel", "7.3.4+deb13-amd64"}, {"hostname", "lab"}};
  StepReport s;
  s.index = 0;
  s.name = "dev";
  s.kind = "rxe";
  s.netns = "a";
  s.tags = {"rdma"};
  s.status = exit_code == kExitOk ? StepStatus::Passed : StepStatus::Error;
  s.outcome = exit_code == kExitOk ? Outcome::Ok : Outcome::Error;
  s.attempts = 2;
  s.duration = 1250ms;
  s.facts = {{"name", "rxe0"}, {"index", 0}};
  s.failures = {"exit: expected 0, got 1"};
  s.message = "rdma_rxe cannot bind in a namespace";
  s.hints = {"use kernel 7.3"};
  r.steps.push_back(s);
  r.cleanup.phase = "cleanup";
  r.cleanup.undos = {UndoReport{"dev", "rxe", "delete rxe0", false, "busy", 5ms, "", "line 3: {}"}};
  if (!r.lab_kernel.empty()) r.vm = {{"release", "7.3.4+deb13-amd64"}, {"accel", "tcg"}};
  r.kernel_health.policy = KernelHealthPolicy::Warn;
  r.kernel_health.kernel = "7.3.4+deb13-amd64";
  r.kernel_health.findings.push_back({.kind = "WARNING",
                                      .phase = "step",
                                      .step = "dev",
                                      .lines = {"[   12.5] WARNING: CPU: 0 PID: 9 at net/core/dev.c:1 f+0x1/0x2"},
                                      .time = 12.5});
  return r;
}

}  // namespace

TEST_CASE("report: a run read back from its JSON is the run that was written") {
  const RunReport original = suite_run("netns-pair", "7.3", kExitResidue);
  auto back = run_report_from_json(to_json(original));
  REQUIRE(back);
  CHECK(to_json(*back) == to_json(original));
  CHECK(back->lab_kernel == "7.3");
  CHECK(back->steps.at(0).status == StepStatus::Error);
  CHECK(back->steps.at(0).duration == 1250ms);
  CHECK(back->cleanup.undos.at(0).journal_text == "line 3: {}");
  REQUIRE(back->kernel_health.findings.size() == 1);  // what the lab VM's guest found comes back
  CHECK(back->kernel_health.findings[0].step == "dev");
  CHECK(back->kernel_health.policy == KernelHealthPolicy::Warn);
  CHECK(run_label(*back) == "netns-pair@7.3");
}

TEST_CASE("report: reading back names the key that is wrong") {
  json j = to_json(suite_run("x", "", kExitOk));
  j["steps"][0]["status"] = "sideways";
  auto bad_status = run_report_from_json(j);
  REQUIRE_FALSE(bad_status);
  CHECK(bad_status.error().message.find("'status' is 'sideways'") != std::string::npos);
  j = to_json(suite_run("x", "", kExitOk));
  j["exit_code"] = "zero";
  auto bad_code = run_report_from_json(j);
  REQUIRE_FALSE(bad_code);
  CHECK(bad_code.error().message.find("'exit_code'") != std::string::npos);
  j.erase("scenario");
  CHECK_FALSE(run_report_from_json(j));
  CHECK_FALSE(run_reports_from_json(json::array()));
}

TEST_CASE("report: a suite's JSON holds every run and counts their verdicts") {
  SuiteReport suite;
  suite.suite = true;
  suite.runs = {suite_run("a", "6.1", kExitEnvironment), suite_run("a", "7.3", kExitOk),
                suite_run("b", "6.1", kExitFailed)};
  RunReport left_out = suite_run("b", "7.3", kExitOk);
  left_out.steps.clear();
  left_out.not_run = true;
  left_out.error = "not run: --fail-fast stopped the suite";
  suite.runs.push_back(left_out);
  suite.exit_code = kExitEnvironment;
  const json j = to_json(suite);
  CHECK(j["exit_code"] == 3);
  CHECK(j["runs"].size() == 4);
  CHECK(j["summary"]["runs"] == 4);
  CHECK(j["summary"]["passed"] == 1);
  CHECK(j["summary"]["errors"] == 1);
  CHECK(j["summary"]["failed"] == 1);
  CHECK(j["summary"]["not_run"] == 1);
  CHECK(j["runs"][3]["not_run"] == true);
  CHECK(j["runs"][0]["kernel"] == "6.1");
  auto back = run_reports_from_json(j);
  REQUIRE(back);
  REQUIRE(back->size() == 4);
  CHECK(run_label(back->at(2)) == "b@6.1");
  CHECK(back->at(3).not_run);
  CHECK(run_verdict(back->at(3)) == "not-run");
  CHECK(run_verdict(back->at(0)) == "error");
}

TEST_CASE("report: junit of a suite has one testsuite per run and kernel") {
  RunReport left_out = suite_run("b", "7.3", kExitOk);
  left_out.steps.clear();
  left_out.not_run = true;
  left_out.error = "not run: --fail-fast stopped the suite";
  RunReport no_boot = suite_run("c", "6.1", kExitEnvironment);
  no_boot.steps.clear();
  no_boot.cleanup.undos.clear();
  no_boot.error = "the lab VM did not boot (kernel 6.1): no start marker";
  const std::string xml = to_junit_xml({suite_run("a", "6.1", kExitOk), left_out, no_boot});
  CHECK(xml.find("<testsuite name=\"a@6.1\"") != std::string::npos);
  CHECK(xml.find("<testsuite name=\"b@7.3\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\"") !=
        std::string::npos);
  CHECK(xml.find("<testsuite name=\"c@6.1\" tests=\"1\" failures=\"0\" errors=\"1\"") != std::string::npos);
  CHECK(xml.find("the lab VM did not boot") != std::string::npos);
  CHECK(xml.find("<property name=\"kernel\" value=\"6.1\"/>") != std::string::npos);
  CHECK(xml.find("<property name=\"vm.accel\" value=\"tcg\"/>") != std::string::npos);
  // The root counts add up the three suites: a@6.1 has its step, cleanup and
  // the kernel health case (a warning: no failure; its cleanup failed), the
  // others one case each.
  CHECK(xml.find("<testsuites name=\"rxerun\" tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"1\"") !=
        std::string::npos);
}

TEST_CASE("report: a host run keeps its plain name") {
  CHECK(run_label(suite_run("selftest", "", kExitOk)) == "selftest");
  const std::string xml = to_junit_xml(suite_run("selftest", "", kExitOk));
  CHECK(xml.find("<testsuite name=\"selftest\"") != std::string::npos);
}

TEST_CASE("exit code: a suite's is the worst by the documented precedence") {
  CHECK(worse_exit_code(kExitOk, kExitFailed) == kExitFailed);
  CHECK(worse_exit_code(kExitFailed, kExitResidue) == kExitResidue);
  CHECK(worse_exit_code(kExitResidue, kExitFailed) == kExitResidue);
  CHECK(worse_exit_code(kExitResidue, kExitEnvironment) == kExitEnvironment);
  CHECK(worse_exit_code(kExitEnvironment, kExitUsage) == kExitUsage);
  CHECK(worse_exit_code(kExitInterrupted, kExitUsage) == kExitInterrupted);
  CHECK(worse_exit_code(kExitOk, kExitOk) == kExitOk);
  CHECK(worse_exit_code(kExitOk, 137) == 137);
  CHECK(worse_exit_code(kExitEnvironment, 137) == kExitEnvironment);
}
