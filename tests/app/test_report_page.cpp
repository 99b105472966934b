// The report page (app/report_page.h) from reports made here: its hooks, the
// lab's drawing, the timeline, hostile text shown as text, a report of
// version 1, a capture that is gone. The page in a real browser, from real
// runs: tests/e2e/report_page.sh and the lab VM tests.

#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "app/report_page.h"
#include "base/utf8.h"
#include "engine/loader.h"
#include "engine/picture.h"
#include "steps/kinds.h"

using namespace rxerun;
using namespace std::chrono_literals;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

StepReport page_step(int index, std::string name, StepStatus status) {
  StepReport s;
  s.index = index;
  s.name = std::move(name);
  s.kind = "exec";
  s.status = status;
  s.attempts = 1;
  s.duration = 200ms;
  s.started = std::chrono::milliseconds(300 * index);
  return s;
}

RunReport page_run() {
  RunReport r;
  r.file = "lab.yaml";
  r.scenario = "lab";
  r.description = "two steps";
  r.duration = 1s;
  r.exit_code = 1;
  auto ok = page_step(0, "first", StepStatus::Passed);
  ok.expectations = {{.fact = "rxe0.sent_pkts", .matcher = "> 0", .reported = true, .value = 12, .verdict = "ok"}};
  ok.facts = {{"rxe0.sent_pkts", 12}, {"rxe1.sent_pkts", 0}, {"vB.tx_packets", 30}};
  auto bad = page_step(1, "second", StepStatus::Failed);
  bad.expectations = {
      {.fact = "exit", .matcher = "0", .reported = true, .value = 1, .verdict = "fail", .why = "1 is not 0"},
      {.fact = "stdout", .matcher = "~ ok", .reported = true, .value = "", .verdict = "fail", .why = "no match"}};
  bad.failures = {"fact exit: 1 is not 0"};
  auto later = page_step(2, "third", StepStatus::NotRun);
  later.started.reset();
  later.expectations = {{.fact = "exit", .matcher = "0"}};
  r.steps = {ok, bad, later};
  return r;
}

const Registry& page_registry() {
  static const Registry r(steps::all_kinds());
  return r;
}

}  // namespace

TEST_CASE("report page: one data-step per step, one data-expect per expectation with its verdict") {
  SuiteReport suite;
  suite.runs = {page_run()};
  const std::string page = render_report_page(suite, {});
  CHECK(page.starts_with("<!DOCTYPE html>"));
  CHECK(count(page, "data-step=\"") == 3);
  CHECK(count(page, "data-expect=\"") == 4);
  CHECK(count(page, "data-verdict=\"ok\"") == 1);
  CHECK(count(page, "data-verdict=\"fail\"") == 2);
  CHECK(count(page, "data-verdict=\"unchecked\"") == 1);
  CHECK(count(page, "data-run=\"lab@host\"") == 1);
  // The failing step is open, the others closed.
  CHECK(page.find("data-step=\"second\" open>") != std::string::npos);
  CHECK(page.find("data-step=\"first\">") != std::string::npos);
  // Counters: one chart per device; a device on which nothing moved says so.
  CHECK(count(page, "<figure data-device=") == 3);
  CHECK(page.find("<figure data-device=\"rxe1\" class=\"idle\"><figcaption>rxe1</figcaption><p class=\"why\">nothing "
                  "counted</p>") != std::string::npos);
  CHECK(page.find("<p class=\"zeros\">0: sent_pkts</p>") != std::string::npos);
  // Nothing fetched: no URL of any scheme but the page's own anchors.
  CHECK(page.find("src=\"") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
}

TEST_CASE("report page: hostile names, facts and output are text, never markup") {
  RunReport r = page_run();
  r.description = "<script>alert('d')</script> \"quoted\"";
  r.steps[0].name = "<img src=x onerror=alert(1)>";
  r.steps[0].facts["stdout"] = std::string("<script>alert(2)</script>\xff\xfe end");
  r.steps[1].message = "</details></section><script>alert(3)</script>";
  r.steps[1].params = {{"run", "\"><svg onload=alert(4)>"}};
  r.kernel_health.findings.push_back(
      {.kind = "WARNING", .phase = "step", .step = "second", .lines = {"<script>alert(5)</script>"}});
  r.host["kernel_messages"] = {"[ 7.0] rdma_rxe: loaded", "[ 7.1] <script>alert(6)</script>"};
  SuiteReport suite;
  suite.runs = {r};
  const std::string page = render_report_page(suite, {});
  CHECK_FALSE(first_invalid_utf8(page));
  for (const char* raw : {"<script>alert", "<img src=x", "<svg onload", "</details></section><script>"})
    CHECK_MESSAGE(page.find(raw) == std::string::npos, raw);
  CHECK(page.find("&lt;script&gt;alert(&apos;d&apos;)") != std::string::npos);
  CHECK(page.find("\\xff\\xfe end") != std::string::npos);  // the bytes shown, not dropped
  CHECK(page.find("kernel messages of the RDMA stack (2 lines)") != std::string::npos);
  // The page's own scripts and nothing else.
  CHECK(count(page, "<script") == 1);
}

TEST_CASE("report page: the lab's drawing comes from the report, linked to the steps that made it") {
  const std::string yaml = R"(name: drawn
steps:
  - name: lab-ns
    netns: {name: lab}
  - name: pair
    veth: {name: vA, peer: vB, peer_netns: lab}
  - name: dev
    rxe: {name: rxe0, netdev: vA}
)";
  LoadResult loaded = load_scenario_text(yaml, "drawn.yaml", page_registry(), {});
  REQUIRE(loaded.scenario);
  RunReport r;
  r.scenario = "drawn";
  r.picture = picture_json(picture_of(*loaded.scenario, page_registry()));
  for (int i = 0; i < 3; ++i) r.steps.push_back(page_step(i, loaded.scenario->steps[i].name, StepStatus::Passed));

  // The picture survives JSON: the same drawing from the report read back.
  auto again = picture_from_json(nlohmann::json::parse(r.picture.dump()));
  REQUIRE(again);
  CHECK(picture_json(*again) == r.picture);

  SuiteReport suite;
  suite.runs = {r};
  // Graphviz writes '-' in its attributes as a character reference.
  const std::string page = std::regex_replace(render_report_page(suite, {}), std::regex("&#45;"), "-");
  CHECK(page.find("<svg") != std::string::npos);
  CHECK(page.find("<?xml") == std::string::npos);  // inline, not a document in a document
  CHECK(page.find("id=\"run-0-netns/lab\"") != std::string::npos);
  CHECK(page.find("href=\"#run-0-step-1\"") != std::string::npos);  // the veth links to its step
  CHECK(page.find("href=\"#run-0-step-2\"") != std::string::npos);  // the device too
  // The veth's two interfaces link to the step that made them, and so do the
  // pair's edge and its label; the device and its edge to its netdev to its
  // own; and each step's bar of the timeline.
  CHECK(count(page, "href=\"#run-0-step-1\"") == 5);
  CHECK(count(page, "href=\"#run-0-step-2\"") == 3);

  r.picture = {{"title", 7}};  // not a picture rxerun writes: said, not drawn
  suite.runs = {r};
  const std::string odd = render_report_page(suite, {});
  CHECK(odd.find("picture of the lab is not what rxerun writes") != std::string::npos);
}

TEST_CASE("report page: a version 1 report renders, and says what it lacks") {
  RunReport r = page_run();
  r.report_version = 1;
  for (auto& s : r.steps) {
    s.started.reset();
    s.expectations.clear();
  }
  SuiteReport suite;
  suite.runs = {r};
  const std::string page = render_report_page(suite, {});
  CHECK(page.find("version 1: written before") != std::string::npos);
  CHECK(count(page, "data-step=\"") == 3);
  CHECK(count(page, "data-expect=\"") == 0);
  CHECK(page.find("class=\"timeline\"") != std::string::npos);  // laid end to end
}

TEST_CASE("report page: a capture that is gone gets a note instead of its ladder") {
  RunReport r = page_run();
  auto cap = page_step(3, "wire", StepStatus::Passed);
  cap.kind = "capture";
  cap.facts = {{"file", "no-such-dir/wire.pcap"}, {"dev", "vB"}};
  r.steps.push_back(cap);
  SuiteReport suite;
  suite.runs = {r};
  const std::string page = render_report_page(suite, {.capture_dirs = {"/nonexistent"}});
  CHECK(page.find("no-such-dir/wire.pcap is not there any more") != std::string::npos);
  CHECK(count(page, "data-packet=") == 0);
}

TEST_CASE("report page: a suite has its matrix of scenarios by kernels, each cell linking to its run") {
  SuiteReport suite;
  suite.suite = true;
  for (const char* kernel : {"6.1", "7.3"})
    for (const char* name : {"a", "b"}) {
      RunReport r = page_run();
      r.scenario = name;
      r.lab_kernel = kernel;
      r.exit_code = std::string(name) == "a" ? 0 : 1;
      suite.runs.push_back(r);
    }
  const std::string page = render_report_page(suite, {});
  CHECK(count(page, "data-run=\"") == 4);
  CHECK(page.find("data-run=\"b@7.3\"") != std::string::npos);
  CHECK(count(page, "<td class=\"ok\"><a href=\"#run-") == 2);
  CHECK(count(page, "<td class=\"fail\"><a href=\"#run-") == 2);
  CHECK(page.find("<th>kernel 6.1</th><th>kernel 7.3</th>") != std::string::npos);
}

TEST_CASE("report page: a two-node lab is named by its nodes' kernels, and says where each step ran") {
  RunReport r = page_run();
  r.vm = {{"nodes",
           {{"a", {{"kernel", "6.1"}, {"release", "6.1.0-57-amd64"}, {"start", "snapshot"}}},
            {"b", {{"kernel", "7.3"}, {"release", "7.3.4+deb13-amd64"}, {"start", "boot"}}}}}};
  r.steps[0].node = "a+b";
  SuiteReport suite;
  suite.runs = {r};
  const std::string page = render_report_page(suite, {});
  CHECK(count(page, "data-run=\"lab@6.1+7.3\"") == 1);
  CHECK(page.find("<title>rxerun: lab@6.1+7.3: failed</title>") != std::string::npos);
  CHECK(page.find("node a kernel 6.1 (6.1.0-57-amd64, snapshot), node b kernel 7.3 (7.3.4+deb13-amd64, boot)") !=
        std::string::npos);
  CHECK(page.find("exec on node a+b") != std::string::npos);
}

TEST_CASE("report page: the kernel's messages are shown at the step during which they were logged") {
  RunReport r = page_run();
  r.host["kernel_messages"] = {"[    1.500000] rdma_rxe: loaded",
                               "[    2.250000] infiniband rxe0: set active",
                               "[    2.750000] infiniband rxe0: added vA",
                               "[    9.000000] rdma_rxe: unloaded",
                               "no stamp at all",
                               "[ garbage] x"};
  r.steps[1].kernel_time = std::pair{2.0, 3.0};  // the failing step: open, with two lines
  r.steps[0].kernel_time = std::pair{4.0, 5.0};  // nothing logged then: nothing shown
  SuiteReport suite;
  suite.runs = {r};
  const std::string page = render_report_page(suite, {});
  CHECK(count(page, "kernel messages during the step") == 1);
  CHECK(page.find("<details class=\"kmsg\" open><summary>kernel messages during the step (2 lines)</summary><pre>[    "
                  "2.250000] infiniband rxe0: set active\n[    2.750000] infiniband rxe0: added vA\n</pre>") !=
        std::string::npos);
  CHECK(page.find("kernel messages of the RDMA stack (6 lines)") != std::string::npos);  // and all of them per run
}
