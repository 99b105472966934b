#pragma once
// One rtnetlink socket (libnl) for one call, with the kernel's own error
// reporting: extended ACK is turned on, and the errno and message of a
// refused request are kept, so that an error names the kernel's reason
// ("Exclusivity flag on, cannot override") and not only libnl's code.
// Shared by RtnlLinks, RtnlQdiscs and RealNetns; not part of sys/'s interface.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"

struct nl_sock;
struct nl_msg;
struct nlmsghdr;

namespace rxerun::sys {

class RtnlSocket {
 public:
  // A socket bound to the calling thread's current network namespace (a
  // netlink socket stays in the namespace it was created in).
  static Result<RtnlSocket> open();
  // The calling thread's socket for its current namespace, opened on first
  // use and kept (sys/netns_local.h).
  static Result<RtnlSocket*> current();
  // A socket bound to the namespace at `netns_path` (/run/netns/NAME): the
  // thread enters it only while the socket is created.
  static Result<RtnlSocket> open_in(const std::string& netns_path);

  RtnlSocket(RtnlSocket&& other) noexcept;
  RtnlSocket& operator=(RtnlSocket&&) = delete;
  ~RtnlSocket();

  nl_sock* get() const { return sock_; }
  // True after a failure that was not the kernel refusing a request (the
  // socket may hold stray replies: EIO, EINTR, ...): a cached socket is then
  // replaced.
  bool broken() const { return broken_; }

  // Turns a libnl return code into a Result: `what` says what was asked
  // ("cannot delete vA"); the error carries the kernel's errno and its
  // extended-ACK message when it sent one. EPERM says which capability.
  Result<void> check(int rc, const std::string& what);

  // The index of interface `dev` in the socket's namespace; error code
  // ENODEV ("no interface DEV") when there is none.
  Result<int> ifindex(const std::string& dev);

  // Sends a request that the kernel answers with one message (the GET of one
  // object) and hands that reply to `on_reply`. The request goes without
  // NLM_F_ACK: the reply, or the kernel's error in its place, ends the
  // exchange, one recvmsg where libnl's own calls wait for an ACK as well.
  // Such requests are numbered apart from libnl's count, which expects an
  // ACK for each of its own. Errors as check() makes them; `request` stays
  // the caller's.
  Result<void> get(nl_msg* request, const std::function<void(nlmsghdr*)>& on_reply, const std::string& what);

  // RTM_GETLINK of interface `dev` by name, without statistics, through
  // get(); false when there is no such interface.
  Result<bool> get_link(const std::string& dev, const std::function<void(nlmsghdr*)>& on_reply);

  // Sends a message built by hand and waits for the kernel's ACK; takes
  // ownership of `msg`.
  Result<void> send(nl_msg* msg, const std::string& what);

  struct Ack {
    int code = 0;         // errno of the last refused request, 0 when none
    std::string message;  // the kernel's extended-ACK text, "" when none
  };

 private:
  explicit RtnlSocket(nl_sock* sock);
  nl_sock* sock_;
  bool broken_ = false;
  std::unique_ptr<Ack> ack_;                  // the error callback writes here: a stable address
  std::uint32_t get_seq_ = 0x80000000u;       // get()'s own request numbers
  std::unique_ptr<std::uint64_t[]> get_buf_;  // get()'s receive buffer, made on first use
};

// errno for a libnl error code (libnl's own mapping is one-way).
int errno_of_nl(int nl_error);

// Makes every send on `sock` go again when sendmsg() was interrupted by a
// signal (EINTR: nothing was sent, so sending again doubles nothing). libnl
// retries an interrupted receive itself, but fails an interrupted send.
void resend_when_interrupted(nl_sock* sock);

}  // namespace rxerun::sys
