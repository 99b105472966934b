// revert: undo an earlier step now (lift a fault, delete a netdev under a
// live rxe device) and report that step's final facts, so that an `expect`
// on the revert proves what a fault hit.

#include "base/try.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_revert(const Params& params, StepContext& ctx);
void picture_revert(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

Kind revert_kind() {
  KindSpec spec;
  spec.name = "revert";
  spec.summary = "Undo an earlier step now and report its final facts.";
  spec.scalar =
      ParamSpec{.name = "step", .type = ParamType::StepRef, .required = true, .help = "the name of an earlier step"};
  spec.facts_of_target = true;
  spec.example =
      "- name: no-rocev2\n  block: {proto: udp, port: 4791}\n"
      "- revert: no-rocev2    # lift the fault now; its final counts as facts\n"
      "  expect: {packets: \">= 0\"}\n";
  Kind kind{std::move(spec), run_revert, {}};
  kind.picture = picture_revert;
  return kind;
}

namespace {

StepResult run_revert(const Params& params, StepContext& ctx) {
  RXERUN_TRY_ASSIGN(nlohmann::json facts, ctx.revert(params.scalar_str()));
  return StepResult::ok(std::move(facts));
}

}  // namespace

namespace {

// The faults of the step it reverts last only until this step.
void picture_revert(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  picture.lift(picture_text(p), step.name);
}

}  // namespace

}  // namespace rxerun::steps
