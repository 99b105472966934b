#pragma once
// One owner for a file descriptor: closed on every path out (RAII), moved
// but never copied, so that no error path leaks one and none is closed twice.

#include <unistd.h>

#include <utility>

namespace rxerun {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Hands the descriptor over to a caller that keeps it elsewhere.
  int release() { return std::exchange(fd_, -1); }
  // Closes now and returns close()'s result: on NFS a late write error shows
  // only here, so a writer checks it once instead of losing it in reset().
  int close() { return fd_ < 0 ? 0 : ::close(std::exchange(fd_, -1)); }

 private:
  int fd_ = -1;
};

}  // namespace rxerun
