#include "sys/netns_local.h"

#include <sched.h>
#include <sys/stat.h>

#include <cerrno>
#include <vector>

namespace rxerun::sys {

namespace {
thread_local std::vector<std::function<void()>> droppers;
// The calling thread's namespace as last looked up; 0 when it must be looked
// up again. A new thread starts with 0; a forked child keeps its parent's
// thread's value, and its namespace.
thread_local std::uint64_t known_netns = 0;
}  // namespace

Result<std::uint64_t> current_netns_id() {
  if (known_netns != 0) return known_netns;
  struct stat st {};
  if (::stat("/proc/thread-self/ns/net", &st) != 0) return make_error("cannot look at /proc/thread-self/ns/net", errno);
  known_netns = static_cast<std::uint64_t>(st.st_ino);
  return known_netns;
}

// Forgotten whatever the outcome: a failed call should leave the namespace
// as it was, but asking again costs one stat.
int enter_netns(int fd) {
  known_netns = 0;
  const int rc = ::setns(fd, CLONE_NEWNET);
  known_netns = 0;
  return rc;
}

int unshare_netns() {
  known_netns = 0;
  const int rc = ::unshare(CLONE_NEWNET);
  known_netns = 0;
  return rc;
}

void drop_cached_netlink_sockets() {
  for (auto& drop : droppers) drop();
}

namespace detail {
void register_dropper(std::function<void()> drop) {
  droppers.push_back(std::move(drop));
}
}  // namespace detail

}  // namespace rxerun::sys
