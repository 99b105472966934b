#include "sys/model/tools.h"

#include <csignal>
#include <stdexcept>

#include "base/strings.h"

namespace rxerun::sys {

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

class ModelProgram final : public RunningTool {
 public:
  ModelProgram(ModelTools& tools, pid_t pid, ProgramRun run)
      : tools_(tools), pid_(pid), run_(std::move(run)), start_(tools.clock ? tools.clock->now() : SteadyTime{}) {}

  ~ModelProgram() override {
    if (!ended()) {
      tools_.log.push_back("drop " + std::to_string(pid_));
      stop(Duration(500));
    }
  }

  pid_t pid() const override { return pid_; }

  std::optional<ExitStatus> poll() override {
    ended();
    return status_;
  }

  ToolWait wait(SteadyTime deadline, Interrupt& interrupt) override {
    if (ended()) return ToolWait::Exited;
    if (interrupt.requested()) return ToolWait::Interrupted;
    if (stuck_) return ToolWait::Deadline;
    if (!tools_.clock) {
      if (!run_.exit) return ToolWait::Deadline;
      finish(*run_.exit);
      return ToolWait::Exited;
    }
    const bool ends = run_.exit && end() <= deadline;
    const SteadyTime until = ends ? end() : deadline;
    if (until == SteadyTime::max()) throw std::logic_error("a wait without end on a program without end");
    if (tools_.clock->wait_until(until, interrupt) == WaitResult::Interrupted) return ToolWait::Interrupted;
    return ended() ? ToolWait::Exited : ToolWait::Deadline;
  }

  ToolStop stop(Duration grace) override {
    if (stuck_) return {std::nullopt, true, "model_wchan"};
    if (ended()) return {status_};
    if (run_.stuck) {
      tools_.log.push_back("stuck " + std::to_string(pid_));
      stuck_ = true;
      return {std::nullopt, true, "model_wchan"};
    }
    const bool term = grace.count() > 0 && !run_.ignores_term;
    tools_.log.push_back((term ? "stop " : "kill ") + std::to_string(pid_));
    finish(ExitStatus{.signal = term ? SIGTERM : SIGKILL});
    return {status_};
  }

  const std::string& out() const override { return run_.out; }
  const std::string& err() const override { return run_.err; }
  std::uint64_t out_total() const override { return out_total_; }
  std::uint64_t err_total() const override { return err_total_; }
  void keep_last(std::size_t n) {
    for (std::string* text : {&run_.out, &run_.err})
      if (text->size() > n) text->erase(0, text->size() - n);
  }

 private:
  SteadyTime end() const { return start_ + run_.takes; }

  bool ended() {
    if (!status_ && !stuck_ && run_.exit && (!tools_.clock || tools_.clock->now() >= end())) finish(*run_.exit);
    return status_.has_value();
  }

  void finish(ExitStatus s) {
    status_ = s;
    tools_.alive.erase(pid_);
  }

  ModelTools& tools_;
  pid_t pid_;
  ProgramRun run_;
  SteadyTime start_;
  std::optional<ExitStatus> status_;
  bool stuck_ = false;
  std::uint64_t out_total_ = run_.out.size(), err_total_ = run_.err.size();
};

}  // namespace

Result<std::unique_ptr<RunningTool>> ModelTools::start(const ToolSpec& spec) {
  started.push_back(spec);
  if (auto f = k_.fault("tools.start", spec.argv.empty() ? "" : spec.argv.front())) return *f;
  // A program without its own namespace runs in the step's.
  ToolSpec shown = spec;
  if (!shown.netns && !k_.netns.empty()) shown.netns = k_.netns;
  std::string what = !spec.what.empty() ? spec.what : "run " + (spec.argv.empty() ? std::string("?") : spec.argv[0]);
  if (shown.netns) what += " in netns " + *shown.netns;
  k_.did_anywhere("tools", std::move(what), tool_command_line(shown));

  ProgramRun run = on_start ? on_start(spec) : ProgramRun{.exit = ExitStatus{}};
  const pid_t pid = next_pid_++;
  log.push_back("start " + std::to_string(pid) + " " + shell_join(spec.argv));
  alive.insert(pid);
  // As the real tools: the whole output to the copies, the last keep_bytes kept.
  if (spec.copy_out) spec.copy_out(run.out);
  if (spec.copy_err) spec.copy_err(run.err);
  auto tool = std::make_unique<ModelProgram>(*this, pid, run);
  if (spec.keep_bytes) tool->keep_last(spec.keep_bytes);
  return std::unique_ptr<RunningTool>(std::move(tool));
}

Result<bool> ModelTools::listening(SocketProto proto, std::uint16_t port) {
  if (++probes <= ready_after) return false;
  return k_.open_world || sockets.contains({proto, port});
}

Result<bool> ModelTools::exists(const std::string& path) {
  if (++probes <= ready_after) return false;
  return k_.open_world || files.contains(path);
}

Result<std::vector<pid_t>> ModelTools::stop_marked(const std::string& token, Duration) {
  // No command does this (pkill matches names, not environments).
  k_.did_anywhere("tools", "stop every process that has " + token + " in its environment", "");
  stopped_marked.push_back(token);
  auto it = marked.find(token);
  if (it == marked.end()) return std::vector<pid_t>{};
  auto pids = it->second;
  marked.erase(it);
  return pids;
}

// Numbered, zero-padded to the length asked: "0000000000000001", ...
std::string ModelTools::random_word(std::size_t length) {
  std::string n = std::to_string(++words_);
  return n.size() >= length ? n : std::string(length - n.size(), '0') + n;
}

}  // namespace rxerun::sys
