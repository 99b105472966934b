#include "sys/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rxerun::sys {

namespace {

class RealNetnsScope final : public NetnsScope {
 public:
  explicit RealNetnsScope(int original) : original_(original) {}
  ~RealNetnsScope() override {
    // Going back can only fail if the kernel lost our own namespace; then
    // nothing rxerun does afterwards would be safe.
    if (::setns(original_, CLONE_NEWNET) != 0) std::abort();
    ::close(original_);
  }

 private:
  int original_;
};

}  // namespace

Result<std::unique_ptr<NetnsScope>> RealNetns::enter(const std::string& name) {
  int original = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original < 0) return make_error("cannot open /proc/thread-self/ns/net", errno);
  std::string path = "/run/netns/" + name;
  int target = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) {
    int err = errno;
    ::close(original);
    return make_error(err == ENOENT ? "network namespace '" + name + "' does not exist"
                                    : "cannot open " + path,
                      err);
  }
  int rc = ::setns(target, CLONE_NEWNET);
  int err = errno;
  ::close(target);
  if (rc != 0) {
    ::close(original);
    return make_error("cannot enter network namespace '" + name + "'", err);
  }
  return std::unique_ptr<NetnsScope>(std::make_unique<RealNetnsScope>(original));
}

}  // namespace rxerun::sys
