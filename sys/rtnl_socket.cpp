#include "sys/rtnl_socket.h"

#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/fd.h"
#include "sys/netns_local.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace rxerun::sys {

namespace {

// Keeps the errno and the extended-ACK message of a refused request. libnl
// hands the callback the payload of the NLMSG_ERROR message; its header sits
// just before it, and the TLVs follow the echoed request.
int on_rtnl_error(struct sockaddr_nl*, struct nlmsgerr* err, void* arg) {
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
    if (!original_.valid()) return;
    // Failing to go back would leave every later call in the wrong namespace.
    if (enter_netns(original_.get()) != 0) std::abort();
  }
  Result<void> enter(const std::string& path) {
    original_.reset(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!original_.valid()) return make_error("cannot open /proc/thread-self/ns/net", errno);
    UniqueFd target(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!target.valid()) {
      int err = errno;
      return make_error(err == ENOENT ? "network namespace " + path + " does not exist" : "cannot open " + path, err);
    }
    if (enter_netns(target.get()) != 0) {
      const int err = errno;
      return make_error("cannot enter network namespace " + path, err);
    }
    return {};
  }

 private:
  UniqueFd original_;
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
    : sock_(other.sock_),
      broken_(other.broken_),
      ack_(std::move(other.ack_)),
      get_seq_(other.get_seq_),
      get_buf_(std::move(other.get_buf_)) {
  other.sock_ = nullptr;
}

RtnlSocket::~RtnlSocket() {
  if (sock_) nl_socket_free(sock_);
}

namespace {
int send_through_eintr(nl_sock* sock, nl_msg* msg) {
  iovec iov{.iov_base = nlmsg_hdr(msg), .iov_len = nlmsg_hdr(msg)->nlmsg_len};
  int rc;
  do rc = nl_send_iovec(sock, msg, &iov, 1);
  while (rc == -NLE_INTR);
  return rc;
}
}  // namespace

void resend_when_interrupted(nl_sock* sock) {
  nl_cb* cb = nl_socket_get_cb(sock);
  nl_cb_overwrite_send(cb, send_through_eintr);
  nl_cb_put(cb);
}

Result<RtnlSocket> RtnlSocket::open() {
  nl_sock* sock = nl_socket_alloc();
  if (!sock) return make_error("cannot allocate a netlink socket", ENOMEM);
  resend_when_interrupted(sock);
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
  nl_socket_modify_err_cb(sock, NL_CB_CUSTOM, on_rtnl_error, s.ack_.get());
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
  int index = 0;
  auto found = get_link(dev, [&](nlmsghdr* h) {
    if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(ifinfomsg)))
      index = static_cast<const ifinfomsg*>(NLMSG_DATA(h))->ifi_index;
  });
  if (!found) return found.error();
  if (!*found) return make_error("no interface " + dev, ENODEV);
  if (index <= 0) return make_error("cannot read interface " + dev + ": the kernel's answer holds no index", EIO);
  return index;
}

Result<void> RtnlSocket::get(nl_msg* request, const std::function<void(nlmsghdr*)>& on_reply, const std::string& what) {
  nlmsghdr* req = nlmsg_hdr(request);
  req->nlmsg_flags = static_cast<std::uint16_t>((req->nlmsg_flags | NLM_F_REQUEST) & ~NLM_F_ACK);
  const std::uint32_t seq = ++get_seq_;
  req->nlmsg_seq = seq;
  *ack_ = {};
  int sent;
  do sent = nl_sendto(sock_, req, req->nlmsg_len);
  while (sent == -NLE_INTR);  // nothing was sent: send again
  if (int rc = sent; rc < 0) {
    broken_ = true;
    return make_error(what + ": cannot send to the kernel: " + nl_geterror(rc), errno_of_nl(rc));
  }
  // As large as libnl's receive buffer (open()): a link with all its
  // attributes takes a few KiB. Kept: a fresh one per call costs malloc
  // more than the copy costs the kernel.
  constexpr std::size_t kSize = 32768;
  if (!get_buf_) get_buf_ = std::make_unique_for_overwrite<std::uint64_t[]>(kSize / sizeof(std::uint64_t));
  std::uint64_t* buf = get_buf_.get();
  ssize_t n;
  do {
    n = ::recv(nl_socket_get_fd(sock_), buf, kSize, MSG_TRUNC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    const int err = errno;
    broken_ = true;
    return make_error(what + ": cannot receive from the kernel: " + std::strerror(err), err);
  }
  if (static_cast<std::size_t>(n) > kSize) {
    broken_ = true;
    return make_error(what + ": the kernel's answer does not fit in " + std::to_string(kSize) + " bytes", EMSGSIZE);
  }
  // The answer is the first message; nothing else was asked for.
  auto* h = reinterpret_cast<nlmsghdr*>(buf);
  int left = static_cast<int>(n);
  if (!NLMSG_OK(h, left)) {
    broken_ = true;
    return make_error(what + ": a malformed answer from the kernel", EIO);
  }
  if (h->nlmsg_seq != seq) {
    broken_ = true;
    return make_error(what + ": the kernel's answer belongs to another request", EIO);
  }
  if (h->nlmsg_type == NLMSG_ERROR) {
    if (h->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
      broken_ = true;
      return make_error(what + ": a truncated answer from the kernel", EIO);
    }
    auto* err = static_cast<nlmsgerr*>(NLMSG_DATA(h));
    if (err->error == 0) return {};  // an ACK, though none was asked for: no reply
    on_rtnl_error(nullptr, err, ack_.get());
    return check(-NLE_FAILURE, what);
  }
  if (h->nlmsg_type >= NLMSG_MIN_TYPE) on_reply(h);
  return {};
}

Result<bool> RtnlSocket::get_link(const std::string& dev, const std::function<void(nlmsghdr*)>& on_reply) {
  // Sized to fit (libnl's default is a page, zeroed on each allocation).
  std::unique_ptr<nl_msg, void (*)(nl_msg*)> msg(nlmsg_alloc_size(128 + NLMSG_ALIGN(dev.size() + 1)), nlmsg_free);
  if (!msg || !nlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, RTM_GETLINK, 0, 0))
    return make_error("out of memory", ENOMEM);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  if (nlmsg_append(msg.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
      nla_put_string(msg.get(), IFLA_IFNAME, dev.c_str()) < 0 ||
      nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0)
    return make_error("netlink message too large", EMSGSIZE);
  auto r = get(msg.get(), on_reply, "cannot read interface " + dev);
  if (!r) {
    if (r.error().code == ENODEV) return false;
    return r.error();
  }
  return true;
}

Result<void> RtnlSocket::send(nl_msg* msg, const std::string& what) {
  int rc = nl_send_sync(sock_, msg);  // frees msg
  return check(rc, what);
}

}  // namespace rxerun::sys
