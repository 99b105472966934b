#include "support/scenario_harness.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "app/plan.h"

namespace rxerun::testing {

ScenarioHarness::ScenarioHarness(Registry r) : registry(std::move(r)) {}

Scenario ScenarioHarness::load(const std::string& yaml) {
  auto r = load_scenario_text(yaml, "test.yaml", registry, {});
  for (const auto& d : r.diagnostics) FAIL_CHECK(d.to_string());
  REQUIRE(r.scenario);
  return *r.scenario;
}

std::string ScenarioHarness::diagnostics(const std::string& yaml) {
  auto r = load_scenario_text(yaml, "test.yaml", registry, {});
  std::string out;
  for (const auto& d : r.diagnostics) out += d.to_string() + "\n";
  return out;
}

std::string ScenarioHarness::first_diagnostic(const std::string& yaml) {
  const std::string all = diagnostics(yaml);
  return all.substr(0, all.find('\n'));
}

RunReport ScenarioHarness::run(const std::string& yaml, RunOptions options) {
  Runner runner(registry, system(), journal, reporter, options);
  return runner.run(load(yaml));
}

RunReport ScenarioHarness::run_keep(const std::string& yaml, RunOptions options) {
  options.keep = true;
  return run(yaml, options);
}

CleanupReport ScenarioHarness::cleanup(const std::string& scenario) {
  Runner runner(registry, system(), journal, reporter);
  return runner.cleanup(scenario, "cleanup");
}

std::string ScenarioHarness::plan(const std::string& yaml) {
  const Scenario scenario = load(yaml);
  sys::ModelSystem model;
  sys::make_plan_world(model);
  Journal plan_journal = Journal::in_memory();
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* out = ::open_memstream(&buf, &len);
  REQUIRE(out);
  {
    PlanReporter printer(out, model.kernel);
    RunOptions o;
    o.planning = true;
    Runner runner(registry, model.system, plan_journal, printer, o);
    runner.run(scenario);
  }
  std::fclose(out);
  std::string text(buf, len);
  std::free(buf);
  return text;
}

ScenarioHarness::PlannedRun ScenarioHarness::plan_run(const std::string& yaml) {
  const Scenario scenario = load(yaml);
  sys::ModelSystem model;
  sys::make_plan_world(model);
  Journal plan_journal = Journal::in_memory();
  Reporter quiet;
  RunOptions o;
  o.planning = true;
  Runner runner(registry, model.system, plan_journal, quiet, o);
  PlannedRun planned;
  planned.report = runner.run(scenario);
  planned.actions = model.kernel.take();
  return planned;
}

const StepReport& step_named(const RunReport& r, const std::string& name) {
  for (const auto& s : r.steps)
    if (s.name == name) return s;
  FAIL("no step named " << name);
  return r.steps.front();
}

}  // namespace rxerun::testing
