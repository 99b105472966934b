// to_json: the --report json:PATH file. Its key names are a contract with
// whatever reads the file (CI dashboards, scripts); add keys, never rename.
//
// {
//   "report_version": 1,           bumped only if a key changes meaning
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
//     "facts": {...},              as the step reported them (DEV.COUNTER deltas included)
//     "failures": ["..."],         each unmet expectation
//     "message": "...", "hints": ["..."]
//   }],
//   "preclean": CLEANUP, "cleanup": CLEANUP,
//   "kernel_health": {"policy": "fail" | "warn" | "off",
//                     "kernel": "6.1.0-...",   the release the findings are of
//                     "findings": [{"kind": "WARNING", "phase": "preclean" | "step" | "cleanup" | "run",
//                                   "step": "rping" | null, "lines": ["[   12.3] WARNING: ..."],
//                                   "time": 12.345678 (seconds on the kernel's clock)}]}
//     CLEANUP = {"kept": false, "clean": true,
//                "undos": [{"step", "kind", "summary", "ok", "error", "duration_s",
//                             "covered_by" (when it went with another undo),
//                             "journal" (when it failed: the journal's text for it)}]}
//   "summary": {"passed", "flaky", "failed", "errors", "skipped", "not_run", "interrupted"}
//     disjoint counts (a flaky step is counted in "flaky" only); they add up
//     to the number of steps.
// }

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
                        {"time", f.time}});
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

nlohmann::json step_json(const StepReport& s) {
  return {
      {"index", s.index},
      {"name", s.name},
      {"kind", s.kind},
      {"netns", s.netns.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.netns)},
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
  };
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
  return {
      {"report_version", 1},
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
}

}  // namespace rxerun
