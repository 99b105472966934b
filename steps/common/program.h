#pragma once
// What exec and wait both say about a program of the user's once it ended
// (or was stopped): its exit, the last 64 KiB of its output, a program that
// survived SIGKILL, and the outcome: ok on exit 0, fail otherwise, timeout
// when it still ran at the step's deadline.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "engine/step.h"
#include "sys/tools.h"

namespace rxerun::steps {

constexpr std::size_t kProgramFactBytes = 64 * 1024;  // stdout and stderr facts: their last bytes
constexpr Duration kProgramStopGrace{2'000};          // SIGTERM to SIGKILL

// The facts program_facts() reports, for a kind's declaration.
std::vector<FactSpec> program_fact_specs(unsigned when = kAtStep);  // reported at `when` (kind.h)

// "ibv_rc_pingpong", or "the shell command" for /bin/sh -c.
std::string program_name(const std::vector<std::string>& argv);

// exit (the code, or the signal's name: "SIGKILL"), stdout, stderr, and
// stuck when it did not die.
nlohmann::json program_facts(const sys::RunningTool& tool, const sys::ToolStop& stop, const std::string& program);

// The step's result from how the wait ended, with `facts`.
StepResult program_result(sys::ToolWait waited, const sys::RunningTool& tool, const sys::ToolStop& stop,
                          const std::string& program, nlohmann::json facts);

}  // namespace rxerun::steps
