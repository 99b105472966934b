#pragma once
// Runs scenario text through the real loader and runner against the real
// system (sys/real.h): how the privileged tests run step kinds on the kernel,
// each inside its ThrowawayNetns. The fake-system twin is tests/fakes/harness.h.
//
//   rxerun::testing::ThrowawayNetns ns;
//   rxerun::testing::RealHarness h;
//   auto r = h.run_keep("steps:\n  - veth: {name: vB, peer: vA}\n");
//   CHECK(command_output("ip link show vB").find("alias rxerun:test") != std::string::npos);
//   CHECK(h.cleanup().clean());

#include "steps/kinds.h"
#include "support/scenario_harness.h"
#include "sys/real.h"

namespace rxerun::testing {

struct RealHarness : ScenarioHarness {
  RealHarness() : ScenarioHarness(Registry(steps::all_kinds())) {}

  sys::RealSystem real;

 protected:
  sys::System& system() override { return real.system(); }
};

}  // namespace rxerun::testing
