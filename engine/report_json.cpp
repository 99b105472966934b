// to_json: the --report json:PATH file. Its key names are a contract with
// whatever reads the file (CI dashboards, scripts); add keys, never rename.
//
// {
//   "report_version": 2,           raised when keys are added that a reader may need (2: started_s,
//                                  params, expectations, picture); a key never changes meaning
//   "rxerun": "0.1.0",             the version that ran (host.rxerun, else this build)
//   "file": "scenarios/x.yaml", "scenario": "x", "description": "...",
//   "started_at": "2024-05-01T10:00:00Z",   ISO 8601, UTC
//   "duration_s": 0.72,            seconds, a float (every *_s key is)
//   "exit_code": 1,                engine/exit_code.h
//   "interrupted": false,
//   "host": {...},                 as the runner found it: kernel, hostname, module versions
//   "steps": [{
//     "index": 0,                  0-based position in the scenario
//     "name", "kind",
//     "netns": "lab" | null,       null: rxerun's own namespace
//     "tags": ["slow"],
//     "status": "passed" | "flaky" | "failed" | "error" | "skipped" | "not-run" | "interrupted",
//     "outcome": "ok" | "fail" | "timeout" | "error",   what the step did (last attempt)
//     "expected": same values,     what the scenario expected
//     "attempts": 1, "duration_s": 0.1,
//     "started_s": 1.25,           when it started, from the run's start (version 2)
//     "kernel_s": [7.31, 7.52],    when it ran on the kernel's clock, as dmesg stamps its lines (version 2)
//     "params": {...},             its parameters as it ran (version 2)
//     "expectations": [{"fact", "matcher", "reported", "value", "verdict": "ok" | "fail" | "unchecked", "why"}]
//                                  every fact expectation, in order (version 2)
//     "facts": {...},              as the step reported them (DEV.COUNTER deltas included)
//     "failures": ["..."],         each unmet expectation
//     "message": "...", "hints": ["..."]
//   }],
//   "preclean": CLEANUP, "cleanup": CLEANUP,
//   "kernel_health": {"policy": "fail" | "warn" | "off",
//                     "kernel": "6.1.0-...",   the release the findings are of
//                     "findings": [{"kind": "WARNING", "phase": "preclean" | "step" | "cleanup" | "run",
//                                   "step": "rping" | null, "lines": ["[   12.3] WARNING: ..."],
//                                   "time": 12.345678 (seconds on the kernel's clock),
//                                   "node": "a" | null (a two-node lab: whose kernel)}]}
//     CLEANUP = {"kept": false, "clean": true,
//                "undos": [{"step", "kind", "summary", "ok", "error", "duration_s",
//                             "covered_by" (when it went with another undo),
//                             "journal" (when it failed: the journal's text for it)}]}
//   "summary": {"passed", "flaky", "failed", "errors", "skipped", "not_run", "interrupted"}
//     disjoint counts (a flaky step is counted in "flaky" only); they add up
//     to the number of steps.
//   "kernel": "7.3",               only for a run in the lab VM: its kernel's label
//   "vm": {...},                   only for a run in the lab VM: release, accel, boot_s, dmesg, ...
//   "picture": {...},              the lab as the scenario describes it (engine/picture.h; version 2)
//   "error": "...",                only when the run did not happen or did not end by itself
//   "not_run": true                only for a run a suite left out (--fail-fast)
// }
//
// A suite (several scenarios or kernels) writes one object around its runs:
// {"report_version": 2, "rxerun", "exit_code",
//  "summary": {"runs", "passed", "failed", "errors", "residue", "interrupted", "not_run"},
//  "runs": [RUN, ...]}

#include <fmt/format.h>

#include <initializer_list>
#include <map>
#include <utility>

#include "base/version.h"
#include "engine/report.h"

namespace rxerun {
namespace {

nlohmann::json kernel_health_json(const KernelHealth& h) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : h.findings)
    findings.push_back({{"kind", f.kind},
                        {"phase", f.phase},
                        {"step", f.step.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.step)},
                        {"lines", f.lines},
                        {"time", f.time},
                        {"node", f.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.node)}});
  return {{"policy", to_string(h.policy)}, {"kernel", h.kernel}, {"findings", std::move(findings)}};
}

nlohmann::json cleanup_json(const CleanupReport& c) {
  auto undos = nlohmann::json::array();
  for (const auto& u : c.undos) {
    nlohmann::json j = {
        {"step", u.step}, {"kind", u.kind},   {"summary", u.summary},
        {"ok", u.ok},     {"error", u.error}, {"duration_s", to_seconds(u.duration)},
    };
    if (!u.covered_by.empty()) j["covered_by"] = u.covered_by;
    if (!u.journal_text.empty()) j["journal"] = u.journal_text;
    undos.push_back(std::move(j));
  }
  return {{"kept", c.kept}, {"clean", c.clean()}, {"undos", std::move(undos)}};
}

nlohmann::json expectations_json(const std::vector<ExpectationReport>& expectations) {
  auto out = nlohmann::json::array();
  for (const auto& e : expectations)
    out.push_back({{"fact", e.fact},
                   {"matcher", e.matcher},
                   {"reported", e.reported},
                   {"value", e.value},
                   {"verdict", e.verdict},
                   {"why", e.why}});
  return out;
}

nlohmann::json step_json(const StepReport& s) {
  nlohmann::json j = {
      {"index", s.index},
      {"name", s.name},
      {"kind", s.kind},
      {"netns", s.netns.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.netns)},
      {"node", s.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.node)},
      {"tags", s.tags},
      {"status", std::string(to_string(s.status))},
      {"outcome", std::string(to_string(s.outcome))},
      {"expected", std::string(to_string(s.expected))},
      {"attempts", s.attempts},
      {"duration_s", to_seconds(s.duration)},
      {"facts", s.facts.is_null() ? nlohmann::json::object() : s.facts},
      {"failures", s.failures},
      {"message", s.message},
      {"hints", s.hints},
      {"params", s.params},
      {"expectations", expectations_json(s.expectations)},
  };
  if (s.started) j["started_s"] = to_seconds(*s.started);
  if (s.kernel_time) j["kernel_s"] = {s.kernel_time->first, s.kernel_time->second};
  return j;
}

// The version that produced the run: the host record says so when the run
// happened elsewhere (the lab VM); otherwise it is this build.
std::string rxerun_version(const nlohmann::json& host) {
  for (const char* key : {"rxerun", "rxerun_version"}) {
    if (host.is_object() && host.contains(key) && host[key].is_string()) return host[key].get<std::string>();
  }
  return RXERUN_VERSION;
}

}  // namespace

nlohmann::json to_json(const RunReport& report) {
  int passed = 0, flaky = 0, failed = 0, errors = 0, skipped = 0, not_run = 0, interrupted = 0;
  auto steps = nlohmann::json::array();
  for (const auto& s : report.steps) {
    steps.push_back(step_json(s));
    switch (s.status) {
      case StepStatus::Passed: ++passed; break;
      case StepStatus::Flaky: ++flaky; break;
      case StepStatus::Failed: ++failed; break;
      case StepStatus::Error: ++errors; break;
      case StepStatus::Skipped: ++skipped; break;
      case StepStatus::NotRun: ++not_run; break;
      case StepStatus::Interrupted: ++interrupted; break;
    }
  }
  nlohmann::json j = {
      {"report_version", kReportVersion},
      {"rxerun", rxerun_version(report.host)},
      {"file", report.file},
      {"scenario", report.scenario},
      {"description", report.description},
      {"started_at", report.started_at},
      {"duration_s", to_seconds(report.duration)},
      {"exit_code", report.exit_code},
      {"interrupted", report.interrupted},
      {"host", report.host.is_null() ? nlohmann::json::object() : report.host},
      {"steps", std::move(steps)},
      {"preclean", cleanup_json(report.preclean)},
      {"cleanup", cleanup_json(report.cleanup)},
      {"kernel_health", kernel_health_json(report.kernel_health)},
      {"summary",
       {
           {"passed", passed},
           {"flaky", flaky},
           {"failed", failed},
           {"errors", errors},
           {"skipped", skipped},
           {"not_run", not_run},
           {"interrupted", interrupted},
       }},
  };
  if (!report.lab_kernel.empty()) j["kernel"] = report.lab_kernel;
  if (!report.vm.is_null()) j["vm"] = report.vm;
  if (!report.picture.is_null()) j["picture"] = report.picture;
  if (!report.error.empty()) j["error"] = report.error;
  if (report.not_run) j["not_run"] = true;
  return j;
}

nlohmann::json to_json(const SuiteReport& suite) {
  auto runs = nlohmann::json::array();
  std::map<std::string, int> counts{{"passed", 0},  {"failed", 0},      {"errors", 0},
                                    {"residue", 0}, {"interrupted", 0}, {"not_run", 0}};
  static const std::map<std::string_view, std::string> key_of{
      {"passed", "passed"},   {"failed", "failed"},           {"error", "errors"},
      {"residue", "residue"}, {"interrupted", "interrupted"}, {"not-run", "not_run"}};
  std::string version = RXERUN_VERSION;
  for (const auto& r : suite.runs) {
    runs.push_back(to_json(r));
    ++counts[key_of.at(run_verdict(r))];
    if (!r.not_run) version = rxerun_version(r.host);
  }
  nlohmann::json summary = {{"runs", suite.runs.size()}};
  for (const auto& [key, n] : counts) summary[key] = n;
  return {{"report_version", kReportVersion},
          {"rxerun", version},
          {"exit_code", suite.exit_code},
          {"summary", std::move(summary)},
          {"runs", std::move(runs)}};
}

// ---- reading a report back ------------------------------------------------

namespace {

// Reads `key` of object `j` into `out`, or says which key is wrong.
template <class T>
Result<void> read_key(const nlohmann::json& j, const char* key, T& out, bool required = true) {
  if (!j.is_object()) return make_error("a report entry is not an object");
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) return make_error(fmt::format("the report has no '{}'", key));
    return {};
  }
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return make_error(fmt::format("the report's '{}' is {}, not what rxerun writes there", key, it->type_name()));
  }
  return {};
}

Duration duration_key(const nlohmann::json& j, const char* key) {
  double seconds = 0;
  if (j.is_object() && j.contains(key) && j[key].is_number()) seconds = j[key].get<double>();
  return Duration(static_cast<Duration::rep>(seconds * 1000.0 + 0.5));
}

template <class E>
Result<E> enum_key(const nlohmann::json& j, const char* key, std::initializer_list<E> values) {
  std::string text;
  if (auto r = read_key(j, key, text); !r) return r.error();
  for (E v : values)
    if (to_string(v) == text) return v;
  return make_error(fmt::format("the report's '{}' is '{}', which rxerun does not write", key, text));
}

Result<CleanupReport> cleanup_from_json(const nlohmann::json& j, const char* phase) {
  CleanupReport c;
  c.phase = phase;
  if (auto r = read_key(j, "kept", c.kept, false); !r) return r.error();
  if (!j.contains("undos")) return c;
  if (!j["undos"].is_array()) return make_error(fmt::format("the report's '{}.undos' is not a list", phase));
  for (const auto& u : j["undos"]) {
    UndoReport undo;
    for (auto r : {read_key(u, "step", undo.step, false), read_key(u, "kind", undo.kind, false),
                   read_key(u, "summary", undo.summary, false), read_key(u, "ok", undo.ok),
                   read_key(u, "error", undo.error, false), read_key(u, "covered_by", undo.covered_by, false),
                   read_key(u, "journal", undo.journal_text, false)})
      if (!r) return r.error();
    undo.duration = duration_key(u, "duration_s");
    c.undos.push_back(std::move(undo));
  }
  return c;
}

Result<std::vector<ExpectationReport>> expectations_from_json(const nlohmann::json& step) {
  std::vector<ExpectationReport> out;
  if (!step.contains("expectations")) return out;
  if (!step["expectations"].is_array()) return make_error("the report's 'expectations' is not a list");
  for (const auto& e : step["expectations"]) {
    ExpectationReport x;
    for (auto r : {read_key(e, "fact", x.fact), read_key(e, "matcher", x.matcher, false),
                   read_key(e, "reported", x.reported, false), read_key(e, "verdict", x.verdict, false),
                   read_key(e, "why", x.why, false)})
      if (!r) return r.error();
    if (e.contains("value")) x.value = e["value"];
    out.push_back(std::move(x));
  }
  return out;
}

Result<StepReport> step_from_json(const nlohmann::json& j) {
  StepReport s;
  for (auto r :
       {read_key(j, "index", s.index), read_key(j, "name", s.name), read_key(j, "kind", s.kind),
        read_key(j, "netns", s.netns, false), read_key(j, "node", s.node, false), read_key(j, "tags", s.tags, false),
        read_key(j, "attempts", s.attempts, false), read_key(j, "failures", s.failures, false),
        read_key(j, "message", s.message, false), read_key(j, "hints", s.hints, false)})
    if (!r) return r.error();
  auto status = enum_key(j, "status",
                         {StepStatus::Passed, StepStatus::Flaky, StepStatus::Failed, StepStatus::Error,
                          StepStatus::Skipped, StepStatus::NotRun, StepStatus::Interrupted});
  if (!status) return status.error();
  s.status = *status;
  const std::initializer_list<Outcome> outcomes{Outcome::Ok, Outcome::Fail, Outcome::Timeout, Outcome::Error};
  auto outcome = enum_key(j, "outcome", outcomes);
  if (!outcome) return outcome.error();
  auto expected = enum_key(j, "expected", outcomes);
  if (!expected) return expected.error();
  s.outcome = *outcome;
  s.expected = *expected;
  if (j.contains("facts")) s.facts = j["facts"];
  if (j.contains("params")) s.params = j["params"];
  s.duration = duration_key(j, "duration_s");
  if (j.contains("started_s") && j["started_s"].is_number()) s.started = duration_key(j, "started_s");
  if (const auto k = j.find("kernel_s");
      k != j.end() && k->is_array() && k->size() == 2 && (*k)[0].is_number() && (*k)[1].is_number())
    s.kernel_time = std::pair{(*k)[0].get<double>(), (*k)[1].get<double>()};
  if (auto e = expectations_from_json(j); !e)
    return e.error();
  else
    s.expectations = std::move(*e);
  return s;
}

}  // namespace

nlohmann::json to_json(const StepReport& step) {
  return step_json(step);
}

Result<StepReport> step_report_from_json(const nlohmann::json& j) {
  return step_from_json(j);
}

namespace {

Result<KernelHealth> kernel_health_from_json(const nlohmann::json& j) {
  KernelHealth h;
  std::string policy;
  if (auto r = read_key(j, "policy", policy); !r) return r.error();
  auto p = parse_kernel_health_policy(policy);
  if (!p)
    return make_error(fmt::format("the report's 'kernel_health.policy' is '{}', which rxerun does not write", policy));
  h.policy = *p;
  if (auto r = read_key(j, "kernel", h.kernel, false); !r) return r.error();
  if (!j.contains("findings")) return h;
  if (!j["findings"].is_array()) return make_error("the report's 'kernel_health.findings' is not a list");
  for (const auto& f : j["findings"]) {
    KernelFinding finding;
    for (auto r : {read_key(f, "kind", finding.kind), read_key(f, "phase", finding.phase),
                   read_key(f, "step", finding.step, false), read_key(f, "lines", finding.lines, false),
                   read_key(f, "time", finding.time, false), read_key(f, "node", finding.node, false)})
      if (!r) return r.error();
    h.findings.push_back(std::move(finding));
  }
  return h;
}

}  // namespace

Result<RunReport> run_report_from_json(const nlohmann::json& j) {
  RunReport report;
  for (auto r : {read_key(j, "file", report.file), read_key(j, "scenario", report.scenario),
                 read_key(j, "description", report.description, false),
                 read_key(j, "started_at", report.started_at, false), read_key(j, "exit_code", report.exit_code),
                 read_key(j, "interrupted", report.interrupted, false), read_key(j, "kernel", report.lab_kernel, false),
                 read_key(j, "error", report.error, false), read_key(j, "not_run", report.not_run, false)})
    if (!r) return r.error();
  report.duration = duration_key(j, "duration_s");
  if (j.contains("host")) report.host = j["host"];
  if (j.contains("vm")) report.vm = j["vm"];
  if (j.contains("picture")) report.picture = j["picture"];
  report.report_version = 1;  // the first reports had no other
  if (auto r = read_key(j, "report_version", report.report_version, false); !r) return r.error();
  if (!j.contains("steps") || !j["steps"].is_array()) return make_error("the report has no list of 'steps'");
  for (const auto& step : j["steps"]) {
    auto s = step_from_json(step);
    if (!s) return s.error();
    report.steps.push_back(std::move(*s));
  }
  if (j.contains("kernel_health")) {
    auto health = kernel_health_from_json(j["kernel_health"]);
    if (!health) return health.error();
    report.kernel_health = std::move(*health);
  }
  for (auto [key, into] : {std::pair{"preclean", &report.preclean}, std::pair{"cleanup", &report.cleanup}}) {
    if (!j.contains(key)) continue;
    auto c = cleanup_from_json(j[key], key);
    if (!c) return c.error();
    *into = std::move(*c);
  }
  return report;
}

Result<std::vector<RunReport>> run_reports_from_json(const nlohmann::json& j) {
  std::vector<RunReport> out;
  if (!j.is_object()) return make_error("the report is not a JSON object");
  if (!j.contains("runs")) {
    auto one = run_report_from_json(j);
    if (!one) return one.error();
    out.push_back(std::move(*one));
    return out;
  }
  if (!j["runs"].is_array()) return make_error("the report's 'runs' is not a list");
  for (const auto& run : j["runs"]) {
    auto r = run_report_from_json(run);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace rxerun
