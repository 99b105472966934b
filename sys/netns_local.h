#pragma once
// Per-namespace caches for netlink sockets. A netlink socket talks to the
// network namespace it was opened in, for as long as it lives, so rxerun
// keeps one socket per namespace and protocol instead of opening one per
// request (the opening took more time than the requests). A cached socket
// also pins its namespace: RealNetns::remove() drops the calling thread's
// cached sockets before it deletes a namespace, so that the kernel can take
// the namespace and its interfaces away at once. Not part of sys/'s interface.

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include "base/result.h"

namespace rxerun::sys {

// The calling thread's network namespace: the inode of /proc/thread-self/ns/net,
// looked up once and remembered until the thread changes namespace through
// one of the two calls below.
Result<std::uint64_t> current_netns_id();

// setns(fd, CLONE_NEWNET) and unshare(CLONE_NEWNET), with their return
// values and errno. Every change of a thread's network namespace in rxerun,
// its tests included, goes through these (tests/sys/test_netns_local.cpp
// checks the sources), so that current_netns_id() can remember its answer:
// asking /proc each time cost a path walk per netlink request.
int enter_netns(int fd);
int unshare_netns();

// Drops every socket the calling thread has cached, in every namespace.
void drop_cached_netlink_sockets();

namespace detail {
void register_dropper(std::function<void()> drop);
}

// One T per namespace, for the calling thread. T must have `bool broken() const`:
// a broken one (a failure between rxerun and the kernel, not a refusal by the
// kernel) is replaced rather than reused.
template <class T>
class PerNetns {
 public:
  // The cached T for the current namespace, made by `open()` when there is none.
  template <class Open>
  Result<T*> get(Open&& open) {
    if (!registered_) {
      detail::register_dropper([this] { items_.clear(); });
      registered_ = true;
    }
    auto id = current_netns_id();
    if (!id) return id.error();
    if (auto it = items_.find(*id); it != items_.end()) {
      if (!it->second.broken()) return &it->second;
      items_.erase(it);
    }
    auto made = open();
    if (!made) return made.error();
    return &items_.emplace(*id, std::move(made).value()).first->second;
  }

 private:
  std::map<std::uint64_t, T> items_;
  bool registered_ = false;
};

}  // namespace rxerun::sys
