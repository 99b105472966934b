// to_json, parse_report_target and write_report: the --report contract.

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "engine/report.h"

using namespace rxerun;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

StepReport json_step(int index, std::string name, StepStatus status) {
  StepReport s;
  s.index = index;
  s.name = std::move(name);
  s.kind = "sleep";
  s.status = status;
  s.attempts = 1;
  s.duration = 250ms;
  return s;
}

RunReport json_run() {
  RunReport r;
  r.file = "scenarios/netns-pair.yaml";
  r.scenario = "netns-pair";
  r.description = "Soft-RoCE between a namespace and the host";
  r.started_at = "2024-05-01T10:00:00Z";
  r.duration = 1500ms;
  r.exit_code = 4;
  r.host = {{"kernel", "6.1.0-21-amd64"}, {"hostname", "lab1"}, {"modules", {{"rdma_rxe", "6.1"}}}};

  auto ping = json_step(0, "ping-1", StepStatus::Passed);
  ping.kind = "ping";
  ping.netns = "lab";
  ping.tags = {"net", "fast"};
  ping.facts = {{"sent", 2}, {"received", 2}, {"rtt_avg_ms", 0.05}};
  auto flaky = json_step(1, "port-ready", StepStatus::Flaky);
  flaky.attempts = 3;
  auto failed = json_step(2, "rping", StepStatus::Failed);
  failed.expected = Outcome::Fail;
  failed.failures = {"expected fail, got ok"};
  failed.message = "rping: connected";
  auto error = json_step(3, "rxe0", StepStatus::Error);
  error.outcome = Outcome::Error;
  error.message = "Operation not permitted";
  error.hints = {"run as root"};
  auto skipped = json_step(4, "slow", StepStatus::Skipped);
  auto not_run = json_step(5, "later", StepStatus::NotRun);
  auto interrupted = json_step(6, "long", StepStatus::Interrupted);
  auto timeout = json_step(7, "hang", StepStatus::Passed);
  timeout.outcome = timeout.expected = Outcome::Timeout;
  r.steps = {ping, flaky, failed, error, skipped, not_run, interrupted, timeout};

  r.preclean.phase = "preclean";
  r.cleanup.phase = "cleanup";
  r.cleanup.undos = {
      UndoReport{"veth-2", "veth", "delete veth vA", false, "Device or resource busy", 12ms},
      UndoReport{"netns-1", "netns", "delete netns lab", true, "", 3ms},
  };
  return r;
}

// A fresh directory under TMPDIR, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rxerun-report-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("report: json has the documented top-level keys and values") {
  const json j = to_json(json_run());
  for (const char* key : {"report_version", "rxerun", "file", "scenario", "description", "started_at", "duration_s",
                          "exit_code", "interrupted", "host", "steps", "preclean", "cleanup", "summary"}) {
    CAPTURE(key);
    CHECK(j.contains(key));
  }
  CHECK(j["report_version"] == 2);
  CHECK(j["rxerun"].is_string());
  CHECK(j["file"] == "scenarios/netns-pair.yaml");
  CHECK(j["scenario"] == "netns-pair");
  CHECK(j["started_at"] == "2024-05-01T10:00:00Z");
  CHECK(j["duration_s"].is_number_float());
  CHECK(j["duration_s"].get<double>() == doctest::Approx(1.5));
  CHECK(j["exit_code"] == 4);
  CHECK(j["interrupted"] == false);
  CHECK(j["host"]["kernel"] == "6.1.0-21-amd64");
  CHECK(j["host"]["modules"]["rdma_rxe"] == "6.1");
}

TEST_CASE("report: json version comes from the host record when present") {
  RunReport r = json_run();
  r.host["rxerun"] = "9.9.9";
  CHECK(to_json(r)["rxerun"] == "9.9.9");
}

TEST_CASE("report: json steps carry status, outcome, facts and reasons") {
  const json j = to_json(json_run());
  const auto& steps = j["steps"];
  REQUIRE(steps.size() == 8);
  const auto& ping = steps[0];
  for (const char* key : {"index", "name", "kind", "netns", "tags", "status", "outcome", "expected", "attempts",
                          "duration_s", "facts", "failures", "message", "hints"}) {
    CAPTURE(key);
    CHECK(ping.contains(key));
  }
  CHECK(ping["index"] == 0);
  CHECK(ping["name"] == "ping-1");
  CHECK(ping["kind"] == "ping");
  CHECK(ping["netns"] == "lab");
  CHECK(ping["tags"] == json::array({"net", "fast"}));
  CHECK(ping["status"] == "passed");
  CHECK(ping["outcome"] == "ok");
  CHECK(ping["expected"] == "ok");
  CHECK(ping["duration_s"].get<double>() == doctest::Approx(0.25));
  CHECK(ping["facts"]["rtt_avg_ms"].get<double>() == doctest::Approx(0.05));
  CHECK(steps[1]["netns"].is_null());  // rxerun's own namespace
  CHECK(steps[1]["status"] == "flaky");
  CHECK(steps[1]["attempts"] == 3);
  CHECK(steps[2]["status"] == "failed");
  CHECK(steps[2]["expected"] == "fail");
  CHECK(steps[2]["failures"] == json::array({"expected fail, got ok"}));
  CHECK(steps[2]["message"] == "rping: connected");
  CHECK(steps[3]["status"] == "error");
  CHECK(steps[3]["outcome"] == "error");
  CHECK(steps[3]["hints"] == json::array({"run as root"}));
  CHECK(steps[4]["status"] == "skipped");
  CHECK(steps[5]["status"] == "not-run");
  CHECK(steps[6]["status"] == "interrupted");
  CHECK(steps[7]["outcome"] == "timeout");
  CHECK(steps[7]["expected"] == "timeout");
}

TEST_CASE("report: json cleanup and summary") {
  RunReport r = json_run();
  json j = to_json(r);
  CHECK(j["preclean"] == json{{"kept", false}, {"clean", true}, {"undos", json::array()}});
  const auto& c = j["cleanup"];
  CHECK(c["kept"] == false);
  CHECK(c["clean"] == false);
  REQUIRE(c["undos"].size() == 2);
  CHECK(c["undos"][0] == json{{"step", "veth-2"},
                              {"kind", "veth"},
                              {"summary", "delete veth vA"},
                              {"ok", false},
                              {"error", "Device or resource busy"},
                              {"duration_s", 0.012}});
  CHECK(c["undos"][1]["ok"] == true);
  CHECK(j["summary"] == json{{"passed", 2},
                             {"flaky", 1},
                             {"failed", 1},
                             {"errors", 1},
                             {"skipped", 1},
                             {"not_run", 1},
                             {"interrupted", 1}});

  r.cleanup.kept = true;
  r.cleanup.undos.clear();
  r.interrupted = true;
  j = to_json(r);
  CHECK(j["cleanup"]["kept"] == true);
  CHECK(j["cleanup"]["clean"] == true);
  CHECK(j["interrupted"] == true);
}

TEST_CASE("report: json keeps nasty strings intact") {
  RunReport r = json_run();
  const std::string nasty = "a\"b\\c\n\t<&>'\x01 ünïcødé 检查";
  r.scenario = nasty;
  r.steps[0].name = nasty;
  r.steps[0].facts["weird"] = nasty;
  const json back = json::parse(to_json(r).dump());
  CHECK(back["scenario"] == nasty);
  CHECK(back["steps"][0]["name"] == nasty);
  CHECK(back["steps"][0]["facts"]["weird"] == nasty);
}

TEST_CASE("report: parse_report_target") {
  std::string error;
  auto t = parse_report_target("json:out/report.json", &error);
  REQUIRE(t);
  CHECK(t->format == ReportTarget::Format::Json);
  CHECK(t->path == "out/report.json");

  t = parse_report_target("junit:/tmp/a:b.xml", &error);  // only the first colon splits
  REQUIRE(t);
  CHECK(t->format == ReportTarget::Format::Junit);
  CHECK(t->path == "/tmp/a:b.xml");

  CHECK_FALSE(parse_report_target("report.json", &error));
  CHECK(error.find("FORMAT:PATH") != std::string::npos);
  CHECK_FALSE(parse_report_target("xml:report.xml", &error));
  CHECK(error.find("unknown format 'xml'") != std::string::npos);
  CHECK(error.find("json, junit or html") != std::string::npos);
  t = parse_report_target("html:out/page.html", &error);
  REQUIRE(t);
  CHECK(t->format == ReportTarget::Format::Html);
  CHECK(t->path == "out/page.html");
  CHECK_FALSE(parse_report_target("json:", &error));
  CHECK(error.find("path is empty") != std::string::npos);
  CHECK_FALSE(parse_report_target(":x", nullptr));  // a null error pointer is allowed
}

TEST_CASE("report: write_report writes the file atomically and nothing else") {
  TempDir dir;
  const auto path = dir.path / "report.json";
  RunReport r = json_run();
  r.steps[0].facts["raw"] = std::string("bad utf-8 \xff\xfe end");  // tool output; must not throw
  auto res = write_report({ReportTarget::Format::Json, path.string()}, r);
  REQUIRE_MESSAGE(res.ok(), res.error().message);
  const json j = json::parse(slurp(path));
  CHECK(j["scenario"] == "netns-pair");
  CHECK(j["steps"][0]["facts"]["raw"].get<std::string>().starts_with("bad utf-8 "));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path), std::filesystem::directory_iterator{}) == 1);

  // Writing again replaces the file.
  r.scenario = "second";
  REQUIRE(write_report({ReportTarget::Format::Json, path.string()}, r).ok());
  CHECK(json::parse(slurp(path))["scenario"] == "second");

  const auto xml = dir.path / "report.xml";
  REQUIRE(write_report({ReportTarget::Format::Junit, xml.string()}, r).ok());
  CHECK(slurp(xml) == to_junit_xml(r));
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path), std::filesystem::directory_iterator{}) == 2);
}

TEST_CASE("report: write_report fails with errno and the path, creating nothing") {
  TempDir dir;
  const auto path = dir.path / "missing-dir" / "report.json";
  auto res = write_report({ReportTarget::Format::Json, path.string()}, json_run());
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == ENOENT);
  CHECK(res.error().message.find(path.string()) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path / "missing-dir"));

  // The target is a directory: the rename fails, the temporary is removed.
  const auto taken = dir.path / "taken";
  std::filesystem::create_directory(taken);
  std::filesystem::create_directory(taken / "child");  // a non-empty directory cannot be replaced
  res = write_report({ReportTarget::Format::Json, taken.string()}, json_run());
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code != 0);
  CHECK(res.error().message.find(taken.string()) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path / "taken.tmp"));
}

TEST_CASE("report: a kernel health finding of a two-node lab names its node, and comes back with it") {
  RunReport r = json_run();
  KernelFinding one{.kind = "WARNING", .phase = "step", .step = "rping", .lines = {"[ 1.0] WARNING: x"}, .time = 1.0};
  KernelFinding other = one;
  other.node = "b";
  r.kernel_health.findings = {one, other};
  const nlohmann::json j = to_json(r);
  CHECK(j["kernel_health"]["findings"][0]["node"].is_null());
  CHECK(j["kernel_health"]["findings"][1]["node"] == "b");
  CHECK(one.where() == "during step 'rping'");
  CHECK(other.where() == "on node b during step 'rping'");
  auto back = run_report_from_json(j);
  REQUIRE(back);
  REQUIRE(back->kernel_health.findings.size() == 2);
  CHECK(back->kernel_health.findings[0].node.empty());
  CHECK(back->kernel_health.findings[1].node == "b");
}

TEST_CASE("report: version 2 carries each step's start, parameters and expectations, and comes back") {
  RunReport r = json_run();
  r.picture = {{"title", "netns-pair"}};
  r.steps[0].started = 1250ms;
  r.steps[0].kernel_time = std::pair{7.25, 7.5};
  r.steps[0].params = {{"to", "10.0.0.2"}, {"count", 2}};
  r.steps[0].expectations = {{.fact = "received", .matcher = "> 1", .reported = true, .value = 2, .verdict = "ok"},
                             {.fact = "lost",
                              .matcher = "0",
                              .reported = false,
                              .verdict = "fail",
                              .why = "was not reported (reported: sent)"}};
  const json j = to_json(r);
  CHECK(j["report_version"] == 2);
  CHECK(j["steps"][0]["started_s"] == 1.25);
  CHECK(j["steps"][0]["params"]["count"] == 2);
  CHECK(j["steps"][0]["expectations"][1]["verdict"] == "fail");
  CHECK(j["steps"][0]["expectations"][0]["value"] == 2);
  CHECK_FALSE(j["steps"][1].contains("started_s"));  // never started: no start
  CHECK(j["picture"]["title"] == "netns-pair");

  auto back = run_report_from_json(j);
  REQUIRE(back);
  CHECK(back->report_version == 2);
  REQUIRE(back->steps[0].started);
  CHECK(*back->steps[0].started == 1250ms);
  CHECK_FALSE(back->steps[1].started);
  REQUIRE(back->steps[0].kernel_time);
  CHECK(back->steps[0].kernel_time->second == 7.5);
  CHECK(j["steps"][0]["kernel_s"][0] == 7.25);
  CHECK(back->steps[0].params == r.steps[0].params);
  REQUIRE(back->steps[0].expectations.size() == 2);
  CHECK(back->steps[0].expectations[0].reported);
  CHECK(back->steps[0].expectations[1].why == "was not reported (reported: sent)");
  CHECK(back->picture["title"] == "netns-pair");
}

TEST_CASE("report: a version 1 report, without the keys version 2 added, is read") {
  json j = to_json(json_run());
  j["report_version"] = 1;
  j.erase("picture");
  for (auto& s : j["steps"]) {
    s.erase("started_s");
    s.erase("params");
    s.erase("expectations");
  }
  auto back = run_report_from_json(j);
  REQUIRE(back);
  CHECK(back->report_version == 1);
  CHECK(back->picture.is_null());
  CHECK(back->steps[0].expectations.empty());
  j.erase("report_version");  // the first reports of all
  back = run_report_from_json(j);
  REQUIRE(back);
  CHECK(back->report_version == 1);
}
