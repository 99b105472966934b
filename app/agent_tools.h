#pragma once
// Tools (sys/tools.h) across the nodes of a two-node lab (docs/nodes.md).
// A pair step whose ends are on two nodes runs on the client's node; its
// server is a tool of the other node. RoutingTools starts such a tool
// through the control channel: the host passes the request on to the other
// node's agent, whose ToolService starts it and answers each later call
// (poll, wait, stop) the same way. Everything else stays local.

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "sys/system.h"
#include "sys/tools.h"
#include "vm/control.h"

namespace rxerun {

// The agent's side of a tool call: the request goes to the node it names
// and its answer comes back (an Error: that node, or the way to it, is gone).
class ToolLink {
 public:
  virtual ~ToolLink() = default;
  virtual Result<nlohmann::json> call(nlohmann::json request) = 0;
};

// Over the control channel: sends {"tool": REQUEST} and waits for the
// {"tool_reply": ...} the host passes back.
class ChannelToolLink final : public ToolLink {
 public:
  explicit ChannelToolLink(vm::ControlChannel& channel) : channel_(channel) {}
  Result<nlohmann::json> call(nlohmann::json request) override;

 private:
  vm::ControlChannel& channel_;
};

class RoutingTools final : public sys::Tools {
 public:
  RoutingTools(sys::Tools& local, ToolLink& link, std::string node, sys::Clock& clock)
      : local_(local), link_(link), node_(std::move(node)), clock_(clock) {}
  Result<std::unique_ptr<sys::RunningTool>> start(const sys::ToolSpec& spec) override;
  Result<bool> listening(sys::SocketProto proto, std::uint16_t port) override { return local_.listening(proto, port); }
  Result<bool> exists(const std::string& path) override { return local_.exists(path); }
  Result<std::vector<pid_t>> stop_marked(const std::string& token, Duration grace) override {
    return local_.stop_marked(token, grace);
  }
  std::string random_word(std::size_t length) override { return local_.random_word(length); }

 private:
  sys::Tools& local_;
  ToolLink& link_;
  std::string node_;
  sys::Clock& clock_;
};

// The other side: the tools this node runs for a step of another node.
class ToolService {
 public:
  explicit ToolService(sys::System& sys) : sys_(sys) {}
  // The answer to one request (its "op": start, poll, wait, stop, forget).
  nlohmann::json handle(const nlohmann::json& request);

 private:
  sys::System& sys_;
  std::map<int, std::unique_ptr<sys::RunningTool>> tools_;
  int next_id_ = 1;
};

}  // namespace rxerun
