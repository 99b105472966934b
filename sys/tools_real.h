#pragma once
// Tools as real child processes, on sys/process.h's spawn(): a namespace is
// entered (setns) just around the fork, so the child starts inside it and
// the calling thread returns to its own at once; a pidfd tells when the
// child ends, so that waiting also drains its output and hears Ctrl-C.

#include <chrono>

#include "sys/netns.h"
#include "sys/tools.h"

namespace rxerun::sys {

class RealTools final : public Tools {
 public:
  Result<std::unique_ptr<RunningTool>> start(const ToolSpec& spec) override;
  Result<bool> listening(SocketProto proto, std::uint16_t port) override;
  Result<bool> exists(const std::string& path) override;
  Result<std::vector<pid_t>> stop_marked(const std::string& token, Duration grace) override;
  std::string random_word(std::size_t length) override;

  // How long a SIGKILLed tool may take to go before it counts as stuck in
  // the kernel. Tests shorten it.
  std::chrono::milliseconds kill_wait{2000};

 private:
  RealNetns netns_;
};

}  // namespace rxerun::sys
