#include "app/agent_tools.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace rxerun {

namespace {

nlohmann::json status_json(const std::optional<sys::ExitStatus>& s) {
  if (!s) return nullptr;
  return {{"code", s->code}, {"signal", s->signal}};
}

std::optional<sys::ExitStatus> status_from(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  return sys::ExitStatus{.code = j.value("code", 0), .signal = j.value("signal", 0)};
}

nlohmann::json output_json(const sys::RunningTool& tool) {
  return {{"out", tool.out()}, {"err", tool.err()}};
}

// A tool of another node, seen through the link.
class RemoteTool final : public sys::RunningTool {
 public:
  RemoteTool(ToolLink& link, std::string node, int id, pid_t pid, sys::Clock& clock)
      : link_(link), node_(std::move(node)), id_(id), pid_(pid), clock_(clock) {}
  ~RemoteTool() override {
    if (!status_ && !stopped_) (void)stop(Duration(1000));
    (void)link_.call({{"node", node_}, {"op", "forget"}, {"id", id_}});
  }
  RemoteTool(const RemoteTool&) = delete;
  RemoteTool& operator=(const RemoteTool&) = delete;

  pid_t pid() const override { return pid_; }
  std::optional<sys::ExitStatus> poll() override {
    if (!status_) update(link_.call({{"node", node_}, {"op", "poll"}, {"id", id_}}));
    return status_;
  }
  sys::ToolWait wait(sys::SteadyTime deadline, sys::Interrupt& interrupt) override {
    if (status_) return sys::ToolWait::Exited;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.now());
    const long long ms = std::clamp<long long>(left.count(), 0, 24LL * 3600 * 1000);
    update(link_.call({{"node", node_}, {"op", "wait"}, {"id", id_}, {"ms", ms}}));
    if (status_) return sys::ToolWait::Exited;
    return interrupt.requested() ? sys::ToolWait::Interrupted : sys::ToolWait::Deadline;
  }
  sys::ToolStop stop(Duration grace) override {
    sys::ToolStop s;
    auto reply = link_.call({{"node", node_}, {"op", "stop"}, {"id", id_}, {"grace_ms", grace.count()}});
    stopped_ = true;
    update(reply);
    s.status = status_;
    if (reply) {
      s.stuck = reply->value("stuck", false);
      s.wchan = reply->value("wchan", "");
    }
    return s;
  }
  const std::string& out() const override { return out_; }
  const std::string& err() const override { return err_; }

 private:
  void update(const Result<nlohmann::json>& reply) {
    if (!reply) {
      // The other node is gone: so is its tool.
      if (!status_) status_ = sys::ExitStatus{.code = 0, .signal = 9};
      err_ += "\n(rxerun: " + reply.error().message + ")";
      return;
    }
    if (reply->contains("status")) status_ = status_from((*reply)["status"]);
    out_ = reply->value("out", out_);
    err_ = reply->value("err", err_);
  }

  ToolLink& link_;
  std::string node_;
  int id_;
  pid_t pid_;
  sys::Clock& clock_;
  std::optional<sys::ExitStatus> status_;
  bool stopped_ = false;
  std::string out_, err_;
};

}  // namespace

Result<nlohmann::json> ChannelToolLink::call(nlohmann::json request) {
  if (auto sent = channel_.send({{"tool", std::move(request)}}); !sent) return sent.error();
  for (;;) {
    auto got = channel_.receive();
    if (!got) return got.error();
    if (!got->message) return make_error("the host closed the control channel");
    if (got->message->contains("tool_reply")) {
      const nlohmann::json& reply = (*got->message)["tool_reply"];
      if (reply.contains("error")) return make_error(reply.value("error", "the tool call failed"));
      return reply;
    }
  }
}

Result<std::unique_ptr<sys::RunningTool>> RoutingTools::start(const sys::ToolSpec& spec) {
  if (spec.node.empty() || spec.node == node_) return local_.start(spec);
  nlohmann::json request = {{"node", spec.node}, {"op", "start"},   {"argv", spec.argv},
                            {"env", spec.env},   {"cwd", spec.cwd}, {"keep_bytes", spec.keep_bytes}};
  if (spec.netns) request["netns"] = *spec.netns;
  if (spec.input) request["input"] = *spec.input;
  auto reply = link_.call(std::move(request));
  if (!reply) return make_error("on node " + spec.node + ": " + reply.error().message);
  return std::unique_ptr<sys::RunningTool>(
      new RemoteTool(link_, spec.node, reply->value("id", 0), reply->value("pid", 0), clock_));
}

nlohmann::json ToolService::handle(const nlohmann::json& request) {
  const std::string op = request.value("op", "");
  if (op == "start") {
    sys::ToolSpec spec;
    spec.argv = request.value("argv", std::vector<std::string>{});
    spec.env = request.value("env", std::map<std::string, std::string>{});
    spec.cwd = request.value("cwd", "");
    spec.keep_bytes = request.value("keep_bytes", std::size_t{0});
    if (request.contains("netns")) spec.netns = request.value("netns", "");
    if (request.contains("input")) spec.input = request.value("input", "");
    auto started = sys_.tools.start(spec);
    if (!started) return {{"error", started.error().message}};
    const int id = next_id_++;
    const pid_t pid = (*started)->pid();
    tools_[id] = std::move(*started);
    return {{"id", id}, {"pid", pid}};
  }
  const auto it = tools_.find(request.value("id", 0));
  if (it == tools_.end()) return op == "forget" ? nlohmann::json::object() : nlohmann::json{{"error", "no such tool"}};
  sys::RunningTool& tool = *it->second;
  if (op == "poll") {
    nlohmann::json reply = output_json(tool);
    reply["status"] = status_json(tool.poll());
    return reply;
  }
  if (op == "wait") {
    const auto deadline = sys_.clock.now() + std::chrono::milliseconds(request.value("ms", 0LL));
    (void)tool.wait(deadline, sys_.interrupt);
    nlohmann::json reply = output_json(tool);
    reply["status"] = status_json(tool.poll());
    return reply;
  }
  if (op == "stop") {
    const sys::ToolStop s = tool.stop(Duration(request.value("grace_ms", 1000LL)));
    nlohmann::json reply = output_json(tool);
    reply["status"] = status_json(s.status);
    reply["stuck"] = s.stuck;
    reply["wchan"] = s.wchan;
    return reply;
  }
  if (op == "forget") {
    tools_.erase(it);
    return nlohmann::json::object();
  }
  return {{"error", "no tool operation '" + op + "'"}};
}

}  // namespace rxerun
