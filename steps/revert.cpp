// revert: undo an earlier step now (lift a fault, delete a netdev under a
// live rxe device) and report that step's final facts, so that an `expect`
// on the revert proves what a fault hit.

#include "engine/step.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_revert(const Params& params, StepContext& ctx);

}  // namespace

Kind revert_kind() {
  KindSpec spec;
  spec.name = "revert";
  spec.summary = "Undo an earlier step now and report its final facts.";
  spec.scalar =
      ParamSpec{.name = "step", .type = ParamType::StepRef, .required = true, .help = "the name of an earlier step"};
  spec.facts_of_target = true;
  spec.example =
      "- name: nap\n  sleep: {duration: 1s}\n"
      "- revert: nap    # a sleep changed nothing, so nothing is undone\n";
  return Kind{std::move(spec), run_revert, {}};
}

namespace {

StepResult run_revert(const Params& params, StepContext& ctx) {
  auto facts = ctx.revert(params.scalar_str());
  if (!facts) return StepResult::error(facts.error());
  return StepResult::ok(std::move(facts).value());
}

}  // namespace

}  // namespace rxerun::steps
