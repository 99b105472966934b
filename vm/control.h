#pragma once
// The control channel between the host's rxerun and the agent in a lab VM
// (a node of a two-node lab, docs/nodes.md): one JSON object per line, each
// way, over a virtio-serial port. On the host it is the unix socket qemu
// listens on (LabRun::control); in the guest the port's character device
// (/dev/vportNpM, found by its name kAgentPort under /sys/class/virtio-ports).

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/fd.h"
#include "base/result.h"

namespace rxerun::vm {

// The virtio-serial port's name, as qemu gives it and the guest finds it.
inline constexpr std::string_view kAgentPort = "org.rxerun.agent";

class ControlChannel {
 public:
  explicit ControlChannel(UniqueFd fd) : fd_(std::move(fd)) {}

  // Writes one message as one line. An error when the other end is gone.
  Result<void> send(const nlohmann::json& message);

  // What receive() found: a message, the other end closed the channel, or
  // `stop_fd` became readable first (Ctrl-C).
  struct Received {
    std::optional<nlohmann::json> message;
    bool closed = false;
    bool stopped = false;
    bool timed_out = false;
  };
  // The next message. Waits for ever (or until `timeout`) unless `stop_fd`
  // (>= 0) becomes readable. A line that is not a JSON object is an error.
  Result<Received> receive(int stop_fd = -1, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
  std::string buffer_;  // bytes read past the last whole line
};

// The host's end: connects to qemu's socket at `path`, trying again while
// it is not there yet (qemu makes it as it starts) until `timeout`.
Result<ControlChannel> connect_control(const std::filesystem::path& path, std::chrono::milliseconds timeout);

// The guest's end: the character device of the port named kAgentPort.
Result<ControlChannel> open_agent_port();

}  // namespace rxerun::vm
