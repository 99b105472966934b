#include "sys/recording/tools.h"

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

// Environment first: `LC_ALL=C ip netns exec NS ib_write_bw ...` hands it
// through `ip netns exec` to the tool.
std::string tool_command_line(const ToolSpec& spec) {
  std::string line;
  for (const auto& [k, v] : spec.env) line += shell_quote(k + "=" + v) + " ";
  if (spec.netns) line += "ip netns exec " + shell_quote(*spec.netns) + " ";
  line += shell_join(spec.argv);
  if (!spec.cwd.empty()) line = "cd " + shell_quote(spec.cwd) + " && " + line;
  if (spec.input) line = "printf %s " + shell_quote(*spec.input) + " | " + line;
  return line;
}

namespace {

class RecordedTool final : public RunningTool {
 public:
  explicit RecordedTool(pid_t pid) : pid_(pid) {}
  pid_t pid() const override { return pid_; }
  std::optional<ExitStatus> poll() override { return ExitStatus{}; }
  ToolWait wait(SteadyTime, Interrupt&) override { return ToolWait::Exited; }
  ToolStop stop(Duration) override { return ToolStop{ExitStatus{}}; }
  const std::string& out() const override { return none_; }
  const std::string& err() const override { return none_; }

 private:
  pid_t pid_;
  std::string none_;
};

}  // namespace

Result<std::unique_ptr<RunningTool>> RecordingTools::start(const ToolSpec& spec) {
  // A tool without its own namespace runs in the step's.
  ToolSpec shown = spec;
  if (!shown.netns && !log_.netns().empty()) shown.netns = log_.netns();
  std::string what = !spec.what.empty() ? spec.what : "run " + (spec.argv.empty() ? std::string("?") : spec.argv[0]);
  if (shown.netns) what += " in netns " + *shown.netns;
  log_.record_anywhere(std::move(what), tool_command_line(shown));
  return std::unique_ptr<RunningTool>(std::make_unique<RecordedTool>(next_pid_++));
}

Result<std::vector<pid_t>> RecordingTools::stop_marked(const std::string& token, Duration) {
  // No command does this (pkill matches names, not environments).
  log_.record_anywhere("stop every process that has " + token + " in its environment", "");
  return std::vector<pid_t>{};
}

}  // namespace rxerun::sys
