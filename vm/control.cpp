#include "vm/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>

namespace rxerun::vm {

namespace fs = std::filesystem;

Result<void> ControlChannel::send(const nlohmann::json& message) {
  const std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    // A socket (the host's end) whose reader is gone must not raise SIGPIPE.
    ssize_t n = ::send(fd_.get(), line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd_.get(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("the control channel is closed", errno);
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Result<ControlChannel::Received> ControlChannel::receive(int stop_fd,
                                                         std::optional<std::chrono::milliseconds> timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::milliseconds(0));
  for (;;) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      const std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (line.empty()) continue;
      nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
      if (message.is_discarded() || !message.is_object())
        return make_error("the control channel carried a line that is not a JSON object: " + line.substr(0, 80));
      return Received{.message = std::move(message)};
    }
    pollfd fds[2] = {{fd_.get(), POLLIN, 0}, {stop_fd, POLLIN, 0}};
    int wait_ms = -1;
    if (timeout) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Received{.timed_out = true};
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    const int r = ::poll(fds, stop_fd >= 0 ? 2 : 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return make_error("cannot wait on the control channel", errno);
    if (stop_fd >= 0 && (fds[1].revents & POLLIN)) return Received{.stopped = true};
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    const ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Received{.closed = true};
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

Result<ControlChannel> connect_control(const fs::path& path, std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof addr.sun_path)
    return make_error("the control socket's path is too long for a unix socket: " + path.string());
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return make_error("cannot create a unix socket", errno);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0)
      return ControlChannel(std::move(fd));
    const int err = errno;
    if ((err != ENOENT && err != ECONNREFUSED) || std::chrono::steady_clock::now() > until)
      return make_error("cannot connect to the lab VM's control socket " + path.string(), err);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<ControlChannel> open_agent_port() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/class/virtio-ports", ec)) {
    std::ifstream in(entry.path() / "name");
    std::string name;
    std::getline(in, name);
    if (name != kAgentPort) continue;
    const fs::path dev = fs::path("/dev") / entry.path().filename();
    UniqueFd fd(::open(dev.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd.valid()) return make_error("cannot open the control port " + dev.string(), errno);
    return ControlChannel(std::move(fd));
  }
  return make_error(std::string("no virtio-serial port named ") + std::string(kAgentPort) +
                    (ec ? " (no /sys/class/virtio-ports: is virtio_console loaded?)" : ""));
}

}  // namespace rxerun::vm
