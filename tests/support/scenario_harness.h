#pragma once
// What the fake-system harness (tests/fakes/harness.h) and the real-system
// one (tests/support/real_harness.h) share: scenario text through the real
// loader and runner, against the System the harness holds, with an
// in-memory journal and a reporter that prints nothing. Also the plan of a
// scenario, as `rxerun plan` makes it (against the model in an open world,
// sys/model/system.h).

#include <string>
#include <vector>

#include "engine/journal.h"
#include "engine/loader.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "engine/runner.h"
#include "sys/model/system.h"
#include "sys/system.h"

namespace rxerun::testing {

class ScenarioHarness {
 public:
  explicit ScenarioHarness(Registry r);
  virtual ~ScenarioHarness() = default;
  ScenarioHarness(const ScenarioHarness&) = delete;
  ScenarioHarness& operator=(const ScenarioHarness&) = delete;

  Registry registry;
  Journal journal = Journal::in_memory();
  Reporter reporter;  // prints nothing

  // Loads the text as "test.yaml" (failing the test on diagnostics): the
  // scenario is named "test" unless the text names it.
  Scenario load(const std::string& yaml);
  // Diagnostics of a scenario that must not load, joined by newlines.
  std::string diagnostics(const std::string& yaml);
  // The first of them ("" when it loads).
  std::string first_diagnostic(const std::string& yaml);
  RunReport run(const std::string& yaml, RunOptions options = {});
  // Runs with --keep, so the test can look at the lab before cleanup().
  RunReport run_keep(const std::string& yaml, RunOptions options = {});
  // `rxerun cleanup` of the scenario of that name.
  CleanupReport cleanup(const std::string& scenario = "test");

  // What `rxerun plan` prints for the scenario.
  std::string plan(const std::string& yaml);
  // The same plan, as the runner's report and the actions one by one.
  struct PlannedRun {
    RunReport report;
    std::vector<sys::PlannedAction> actions;  // in order, cleanup's included
  };
  PlannedRun plan_run(const std::string& yaml);

 protected:
  virtual sys::System& system() = 0;
};

const StepReport& step_named(const RunReport& r, const std::string& name);

}  // namespace rxerun::testing
