#include "fakes/harness.h"

#include <doctest/doctest.h>

#include "steps/kinds.h"

namespace rxerun::fakes {

Harness::Harness() : registry(steps::all_kinds()) {}
Harness::Harness(Registry r) : registry(std::move(r)) {}

Scenario Harness::load(const std::string& yaml) {
  auto r = load_scenario_text(yaml, "test.yaml", registry, {});
  for (const auto& d : r.diagnostics) FAIL_CHECK(d.to_string());
  REQUIRE(r.scenario);
  r.scenario->name = "test";
  return *r.scenario;
}

std::string Harness::diagnostics(const std::string& yaml) {
  auto r = load_scenario_text(yaml, "test.yaml", registry, {});
  std::string out;
  for (const auto& d : r.diagnostics) out += d.to_string() + "\n";
  return out;
}

RunReport Harness::run(const std::string& yaml, RunOptions options) {
  Runner runner(registry, fake.system, journal, reporter, options);
  return runner.run(load(yaml));
}

RunReport Harness::run_keep(const std::string& yaml, RunOptions options) {
  options.keep = true;
  return run(yaml, options);
}

CleanupReport Harness::cleanup() {
  Runner runner(registry, fake.system, journal, reporter);
  return runner.cleanup("test", "cleanup");
}

const StepReport& step_named(const RunReport& r, const std::string& name) {
  for (const auto& s : r.steps)
    if (s.name == name) return s;
  FAIL("no step named " << name);
  return r.steps.front();
}

}  // namespace rxerun::fakes
