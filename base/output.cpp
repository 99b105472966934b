#include "base/output.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace rxerun {

namespace {

// Points `fd` at /dev/null, for good.
void silence(int fd) {
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) return;
  if (null != fd) {
    ::dup2(null, fd);  // the copy has no FD_CLOEXEC: a standard stream stays one across exec
    ::close(null);
  } else {
    ::fcntl(fd, F_SETFD, 0);
  }
}

}  // namespace

void write_out(std::FILE* out, std::string_view text) {
  if (text.empty()) return;
  const std::size_t n = std::fwrite(text.data(), 1, text.size(), out);
  if (n == text.size() && std::fflush(out) == 0) return;
  // EPIPE (the reader left), EBADF (closed), ENOSPC or EIO (a full disk or a
  // dead terminal): nothing more can be said there, and the run must go on.
  const int fd = ::fileno(out);
  if (fd >= 0) silence(fd);
  std::clearerr(out);
}

void protect_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) silence(fd);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

}  // namespace rxerun
