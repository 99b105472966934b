#include "sys/rdma_netlink.h"

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>

namespace rxerun::sys {

namespace {

// A reply's attributes by type; unknown types are ignored, known ones must
// have the type the kernel documents (uapi rdma_netlink.h), else the reply is
// refused as malformed.
using AttrTable = std::array<const nlattr*, RDMA_NLDEV_ATTR_MAX>;

mnl_attr_data_type policy(std::uint16_t type) {
  switch (type) {
    case RDMA_NLDEV_ATTR_DEV_INDEX:
    case RDMA_NLDEV_ATTR_PORT_INDEX:
    case RDMA_NLDEV_ATTR_NDEV_INDEX: return MNL_TYPE_U32;
    case RDMA_NLDEV_ATTR_DEV_NAME:
    case RDMA_NLDEV_ATTR_NDEV_NAME: return MNL_TYPE_NUL_STRING;
    case RDMA_NLDEV_ATTR_PORT_STATE:
    case RDMA_NLDEV_ATTR_PORT_PHYS_STATE:
    case RDMA_NLDEV_ATTR_DEV_NODE_TYPE:
    case RDMA_NLDEV_ATTR_RES_STATE: return MNL_TYPE_U8;
    case RDMA_NLDEV_ATTR_RES_PS: return MNL_TYPE_U32;
    case RDMA_NLDEV_ATTR_RES_CM_ID:
    case RDMA_NLDEV_ATTR_RES_CM_ID_ENTRY: return MNL_TYPE_NESTED;
    case RDMA_NLDEV_ATTR_RES_SRC_ADDR: return MNL_TYPE_BINARY;
    default: return MNL_TYPE_UNSPEC;  // not read
  }
}

struct Parsed {
  AttrTable tb{};
  bool malformed = false;
};

int on_attr(const nlattr* attr, void* data) {
  auto* p = static_cast<Parsed*>(data);
  const auto type = mnl_attr_get_type(attr);
  if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX - 1) < 0) return MNL_CB_OK;  // newer than this header
  const auto want = policy(type);
  if (want == MNL_TYPE_UNSPEC) return MNL_CB_OK;
  if (mnl_attr_validate(attr, want) < 0) {
    p->malformed = true;
    return MNL_CB_ERROR;
  }
  p->tb[type] = attr;
  return MNL_CB_OK;
}

Parsed parse_nested(const nlattr* nest) {
  Parsed p;
  if (mnl_attr_parse_nested(nest, on_attr, &p) < 0) p.malformed = true;
  return p;
}

// The port of a sockaddr_storage as the kernel copied it (IPv4 or IPv6).
std::uint16_t port_of(const nlattr* addr) {
  const auto len = mnl_attr_get_payload_len(addr);
  const auto* raw = static_cast<const unsigned char*>(mnl_attr_get_payload(addr));
  sa_family_t family = 0;
  if (len < sizeof family) return 0;
  std::memcpy(&family, raw, sizeof family);
  std::uint16_t net = 0;
  if (family == AF_INET && len >= sizeof(sockaddr_in))
    std::memcpy(&net, raw + offsetof(sockaddr_in, sin_port), sizeof net);
  else if (family == AF_INET6 && len >= sizeof(sockaddr_in6))
    std::memcpy(&net, raw + offsetof(sockaddr_in6, sin6_port), sizeof net);
  return ntohs(net);
}

Parsed parse(const nlmsghdr* h) {
  Parsed p;
  // nldev messages carry no family header: attributes start at the payload.
  if (mnl_attr_parse(h, 0, on_attr, &p) < 0) p.malformed = true;
  return p;
}

std::string str_of(const AttrTable& tb, int type) {
  return tb[type] ? std::string(mnl_attr_get_str(tb[type])) : std::string();
}

// What the kernel said about a request, filled in by the NLMSG_ERROR handler.
struct Ack {
  int code = 0;
  std::string message;  // extended ACK, when the kernel sent one
  std::function<void(const nlmsghdr*)>* on_reply = nullptr;
  bool malformed = false;
};

int on_ext_ack_attr(const nlattr* attr, void* data) {
  if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG && mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
    static_cast<Ack*>(data)->message = mnl_attr_get_str(attr);
  return MNL_CB_OK;
}

int on_rdma_error(const nlmsghdr* h, void* data) {
  auto* ack = static_cast<Ack*>(data);
  if (mnl_nlmsg_get_payload_len(h) < sizeof(nlmsgerr)) {
    ack->code = EBADMSG;
    errno = EBADMSG;
    return MNL_CB_ERROR;
  }
  const auto* err = static_cast<const nlmsgerr*>(mnl_nlmsg_get_payload(h));
  if (err->error == 0) return MNL_CB_STOP;  // the ACK
  ack->code = -err->error;
  if (h->nlmsg_flags & NLM_F_ACK_TLVS) {
    // The TLVs follow the request as the kernel echoed it: only its header
    // when capped (NETLINK_CAP_ACK), else the whole request.
    std::size_t offset = sizeof(nlmsgerr);
    if (!(h->nlmsg_flags & NLM_F_CAPPED) && err->msg.nlmsg_len > sizeof(nlmsghdr))
      offset += err->msg.nlmsg_len - sizeof(nlmsghdr);
    if (offset < mnl_nlmsg_get_payload_len(h)) (void)mnl_attr_parse(h, offset, on_ext_ack_attr, ack);
  }
  errno = ack->code;
  return MNL_CB_ERROR;
}

// A dump ends with NLMSG_DONE, which may carry the dump's error.
int on_done(const nlmsghdr* h, void* data) {
  auto* ack = static_cast<Ack*>(data);
  if (mnl_nlmsg_get_payload_len(h) >= sizeof(int)) {
    int rc = 0;
    std::memcpy(&rc, mnl_nlmsg_get_payload(h), sizeof(rc));
    if (rc < 0) {
      ack->code = -rc;
      errno = -rc;
      return MNL_CB_ERROR;
    }
  }
  return MNL_CB_STOP;
}

int on_noop(const nlmsghdr*, void*) {
  return MNL_CB_OK;
}

int on_data(const nlmsghdr* h, void* data) {
  auto* ack = static_cast<Ack*>(data);
  if (ack->on_reply) (*ack->on_reply)(h);
  return MNL_CB_OK;
}

constexpr std::uint16_t nldev(int cmd) {
  return static_cast<std::uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
}

// Room for a request: a header and a few short attributes.
constexpr std::size_t kRequestSize = 512;
// A device's GET reply is a few hundred bytes; a dump packs many per datagram.
constexpr std::size_t kReceiveSize = 32768;

}  // namespace

RdmaNetlink::RdmaNetlink(mnl_socket* sock) : sock_(sock), portid_(mnl_socket_get_portid(sock)) {}

RdmaNetlink::RdmaNetlink(RdmaNetlink&& other) noexcept : sock_(other.sock_), portid_(other.portid_), seq_(other.seq_) {
  other.sock_ = nullptr;
}

RdmaNetlink::~RdmaNetlink() {
  if (sock_) mnl_socket_close(sock_);
}

Result<RdmaNetlink> RdmaNetlink::open() {
  mnl_socket* sock = mnl_socket_open2(NETLINK_RDMA, SOCK_CLOEXEC);
  if (!sock) {
    const int code = errno;
    if (code == EPROTONOSUPPORT) return make_error("the kernel has no RDMA netlink (ib_core is not loaded)", code);
    return make_error(std::string("cannot open an RDMA netlink socket: ") + std::strerror(code), code);
  }
  RdmaNetlink nl(sock);
  int on = 1;
  // Both are best effort: without them errors lose the kernel's text only.
  (void)mnl_socket_setsockopt(sock, NETLINK_EXT_ACK, &on, sizeof(on));
  (void)mnl_socket_setsockopt(sock, NETLINK_CAP_ACK, &on, sizeof(on));
  if (mnl_socket_bind(sock, 0, MNL_SOCKET_AUTOPID) < 0) {
    const int code = errno;
    return make_error(std::string("cannot bind an RDMA netlink socket: ") + std::strerror(code), code);
  }
  nl.portid_ = mnl_socket_get_portid(sock);
  return nl;
}

Result<void> RdmaNetlink::exchange(nlmsghdr* request, const std::function<void(const nlmsghdr*)>& on_reply,
                                   const std::string& what) {
  request->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
  request->nlmsg_seq = ++seq_;
  ssize_t sent;
  do sent = mnl_socket_sendto(sock_, request, request->nlmsg_len);
  while (sent < 0 && errno == EINTR);  // nothing was sent: send again
  if (sent < 0) {
    const int code = errno;
    return make_error(what + ": cannot send to the kernel: " + std::strerror(code), code);
  }
  auto buf = std::make_unique_for_overwrite<std::uint64_t[]>(kReceiveSize / sizeof(std::uint64_t));
  auto callback = on_reply;
  Ack ack;
  ack.on_reply = &callback;
  mnl_cb_t ctl[NLMSG_MIN_TYPE] = {};
  ctl[NLMSG_NOOP] = on_noop;
  ctl[NLMSG_ERROR] = on_rdma_error;
  ctl[NLMSG_DONE] = on_done;
  ctl[NLMSG_OVERRUN] = on_noop;
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(sock_, buf.get(), kReceiveSize);
    if (n < 0 && errno == EINTR) continue;  // the answer is still queued
    if (n < 0) {
      const int code = errno;
      return make_error(what + ": cannot read the kernel's answer: " + std::strerror(code), code);
    }
    errno = 0;
    const int rc = mnl_cb_run2(buf.get(), static_cast<std::size_t>(n), request->nlmsg_seq, portid_, on_data, &ack, ctl,
                               NLMSG_MIN_TYPE);
    if (rc == MNL_CB_STOP) return {};
    if (rc == MNL_CB_ERROR) {
      int code = ack.code ? ack.code : (errno ? errno : EIO);
      std::string message = what;
      if (!ack.message.empty()) message += ": " + ack.message;
      if (code == EPERM || code == EACCES) message += " (needs root: CAP_NET_ADMIN)";
      return make_error(std::move(message), code);
    }
  }
}

Result<std::vector<RdmaNlDevice>> RdmaNetlink::devices() {
  alignas(nlmsghdr) char req[kRequestSize];
  nlmsghdr* h = mnl_nlmsg_put_header(req);
  h->nlmsg_type = nldev(RDMA_NLDEV_CMD_GET);
  h->nlmsg_flags = NLM_F_DUMP;
  std::vector<RdmaNlDevice> out;
  bool malformed = false;
  auto r = exchange(
      h,
      [&](const nlmsghdr* reply) {
        Parsed p = parse(reply);
        if (p.malformed || !p.tb[RDMA_NLDEV_ATTR_DEV_INDEX] || !p.tb[RDMA_NLDEV_ATTR_DEV_NAME]) {
          malformed = true;
          return;
        }
        RdmaNlDevice d{mnl_attr_get_u32(p.tb[RDMA_NLDEV_ATTR_DEV_INDEX]), str_of(p.tb, RDMA_NLDEV_ATTR_DEV_NAME)};
        if (p.tb[RDMA_NLDEV_ATTR_DEV_NODE_TYPE]) d.node_type = mnl_attr_get_u8(p.tb[RDMA_NLDEV_ATTR_DEV_NODE_TYPE]);
        out.push_back(std::move(d));
      },
      "cannot list RDMA devices");
  if (!r) return r.error();
  if (malformed) return make_error("cannot list RDMA devices: the kernel's answer is malformed", EBADMSG);
  return out;
}

Result<RdmaNlPort> RdmaNetlink::port(unsigned index, unsigned port) {
  alignas(nlmsghdr) char req[kRequestSize];
  nlmsghdr* h = mnl_nlmsg_put_header(req);
  h->nlmsg_type = nldev(RDMA_NLDEV_CMD_PORT_GET);
  mnl_attr_put_u32(h, RDMA_NLDEV_ATTR_DEV_INDEX, index);
  mnl_attr_put_u32(h, RDMA_NLDEV_ATTR_PORT_INDEX, port);
  RdmaNlPort out;
  bool seen = false, malformed = false;
  const std::string what = "cannot read port " + std::to_string(port) + " of RDMA device " + std::to_string(index);
  auto r = exchange(
      h,
      [&](const nlmsghdr* reply) {
        Parsed p = parse(reply);
        if (p.malformed) {
          malformed = true;
          return;
        }
        seen = true;
        if (p.tb[RDMA_NLDEV_ATTR_PORT_STATE]) out.state = mnl_attr_get_u8(p.tb[RDMA_NLDEV_ATTR_PORT_STATE]);
        if (p.tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE])
          out.phys_state = mnl_attr_get_u8(p.tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]);
        if (p.tb[RDMA_NLDEV_ATTR_NDEV_INDEX]) out.ndev_index = mnl_attr_get_u32(p.tb[RDMA_NLDEV_ATTR_NDEV_INDEX]);
        out.ndev_name = str_of(p.tb, RDMA_NLDEV_ATTR_NDEV_NAME);
      },
      what);
  if (!r) return r.error();
  if (malformed || !seen) return make_error(what + ": the kernel's answer is malformed", EBADMSG);
  return out;
}

Result<void> RdmaNetlink::new_link(const std::string& name, const std::string& type, const std::string& netdev) {
  alignas(nlmsghdr) char req[kRequestSize];
  nlmsghdr* h = mnl_nlmsg_put_header(req);
  h->nlmsg_type = nldev(RDMA_NLDEV_CMD_NEWLINK);
  if (!mnl_attr_put_strz_check(h, sizeof(req), RDMA_NLDEV_ATTR_DEV_NAME, name.c_str()) ||
      !mnl_attr_put_strz_check(h, sizeof(req), RDMA_NLDEV_ATTR_LINK_TYPE, type.c_str()) ||
      !mnl_attr_put_strz_check(h, sizeof(req), RDMA_NLDEV_ATTR_NDEV_NAME, netdev.c_str()))
    return make_error("cannot add " + name + ": names too long", ENAMETOOLONG);
  return exchange(h, {}, "cannot add " + type + " device " + name + " over " + netdev);
}

Result<void> RdmaNetlink::del_link(unsigned index) {
  alignas(nlmsghdr) char req[kRequestSize];
  nlmsghdr* h = mnl_nlmsg_put_header(req);
  h->nlmsg_type = nldev(RDMA_NLDEV_CMD_DELLINK);
  mnl_attr_put_u32(h, RDMA_NLDEV_ATTR_DEV_INDEX, index);
  return exchange(h, {}, "cannot delete RDMA device " + std::to_string(index));
}

Result<std::vector<RdmaNlCmId>> RdmaNetlink::cm_ids(unsigned index) {
  alignas(nlmsghdr) char req[kRequestSize];
  nlmsghdr* h = mnl_nlmsg_put_header(req);
  h->nlmsg_type = nldev(RDMA_NLDEV_CMD_RES_CM_ID_GET);
  h->nlmsg_flags = NLM_F_DUMP;
  mnl_attr_put_u32(h, RDMA_NLDEV_ATTR_DEV_INDEX, index);
  std::vector<RdmaNlCmId> out;
  bool malformed = false;
  const std::string what = "cannot list the rdma_cm IDs of RDMA device " + std::to_string(index);
  auto r = exchange(
      h,
      [&](const nlmsghdr* reply) {
        Parsed p = parse(reply);
        if (p.malformed) {
          malformed = true;
          return;
        }
        if (!p.tb[RDMA_NLDEV_ATTR_RES_CM_ID]) return;  // a device without any
        // mnl_attr_for_each_nested(), spelled out: its void* does not convert in C++.
        const nlattr* table = p.tb[RDMA_NLDEV_ATTR_RES_CM_ID];
        const char* end = static_cast<const char*>(mnl_attr_get_payload(table)) + mnl_attr_get_payload_len(table);
        for (auto* entry = static_cast<const nlattr*>(mnl_attr_get_payload(table));
             mnl_attr_ok(entry, static_cast<int>(end - reinterpret_cast<const char*>(entry)));
             entry = mnl_attr_next(entry)) {
          if (mnl_attr_get_type(entry) != RDMA_NLDEV_ATTR_RES_CM_ID_ENTRY) continue;
          Parsed e = parse_nested(entry);
          if (e.malformed) {
            malformed = true;
            return;
          }
          RdmaNlCmId id;
          if (e.tb[RDMA_NLDEV_ATTR_RES_STATE]) id.state = mnl_attr_get_u8(e.tb[RDMA_NLDEV_ATTR_RES_STATE]);
          if (e.tb[RDMA_NLDEV_ATTR_RES_PS]) id.ps = mnl_attr_get_u32(e.tb[RDMA_NLDEV_ATTR_RES_PS]);
          if (e.tb[RDMA_NLDEV_ATTR_RES_SRC_ADDR]) id.port = port_of(e.tb[RDMA_NLDEV_ATTR_RES_SRC_ADDR]);
          out.push_back(id);
        }
      },
      what);
  if (!r) return r.error();
  if (malformed) return make_error(what + ": the kernel's answer is malformed", EBADMSG);
  return out;
}

}  // namespace rxerun::sys
