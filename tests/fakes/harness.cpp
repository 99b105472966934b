#include "fakes/harness.h"

#include "steps/kinds.h"

namespace rxerun::fakes {

Harness::Harness() : ScenarioHarness(Registry(steps::all_kinds())) {}
Harness::Harness(Registry r) : ScenarioHarness(std::move(r)) {}

}  // namespace rxerun::fakes
