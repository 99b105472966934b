// wait: wait for a program an earlier `exec` left running in the
// background to end, and report its end as facts: exit, stdout, stderr (the
// last 64 KiB of all it wrote since it started), duration_s. Its outcome
// is the program's: ok on exit 0, fail otherwise, timeout when it still
// runs at this step's timeout (then it is stopped). It changes nothing.

#include <chrono>

#include <fmt/format.h>

#include "base/try.h"
#include "engine/step.h"
#include "steps/common/program.h"
#include "steps/common/traffic.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_wait(const Params& params, StepContext& ctx);

}  // namespace

Kind wait_kind() {
  KindSpec spec;
  spec.name = "wait";
  spec.summary = "Wait for a background exec to end; its exit and output as facts.";
  spec.scalar = ParamSpec{
      .name = "step", .type = ParamType::StepRef, .required = true, .help = "the name of an earlier background exec"};
  spec.facts = program_fact_specs();
  spec.facts.insert(
      spec.facts.end(),
      {
          {"duration_s", "seconds this step waited"},
          {"DEV.COUNTER",
           "deltas, across the wait, of every rxe device's and netdev's counters in the step's namespace"},
      });
  spec.ends_background = true;
  spec.example =
      "- name: server\n"
      "  exec: {argv: [ibv_rc_pingpong, -d, rxe0, -g, \"1\"], background: true, ready: {tcp: 18515}}\n"
      "- wait: server\n"
      "  expect: {exit: 0, stdout: \"~ bytes in\"}\n";
  spec.default_timeout = Duration(60'000);
  return Kind{std::move(spec), run_wait, {}};
}

namespace {

StepResult run_wait(const Params& params, StepContext& ctx) {
  auto& sys = ctx.sys();
  const std::string target = params.scalar_str();
  std::unique_ptr<sys::RunningTool> tool = ctx.take_running(target);
  if (!tool)
    return StepResult::error(fmt::format(
        "step {} left no program running: it is not an exec with `background: true`, it did not get ready, or a "
        "wait or revert took it already",
        target));
  RXERUN_TRY_ASSIGN(const CounterWindow window, CounterWindow::open(ctx, {std::nullopt}));
  const auto start = sys.clock.now();
  const sys::ToolWait waited = tool->wait(ctx.deadline(), sys.interrupt);
  const sys::ToolStop stop = tool->stop(kProgramStopGrace);
  const std::string program = "the program of step " + target;
  nlohmann::json facts = program_facts(*tool, stop, program);
  facts["duration_s"] = rounded(std::chrono::duration<double>(sys.clock.now() - start).count(), 3);
  RXERUN_TRY(window.close(ctx, facts));
  return program_result(waited, *tool, stop, program, std::move(facts));
}

}  // namespace

}  // namespace rxerun::steps
