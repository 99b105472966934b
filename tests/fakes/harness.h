#pragma once
// Runs scenario text through the real loader and runner against FakeSystem:
// how step kinds are unit-tested without root.
//
//   rxerun::fakes::Harness h;
//   h.fake.links.add_host_link("", {.name = "eth0", .mtu = 1500});
//   auto r = h.run("steps:\n  - link: {dev: eth0, mtu: 9000}\n");
//   CHECK(r.exit_code == 0);
//   CHECK(h.fake.links.find("", "eth0")->mtu == 1500);  // cleanup restored it

#include <string>

#include "engine/journal.h"
#include "engine/loader.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "engine/runner.h"
#include "fakes/fake_system.h"

namespace rxerun::fakes {

struct Harness {
  Harness();  // the real kinds (steps::all_kinds())
  explicit Harness(Registry r);

  Registry registry;
  FakeSystem fake;
  Journal journal = Journal::in_memory();
  Reporter reporter;  // prints nothing

  // Loads (failing the test on diagnostics) with scenario name "test".
  Scenario load(const std::string& yaml);
  // Diagnostics of a scenario that must not load, joined by newlines.
  std::string diagnostics(const std::string& yaml);
  RunReport run(const std::string& yaml, RunOptions options = {});
  // Runs with --keep, so the test can look at the lab before cleanup().
  RunReport run_keep(const std::string& yaml, RunOptions options = {});
  CleanupReport cleanup();
};

const StepReport& step_named(const RunReport& r, const std::string& name);

}  // namespace rxerun::fakes
