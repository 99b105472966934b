#include "sys/rtnl_socket.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sys/netns_local.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace rxerun::sys {

namespace {

// Keeps the errno and the extended-ACK message of a refused request. libnl
// hands the callback the payload of the NLMSG_ERROR message; its header sits
// just before it, and the TLVs follow the echoed request.
int on_error(struct sockaddr_nl*, struct nlmsgerr* err, void* arg) {
  auto* ack = static_cast<RtnlSocket::Ack*>(arg);
  ack->code = -err->error;
  ack->message.clear();
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const char*>(err) - NLMSG_HDRLEN);
  if (hdr->nlmsg_flags & NLM_F_ACK_TLVS) {
    std::size_t offset = sizeof(*err);
    if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) offset += err->msg.nlmsg_len - NLMSG_HDRLEN;
    const std::size_t payload = hdr->nlmsg_len - NLMSG_HDRLEN;
    if (offset < payload) {
      auto* attrs = reinterpret_cast<struct nlattr*>(reinterpret_cast<char*>(err) + offset);
      struct nlattr* a;
      int rem;
      nla_for_each_attr(a, attrs, static_cast<int>(payload - offset), rem) {
        if (nla_type(a) == NLMSGERR_ATTR_MSG) {
          ack->message.assign(static_cast<const char*>(nla_data(a)),
                              strnlen(static_cast<const char*>(nla_data(a)), static_cast<std::size_t>(nla_len(a))));
          while (!ack->message.empty() && (ack->message.back() == '\n' || ack->message.back() == ' '))
            ack->message.pop_back();
        }
      }
    }
  }
  return NL_STOP;
}

// Returns the calling thread to its namespace on every path.
class ThreadNetnsSwitch {
 public:
  ThreadNetnsSwitch() = default;
  ThreadNetnsSwitch(const ThreadNetnsSwitch&) = delete;
  ThreadNetnsSwitch& operator=(const ThreadNetnsSwitch&) = delete;
  ~ThreadNetnsSwitch() {
    if (original_ < 0) return;
    // Failing to go back would leave every later call in the wrong namespace.
    if (::setns(original_, CLONE_NEWNET) != 0) std::abort();
    ::close(original_);
  }
  Result<void> enter(const std::string& path) {
    original_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (original_ < 0) return make_error("cannot open /proc/thread-self/ns/net", errno);
    int target = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0) {
      int err = errno;
      return make_error(err == ENOENT ? "network namespace " + path + " does not exist" : "cannot open " + path, err);
    }
    int rc = ::setns(target, CLONE_NEWNET);
    int err = errno;
    ::close(target);
    if (rc != 0) return make_error("cannot enter network namespace " + path, err);
    return {};
  }

 private:
  int original_ = -1;
};

}  // namespace

int errno_of_nl(int nl_error) {
  switch (std::abs(nl_error)) {
    case NLE_INTR: return EINTR;
    case NLE_BAD_SOCK: return EBADF;
    case NLE_AGAIN: return EAGAIN;
    case NLE_NOMEM: return ENOMEM;
    case NLE_EXIST: return EEXIST;
    case NLE_INVAL: return EINVAL;
    case NLE_RANGE: return ERANGE;
    case NLE_MSGSIZE: return EMSGSIZE;
    case NLE_OPNOTSUPP: return EOPNOTSUPP;
    case NLE_AF_NOSUPPORT: return EAFNOSUPPORT;
    case NLE_OBJ_NOTFOUND: return ENOENT;
    case NLE_NOADDR: return EADDRNOTAVAIL;
    case NLE_BUSY: return EBUSY;
    case NLE_PROTO_MISMATCH: return EPROTONOSUPPORT;
    case NLE_NOACCESS: return EACCES;
    case NLE_PERM: return EPERM;
    case NLE_NODEV: return ENODEV;
    default: return EIO;
  }
}

RtnlSocket::RtnlSocket(nl_sock* sock) : sock_(sock), ack_(std::make_unique<Ack>()) {}

RtnlSocket::RtnlSocket(RtnlSocket&& other) noexcept
    : sock_(other.sock_), broken_(other.broken_), ack_(std::move(other.ack_)) {
  other.sock_ = nullptr;
}

RtnlSocket::~RtnlSocket() {
  if (sock_) nl_socket_free(sock_);
}

Result<RtnlSocket> RtnlSocket::open() {
  nl_sock* sock = nl_socket_alloc();
  if (!sock) return make_error("cannot allocate a netlink socket", ENOMEM);
  RtnlSocket s(sock);
  if (int rc = nl_connect(sock, NETLINK_ROUTE); rc < 0)
    return make_error(std::string("cannot open an rtnetlink socket: ") + nl_geterror(rc), errno_of_nl(rc));
  // One recvmsg per batch of replies instead of a peek and a read: a buffer
  // as large as the kernel's largest dump message.
  nl_socket_disable_msg_peek(sock);
  (void)nl_socket_set_msg_buf_size(sock, 32768);
  int on = 1;
  // Best effort: without it errors carry only the errno.
  (void)::setsockopt(nl_socket_get_fd(sock), SOL_NETLINK, NETLINK_EXT_ACK, &on, sizeof(on));
  // The kernel checks dump requests strictly and honours their filters (an
  // address dump for one interface); older kernels ignore it.
  (void)::setsockopt(nl_socket_get_fd(sock), SOL_NETLINK, NETLINK_GET_STRICT_CHK, &on, sizeof(on));
  nl_socket_modify_err_cb(sock, NL_CB_CUSTOM, on_error, s.ack_.get());
  return s;
}

Result<RtnlSocket*> RtnlSocket::current() {
  thread_local PerNetns<RtnlSocket> sockets;
  return sockets.get([] { return open(); });
}

Result<RtnlSocket> RtnlSocket::open_in(const std::string& netns_path) {
  ThreadNetnsSwitch in;
  if (auto r = in.enter(netns_path); !r) return r.error();
  return open();
}

Result<void> RtnlSocket::check(int rc, const std::string& what) {
  if (rc >= 0) {
    *ack_ = {};
    return {};
  }
  int code = ack_->code ? ack_->code : errno_of_nl(rc);
  // A refusal by the kernel leaves the socket as good as new; a cut-short
  // receive or a sequence mismatch may leave replies in it.
  if (!ack_->code && (code == EIO || code == EINTR || code == EBADF || code == EAGAIN || code == ENOMEM))
    broken_ = true;
  std::string message = what;
  if (!ack_->message.empty()) message += ": " + ack_->message;
  if (code == EPERM || code == EACCES) message += " (needs root: CAP_NET_ADMIN)";
  *ack_ = {};
  return make_error(std::move(message), code);
}

Result<int> RtnlSocket::ifindex(const std::string& dev) {
  rtnl_link* raw = nullptr;
  auto r = check(rtnl_link_get_kernel(sock_, 0, dev.c_str(), &raw), "cannot read interface " + dev);
  if (!r) {
    if (r.error().code == ENODEV) return make_error("no interface " + dev, ENODEV);
    return r.error();
  }
  const int index = rtnl_link_get_ifindex(raw);
  rtnl_link_put(raw);
  return index;
}

Result<void> RtnlSocket::send(nl_msg* msg, const std::string& what) {
  int rc = nl_send_sync(sock_, msg);  // frees msg
  return check(rc, what);
}

}  // namespace rxerun::sys
