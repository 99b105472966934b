#include "steps/common/program.h"

#include <string.h>

#include <fmt/format.h>

#include "steps/common/tool_pair.h"

namespace rxerun::steps {

namespace {

std::string last_bytes(const std::string& text, std::size_t n) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

nlohmann::json exit_value(const sys::ExitStatus& status) {
  if (!status.signal) return status.code;
  const char* name = sigabbrev_np(status.signal);
  return name ? std::string("SIG") + name : std::to_string(status.signal);
}

}  // namespace

std::vector<FactSpec> program_fact_specs(unsigned when) {
  return {
      {.name = "exit", .help = "its exit code, or the signal that ended it (SIGKILL)", .when = when},
      {.name = "stdout", .help = "the last 64 KiB of its standard output", .when = when},
      {.name = "stderr", .help = "the last 64 KiB of its standard error", .when = when},
      {.name = "stuck", .help = "set when it did not die after SIGKILL (asleep in the kernel)", .when = when},
  };
}

std::string program_name(const std::vector<std::string>& argv) {
  if (argv.empty()) return "the program";
  if (argv.size() == 3 && argv[0] == "/bin/sh" && argv[1] == "-c") return "the shell command";
  return argv[0];
}

nlohmann::json program_facts(const sys::RunningTool& tool, const sys::ToolStop& stop, const std::string& program) {
  nlohmann::json facts = nlohmann::json::object();
  facts["stdout"] = last_bytes(tool.out(), kProgramFactBytes);
  facts["stderr"] = last_bytes(tool.err(), kProgramFactBytes);
  if (stop.status) facts["exit"] = exit_value(*stop.status);
  if (stop.stuck)
    facts["stuck"] = fmt::format("{} (pid {}) did not die after SIGKILL{}", program, tool.pid(),
                                 stop.wchan.empty() ? "" : ": it sleeps in the kernel at " + stop.wchan);
  return facts;
}

StepResult program_result(sys::ToolWait waited, const sys::RunningTool& tool, const sys::ToolStop& stop,
                          const std::string& program, nlohmann::json facts) {
  const std::string said = last_lines(tool.err(), tool.out());
  const std::string stuck = facts.value("stuck", std::string());
  StepResult result;
  switch (waited) {
    case sys::ToolWait::Exited:
      if (stop.status && stop.status->ok()) {
        result = StepResult::ok(std::move(facts));
      } else {
        result = StepResult::fail(
            fmt::format("{} ended with {}{}", program, stop.status ? stop.status->describe() : "no status",
                        said.empty() ? "" : ": " + said),
            std::move(facts));
      }
      break;
    case sys::ToolWait::Deadline:
      result = StepResult::timeout(fmt::format("{} was still running at the step's timeout (stopped){}", program,
                                               said.empty() ? "" : "; it last said: " + said),
                                   std::move(facts));
      break;
    case sys::ToolWait::Interrupted: result = StepResult::error("interrupted"); break;
  }
  if (!stuck.empty()) result.hints.push_back(stuck + "; let go");
  return result;
}

}  // namespace rxerun::steps
