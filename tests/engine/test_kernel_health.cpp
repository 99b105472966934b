// Kernel health in the runner: the kernel's reports of the run's own time
// window, placed in the step (or preclean, cleanup) they appeared during,
// and what they do to the exit code and the reports.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/exit_code.h"
#include "engine/kernel_health.h"
#include "engine/runner.h"
#include "fakes/fake_system.h"
#include "fakes/harness.h"

using namespace rxerun;

namespace {

const char* kRxeWarning = R"(------------[ cut here ]------------
WARNING: CPU: 0 PID: 412 at drivers/infiniband/sw/rxe/rxe_qp.c:798 rxe_qp_do_cleanup+0x1e5/0x200 [rdma_rxe]
Modules linked in: rdma_rxe ip6_udp_tunnel udp_tunnel ib_core
Call Trace:
 <TASK>
 process_one_work+0x1c4/0x380
 </TASK>
---[ end trace 0000000000000000 ]---)";

const char* kThreeNaps = R"(
steps:
  - {name: nap, sleep: {duration: 100ms}}
  - {name: rping, sleep: {duration: 100ms}}
  - {name: after, sleep: {duration: 100ms}}
)";

// Logs `text` into the fake kernel log during the `nth` wait (1-based) of the run.
void log_during_wait(fakes::WorldHarness& h, int nth, std::string text, int facility = 0) {
  auto count = std::make_shared<int>(0);
  h.fake.clock.on_wait = [&h, count, nth, text, facility] {
    if (++*count == nth) h.fake.kernel_log.log(text, facility);
  };
}

}  // namespace

TEST_CASE("kernel health: a WARNING during a step is that step's, and fails the run") {
  fakes::WorldHarness h;
  log_during_wait(h, 2, kRxeWarning);
  auto r = h.run(kThreeNaps);
  CHECK(r.exit_code == kExitFailed);
  for (const auto& s : r.steps) CHECK(s.status == StepStatus::Passed);
  const auto& kh = r.kernel_health;
  CHECK(kh.policy == KernelHealthPolicy::Fail);
  CHECK(kh.kernel == "6.1.0-test-amd64");
  REQUIRE(kh.findings.size() == 1);
  CHECK(kh.findings[0].kind == "WARNING");
  CHECK(kh.findings[0].phase == "step");
  CHECK(kh.findings[0].step == "rping");
  CHECK(kh.findings[0].where() == "during step 'rping'");
  CHECK(kh.findings[0].lines.size() == 7);
  CHECK(kh.findings[0].lines.front().find("WARNING: CPU: 0 PID: 412 at drivers/infiniband/sw/rxe") !=
        std::string::npos);
}

TEST_CASE("kernel health: what was logged before the run is not read") {
  fakes::WorldHarness h;
  h.fake.kernel_log.log(kRxeWarning);  // at the fake clock's start, before the run
  h.fake.clock.advance(std::chrono::seconds(1));
  auto r = h.run(kThreeNaps);
  CHECK(r.exit_code == kExitOk);
  CHECK(r.kernel_health.findings.empty());
  CHECK(h.fake.kernel_log.reads == 1);
}

TEST_CASE("kernel health: a WARNING a program wrote to /dev/kmsg is no finding") {
  fakes::WorldHarness h;
  log_during_wait(h, 1, "WARNING: CPU: 0 PID: 1 at fake/file.c:1 fake+0x0/0x0", 1);
  auto r = h.run(kThreeNaps);
  CHECK(r.exit_code == kExitOk);
  CHECK(r.kernel_health.findings.empty());
}

TEST_CASE("kernel health: warn shows the findings and keeps the exit code") {
  fakes::WorldHarness h;
  log_during_wait(h, 3, "BUG: scheduling while atomic: rping/412/0x00000002");
  auto r = h.run("kernel_health: warn\n" + std::string(kThreeNaps));
  CHECK(r.exit_code == kExitOk);
  CHECK(r.kernel_health.policy == KernelHealthPolicy::Warn);
  REQUIRE(r.kernel_health.findings.size() == 1);
  CHECK(r.kernel_health.findings[0].kind == "BUG");
  CHECK(r.kernel_health.findings[0].step == "after");
}

TEST_CASE("kernel health: off reads nothing, and the option wins over the scenario") {
  fakes::WorldHarness h;
  log_during_wait(h, 1, kRxeWarning);
  auto off = h.run("kernel_health: off\n" + std::string(kThreeNaps));
  CHECK(off.exit_code == kExitOk);
  CHECK(off.kernel_health.policy == KernelHealthPolicy::Off);
  CHECK(h.fake.kernel_log.reads == 0);

  fakes::WorldHarness h2;
  log_during_wait(h2, 1, kRxeWarning);
  RunOptions o;
  o.kernel_health = KernelHealthPolicy::Fail;
  auto forced = h2.run("kernel_health: off\n" + std::string(kThreeNaps), o);
  CHECK(forced.exit_code == kExitFailed);
  REQUIRE(forced.kernel_health.findings.size() == 1);
  CHECK(forced.kernel_health.findings[0].step == "nap");
}

TEST_CASE("kernel health: a failed expectation and residue keep their exit codes") {
  fakes::WorldHarness h;
  h.world.fail_undo.insert("a");
  log_during_wait(h, 1, kRxeWarning);
  auto r = h.run("steps:\n  - change: {id: a}\n  - {name: nap, sleep: {duration: 100ms}}\n");
  CHECK(r.exit_code == kExitResidue);  // residue wins, as over a failed expectation
  CHECK(r.kernel_health.findings.size() == 1);
}

TEST_CASE("kernel health: reports placed in preclean, steps and cleanup") {
  std::vector<KernelWindow> windows = {
      {"preclean", "", 100, 200}, {"step", "a", 200, 300}, {"step", "b", 310, 400}, {"cleanup", "", 400, 500}};
  auto at = [](std::uint64_t usec) {
    return sys::KernelReport{sys::KernelReportKind::Oops, usec, {"Oops: 0000 [#1] SMP"}};
  };
  auto f = place_kernel_reports({at(150), at(250), at(305), at(450), at(900), at(50)}, windows);
  REQUIRE(f.size() == 6);
  CHECK(f[0].where() == "during preclean");
  CHECK(f[1].where() == "during step 'a'");
  CHECK(f[2].where() == "during step 'a'");  // between two steps: the one before
  CHECK(f[3].where() == "during cleanup");
  CHECK(f[4].where() == "during cleanup");
  CHECK(f[5].where() == "during preclean");
  CHECK(f[0].kind == "Oops");
  CHECK(f[0].time == doctest::Approx(0.00015));
  CHECK(place_kernel_reports({at(1)}, {})[0].where() == "during the run");
}

TEST_CASE("kernel health: the key takes fail, warn or off, with FILE:LINE:COL otherwise") {
  fakes::WorldHarness h;
  CHECK(h.load("kernel_health: warn\nsteps:\n  - {sleep: {duration: 1ms}}\n").kernel_health ==
        KernelHealthPolicy::Warn);
  CHECK(h.load("steps:\n  - {sleep: {duration: 1ms}}\n").kernel_health == KernelHealthPolicy::Fail);
  CHECK(h.diagnostics("kernel_health: wran\nsteps:\n  - {sleep: {duration: 1ms}}\n") ==
        "test.yaml:1:16: 'kernel_health' must be fail, warn or off, got 'wran' (did you mean 'warn'?)\n");
  CHECK(h.diagnostics("kernel_health: [fail]\nsteps:\n  - {sleep: {duration: 1ms}}\n") ==
        "test.yaml:1:16: 'kernel_health' must be a string, got a list\n");
  CHECK(h.diagnostics("kernel_heath: off\nsteps:\n  - {sleep: {duration: 1ms}}\n")
            .find("did you mean "
                  "'kernel_health'?") != std::string::npos);
}

TEST_CASE("kernel health: the terminal, JSON and JUnit reports show the finding") {
  RunReport r;
  r.scenario = "lab";
  r.file = "lab.yaml";
  r.kernel_health.kernel = "6.1.0-27-amd64";
  r.kernel_health.findings.push_back({.kind = "WARNING",
                                      .phase = "step",
                                      .step = "rping",
                                      .lines = {"[  100.001000] WARNING: CPU: 0 PID: 412 at x.c:1 f+0x1/0x2",
                                                "[  100.002000] ---[ end trace 0000000000000000 ]---"},
                                      .time = 100.001});
  r.exit_code = 1;

  const std::string text = kernel_health_text(r.kernel_health, {});
  CHECK(text ==
        "kernel health: WARNING during step 'rping' (kernel 6.1.0-27-amd64):\n"
        "    [  100.001000] WARNING: CPU: 0 PID: 412 at x.c:1 f+0x1/0x2\n"
        "    [  100.002000] ---[ end trace 0000000000000000 ]---\n");

  auto j = to_json(r);
  CHECK(j["kernel_health"]["policy"] == "fail");
  CHECK(j["kernel_health"]["kernel"] == "6.1.0-27-amd64");
  REQUIRE(j["kernel_health"]["findings"].size() == 1);
  CHECK(j["kernel_health"]["findings"][0]["kind"] == "WARNING");
  CHECK(j["kernel_health"]["findings"][0]["phase"] == "step");
  CHECK(j["kernel_health"]["findings"][0]["step"] == "rping");
  CHECK(j["kernel_health"]["findings"][0]["lines"].size() == 2);
  CHECK(j["kernel_health"]["findings"][0]["time"] == doctest::Approx(100.001));

  const std::string xml = to_junit_xml(r);
  CHECK(xml.find("name=\"kernel health\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"the kernel reported WARNING during step &apos;rping&apos;\" "
                 "type=\"kernel-health\">") != std::string::npos);

  r.kernel_health.policy = KernelHealthPolicy::Warn;
  CHECK(to_junit_xml(r).find("type=\"kernel-health\"") == std::string::npos);
  CHECK(kernel_health_text(r.kernel_health, {})
            .starts_with("kernel health: WARNING during step 'rping' (kernel 6.1.0-27-amd64) (kernel_health: warn, the "
                         "run does not "
                         "fail on it):\n"));

  r.kernel_health.findings.clear();
  CHECK(to_junit_xml(r).find("kernel health") == std::string::npos);
  CHECK(kernel_health_text(r.kernel_health, {}).empty());
}
