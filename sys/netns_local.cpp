#include "sys/netns_local.h"

#include <sys/stat.h>

#include <cerrno>
#include <vector>

namespace rxerun::sys {

namespace {
thread_local std::vector<std::function<void()>> droppers;
}  // namespace

// Asked every time, never remembered: a setns() or unshare() anywhere in the
// process (a test, a library) must not leave rxerun talking to the wrong
// namespace.
Result<std::uint64_t> current_netns_id() {
  struct stat st{};
  if (::stat("/proc/thread-self/ns/net", &st) != 0) return make_error("cannot look at /proc/thread-self/ns/net", errno);
  return static_cast<std::uint64_t>(st.st_ino);
}

void drop_cached_netlink_sockets() {
  for (auto& drop : droppers) drop();
}

namespace detail {
void register_dropper(std::function<void()> drop) { droppers.push_back(std::move(drop)); }
}  // namespace detail

}  // namespace rxerun::sys
