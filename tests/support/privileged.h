#pragma once
// Support for privileged tests: they need root (CAP_NET_ADMIN) and run each
// inside a throwaway network namespace, so nothing on the host changes.
//
// CTest runs every doctest case as its own process (doctest_discover_tests)
// with SKIP_RETURN_CODE 77: require_root() ends a case with 77 and a reason
// when it cannot run, which CTest reports as skipped, never as passed.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/fd.h"
#include "sys/netns_local.h"

namespace rxerun::testing {

inline void skip_test(const std::string& why) {
  std::printf("SKIPPED: %s\n", why.c_str());
  std::fflush(stdout);
  std::_Exit(77);
}

inline void require_root() {
  if (::geteuid() != 0) skip_test("needs root (CAP_NET_ADMIN); CI runs it as root");
  int fd = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0) skip_test("no network namespaces here");
  ::close(fd);
}

// Moves the calling thread into a new, empty network namespace for the
// scope's lifetime and back afterwards; the kernel frees the namespace (and
// every interface in it) when the scope ends.
class ThrowawayNetns {
 public:
  ThrowawayNetns() {
    require_root();
    original_.reset(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!original_.valid() || sys::unshare_netns() != 0) skip_test("cannot unshare a network namespace");
  }
  ~ThrowawayNetns() {
    if (sys::enter_netns(original_.get()) != 0) std::abort();
  }
  ThrowawayNetns(const ThrowawayNetns&) = delete;
  ThrowawayNetns& operator=(const ThrowawayNetns&) = delete;

 private:
  UniqueFd original_;
};

// Brings lo up: a fresh namespace has its loopback down.
inline void loopback_up() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  REQUIRE(::ioctl(fd, SIOCGIFFLAGS, &ifr) == 0);
  ifr.ifr_flags |= IFF_UP;
  REQUIRE(::ioctl(fd, SIOCSIFFLAGS, &ifr) == 0);
  ::close(fd);
}

// A namespace name no other test or run uses.
inline std::string unique_netns_name(const std::string& tag) {
  return "rxt-" + tag + "-" + std::to_string(::getpid());
}

}  // namespace rxerun::testing
