// sleep: wait for a while. Also the simplest way to exercise the engine's
// outcomes: a sleep that outlives its `timeout` ends as `timeout`.

#include <chrono>

#include "engine/step.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_sleep(const Params& params, StepContext& ctx);

}  // namespace

Kind sleep_kind() {
  KindSpec spec;
  spec.name = "sleep";
  spec.summary = "Wait for a fixed time.";
  spec.params = {
      {.name = "duration", .type = ParamType::Duration, .required = true, .help = "how long to wait: 500ms, 2s, 1m"},
  };
  spec.facts = {{"slept_ms", "milliseconds actually waited"}};
  spec.example = "- name: settle\n  sleep: {duration: 500ms}\n";
  spec.default_timeout = Duration::zero();  // the duration is the wait; no timeout unless one is given
  return Kind{std::move(spec), run_sleep, {}};
}

namespace {

StepResult run_sleep(const Params& params, StepContext& ctx) {
  const Duration wanted = params.duration("duration");
  const auto start = ctx.sys().clock.now();
  const WaitStatus status = ctx.sleep_for(wanted);
  const auto slept = std::chrono::duration_cast<Duration>(ctx.sys().clock.now() - start);
  nlohmann::json facts = {{"slept_ms", slept.count()}};
  switch (status) {
    case WaitStatus::Done: return StepResult::ok(facts);
    case WaitStatus::Deadline:
      return StepResult::timeout("the step's timeout ran out before " + format_duration(wanted) + " had passed", facts);
    case WaitStatus::Interrupted: return StepResult::error("interrupted");
  }
  return StepResult::error("unreachable");
}

}  // namespace

}  // namespace rxerun::steps
