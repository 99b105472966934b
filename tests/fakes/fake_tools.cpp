#include "fakes/fake_tools.h"

#include <csignal>

#include "base/strings.h"
#include "fakes/fake_system.h"

namespace rxerun::fakes {

namespace {

class FakeRunningTool final : public sys::RunningTool {
 public:
  FakeRunningTool(FakeTools& tools, pid_t pid, FakeRun run)
      : tools_(tools), pid_(pid), run_(std::move(run)), start_(tools.clock ? tools.clock->now() : sys::SteadyTime{}) {}

  ~FakeRunningTool() override {
    if (!ended()) {
      tools_.log.push_back("drop " + std::to_string(pid_));
      stop(Duration(500));
    }
  }

  pid_t pid() const override { return pid_; }

  std::optional<sys::ExitStatus> poll() override {
    ended();
    return status_;
  }

  sys::ToolWait wait(sys::SteadyTime deadline, sys::Interrupt& interrupt) override {
    if (ended()) return sys::ToolWait::Exited;
    if (interrupt.requested()) return sys::ToolWait::Interrupted;
    if (stuck_) return sys::ToolWait::Deadline;
    if (!tools_.clock) {
      if (!run_.exit) return sys::ToolWait::Deadline;
      finish(*run_.exit);
      return sys::ToolWait::Exited;
    }
    const bool ends = run_.exit && end() <= deadline;
    const sys::SteadyTime until = ends ? end() : deadline;
    if (until == sys::SteadyTime::max()) throw std::logic_error("FakeTools: a wait without end on a tool without end");
    if (tools_.clock->wait_until(until, interrupt) == sys::WaitResult::Interrupted) return sys::ToolWait::Interrupted;
    if (ended()) return sys::ToolWait::Exited;
    return sys::ToolWait::Deadline;
  }

  sys::ToolStop stop(Duration grace) override {
    if (stuck_) return {std::nullopt, true, "fake_wchan"};
    if (ended()) return {status_};
    if (run_.stuck) {
      tools_.log.push_back("stuck " + std::to_string(pid_));
      stuck_ = true;
      return {std::nullopt, true, "fake_wchan"};
    }
    const bool term = grace.count() > 0 && !run_.ignores_term;
    tools_.log.push_back((term ? "stop " : "kill ") + std::to_string(pid_));
    finish(sys::ExitStatus{.signal = term ? SIGTERM : SIGKILL});
    return {status_};
  }

  const std::string& out() const override { return run_.out; }
  const std::string& err() const override { return run_.err; }
  std::uint64_t out_total() const override { return out_total_; }
  void keep_last(std::size_t n) {
    for (std::string* text : {&run_.out, &run_.err})
      if (text->size() > n) text->erase(0, text->size() - n);
  }
  std::uint64_t err_total() const override { return err_total_; }

 private:
  sys::SteadyTime end() const { return start_ + run_.takes; }

  bool ended() {
    if (!status_ && !stuck_ && run_.exit && (!tools_.clock || tools_.clock->now() >= end())) finish(*run_.exit);
    return status_.has_value();
  }

  void finish(sys::ExitStatus s) {
    status_ = s;
    tools_.alive.erase(pid_);
  }

  FakeTools& tools_;
  pid_t pid_;
  FakeRun run_;
  sys::SteadyTime start_;
  std::optional<sys::ExitStatus> status_;
  bool stuck_ = false;
  std::uint64_t out_total_ = run_.out.size(), err_total_ = run_.err.size();
};

}  // namespace

Result<std::unique_ptr<sys::RunningTool>> FakeTools::start(const sys::ToolSpec& spec) {
  started.push_back(spec);
  if (error) return *error;
  FakeRun run = on_start ? on_start(spec) : FakeRun{.exit = sys::ExitStatus{}};
  const pid_t pid = next_pid_++;
  log.push_back("start " + std::to_string(pid) + " " + shell_join(spec.argv));
  alive.insert(pid);
  // As the real tools: the whole output to the copies, the last keep_bytes kept.
  if (spec.copy_out) spec.copy_out(run.out);
  if (spec.copy_err) spec.copy_err(run.err);
  auto tool = std::make_unique<FakeRunningTool>(*this, pid, run);
  if (spec.keep_bytes) tool->keep_last(spec.keep_bytes);
  return std::unique_ptr<sys::RunningTool>(std::move(tool));
}

Result<bool> FakeTools::listening(sys::SocketProto proto, std::uint16_t port) {
  if (++probes <= ready_after) return false;
  return sockets.contains({proto, port});
}

Result<bool> FakeTools::exists(const std::string& path) {
  if (++probes <= ready_after) return false;
  return files.contains(path);
}

Result<std::vector<pid_t>> FakeTools::stop_marked(const std::string& token, Duration) {
  stopped_marked.push_back(token);
  auto it = marked.find(token);
  if (it == marked.end()) return std::vector<pid_t>{};
  auto pids = it->second;
  marked.erase(it);
  return pids;
}

}  // namespace rxerun::fakes
