#include "sys/process_start.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <string>

namespace rxerun::sys {

Result<std::uint64_t> process_start_time(pid_t pid) {
  if (pid <= 0) return make_error("no process can have pid " + std::to_string(pid), EINVAL);
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return make_error("no process " + std::to_string(pid), ESRCH);
    return make_error("cannot open " + path, err);
  }
  std::string text;
  char buf[1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      // A process that ends between open() and read() answers ESRCH.
      if (err == ESRCH) return make_error("no process " + std::to_string(pid), ESRCH);
      return make_error("cannot read " + path, err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so the
  // fields are counted from the last ')'. The one after it is field 3.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return make_error(path + " is not what the kernel writes", EBADMSG);
  std::size_t pos = close + 1;
  for (int field = 3; field <= 22; ++field) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    const std::size_t end = text.find(' ', pos);
    if (pos >= text.size()) break;
    if (field == 22) {
      std::uint64_t start = 0;
      const char* last = text.data() + (end == std::string::npos ? text.size() : end);
      auto [p, ec] = std::from_chars(text.data() + pos, last, start);
      if (ec != std::errc() || p != last) break;
      return start;
    }
    if (end == std::string::npos) break;
    pos = end;
  }
  return make_error(path + " is not what the kernel writes", EBADMSG);
}

}  // namespace rxerun::sys
