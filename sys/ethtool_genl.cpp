#include "sys/ethtool_genl.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "sys/libnl.h"
#include "sys/netns_local.h"
#include "sys/rtnl_socket.h"

namespace rxerun::sys {

namespace {

struct SockFree {
  void operator()(nl_sock* s) const { nl_socket_free(s); }
};
struct CbPut {
  void operator()(nl_cb* c) const { nl_cb_put(c); }
};
using SockPtr = std::unique_ptr<nl_sock, SockFree>;
using CbPtr = std::unique_ptr<nl_cb, CbPut>;

// What one request brought back: the replies went to the caller's handler;
// here the kernel's errno and its extended-ACK message, if any.
struct Exchange {
  std::function<void(nlmsghdr*)> on_reply;
  bool until_reply = false;  // a request without NLM_F_ACK: its reply ends the exchange
  std::uint32_t seq = 0;     // the request's sequence number; every answer carries it
  bool stray = false;        // an answer to some other request arrived
  bool done = false;
  int error = 0;
  std::string message;
};

int on_valid(nl_msg* msg, void* arg) {
  auto* ex = static_cast<Exchange*>(arg);
  if (ex->on_reply) ex->on_reply(nlmsg_hdr(msg));
  if (!ex->until_reply) return NL_OK;
  ex->done = true;
  return NL_STOP;
}

// libnl's own check counts on an ACK closing every request, which a GET
// without NLM_F_ACK does not send: each exchange checks its own number.
int on_seq_check(nl_msg* msg, void* arg) {
  auto* ex = static_cast<Exchange*>(arg);
  if (nlmsg_hdr(msg)->nlmsg_seq == ex->seq) return NL_OK;
  ex->stray = true;
  return NL_STOP;
}

int on_ack(nl_msg*, void* arg) {
  static_cast<Exchange*>(arg)->done = true;
  return NL_STOP;
}

// Keeps the errno and the kernel's own words (NLMSGERR_ATTR_MSG), which say
// far more than the errno ("no device matches name", "bit name not found").
int on_ethtool_error(sockaddr_nl*, nlmsgerr* err, void* arg) {
  auto* ex = static_cast<Exchange*>(arg);
  ex->done = true;
  ex->error = -err->error;
  auto* hdr = reinterpret_cast<nlmsghdr*>(reinterpret_cast<char*>(err) - NLMSG_HDRLEN);
  if (hdr->nlmsg_flags & NLM_F_ACK_TLVS) {
    std::size_t offset = NLMSG_HDRLEN + sizeof(nlmsgerr);
    if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) offset += NLMSG_ALIGN(err->msg.nlmsg_len - NLMSG_HDRLEN);
    if (offset < hdr->nlmsg_len) {
      nlattr* tb[NLMSGERR_ATTR_MAX + 1] = {};
      auto* attrs = reinterpret_cast<nlattr*>(reinterpret_cast<char*>(hdr) + offset);
      if (nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, static_cast<int>(hdr->nlmsg_len - offset), nullptr) == 0) {
        if (tb[NLMSGERR_ATTR_MSG]) {
          ex->message = attr_string(tb[NLMSGERR_ATTR_MSG]);
        } else if (tb[NLMSGERR_ATTR_MISS_TYPE]) {
          ex->message = "the kernel misses attribute " + std::to_string(nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE])) +
                        " in the request (a newer kernel than rxerun knows?)";
        }
      }
    }
  }
  return NL_STOP;
}

// One generic netlink socket talking to the "ethtool" family, kept per
// network namespace (sys/netns_local.h).
class EthtoolSocket {
 public:
  static Result<EthtoolSocket*> current() {
    thread_local PerNetns<EthtoolSocket> sockets;
    return sockets.get([] { return open(); });
  }

  static Result<EthtoolSocket> open() {
    SockPtr sk(nl_socket_alloc());
    if (!sk) return make_error("cannot allocate a netlink socket", ENOMEM);
    resend_when_interrupted(sk.get());
    if (int e = genl_connect(sk.get()); e < 0)
      return make_error(std::string("cannot open a generic netlink socket: ") + nl_geterror(e), EIO);
    const int one = 1;
    // Best effort: older kernels lack extended ACK; errors then carry only errno.
    (void)::setsockopt(nl_socket_get_fd(sk.get()), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
    const int family = genl_ctrl_resolve(sk.get(), ETHTOOL_GENL_NAME);
    if (family == -NLE_OBJ_NOTFOUND)
      return make_error(
          "this kernel has no ethtool netlink interface (needs Linux 5.6 or later with CONFIG_ETHTOOL_NETLINK)",
          EOPNOTSUPP);
    if (family < 0)
      return make_error(std::string("cannot look up the ethtool netlink family: ") + nl_geterror(family),
                        errno_of_nl(family));
    // From here on every request says itself whether it wants an ACK
    // (exchange()). One recvmsg per message instead of a peek and a read: a
    // buffer larger than any reply rxerun asks for (the feature names, ~3 KiB).
    nl_socket_disable_auto_ack(sk.get());
    nl_socket_disable_msg_peek(sk.get());
    (void)nl_socket_set_msg_buf_size(sk.get(), 32768);
    return EthtoolSocket(std::move(sk), family);
  }

  bool broken() const { return broken_; }

  // A request message for `cmd`, with the header naming the device when `header_attr` is set.
  // `flags`: ETHTOOL_A_HEADER_FLAGS (ETHTOOL_FLAG_COMPACT_BITSETS: replies
  // carry bitmaps, not a nest with the name of every bit). `room`: bytes the
  // caller adds after the header (libnl's default is a page, zeroed on each
  // allocation).
  Result<MsgPtr> message(std::uint8_t cmd, int header_attr, const std::string& dev, std::uint32_t flags = 0,
                         std::size_t room = 64) {
    MsgPtr msg(nlmsg_alloc_size(NLMSG_HDRLEN + GENL_HDRLEN + 64 + NLA_ALIGN(dev.size() + 1) + room));
    if (!msg) return make_error("cannot allocate a netlink message", ENOMEM);
    if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family_, 0, 0, cmd, ETHTOOL_GENL_VERSION))
      return make_error("cannot build an ethtool netlink message", EMSGSIZE);
    if (header_attr) {
      nlattr* hdr = nla_nest_start(msg.get(), header_attr | NLA_F_NESTED);
      if (!hdr || nla_put_string(msg.get(), ETHTOOL_A_HEADER_DEV_NAME, dev.c_str()) < 0 ||
          (flags && nla_put_u32(msg.get(), ETHTOOL_A_HEADER_FLAGS, flags) < 0))
        return make_error("cannot build an ethtool netlink message", EMSGSIZE);
      nla_nest_end(msg.get(), hdr);
    }
    return msg;
  }

  // How an exchange ends: with the kernel's ACK (a SET, whose reply is
  // optional), or with the one reply of a GET, which needs no ACK (an error
  // comes in place of the reply): one recvmsg less.
  enum class Until { Ack, Reply };

  // Sends `msg`, hands every reply to `on_reply` and waits for the end.
  Result<void> exchange(nl_msg* msg, std::function<void(nlmsghdr*)> on_reply, const std::string& what,
                        const std::string& dev, Until until) {
    CbPtr cb(nl_cb_alloc(NL_CB_DEFAULT));
    if (!cb) return make_error("cannot allocate netlink callbacks", ENOMEM);
    Exchange ex{std::move(on_reply)};
    ex.until_reply = until == Until::Reply;
    nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, on_valid, &ex);
    nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, on_ack, &ex);
    nl_cb_set(cb.get(), NL_CB_SEQ_CHECK, NL_CB_CUSTOM, on_seq_check, &ex);
    nl_cb_err(cb.get(), NL_CB_CUSTOM, on_ethtool_error, &ex);
    if (until == Until::Ack) nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
    if (int e = nl_send_auto(sk_.get(), msg); e < 0) {
      broken_ = true;
      return make_error(what + ": cannot send to the kernel: " + nl_geterror(e), EIO);
    }
    ex.seq = nlmsg_hdr(msg)->nlmsg_seq;
    while (!ex.done) {
      const int e = nl_recvmsgs(sk_.get(), cb.get());
      if (ex.stray) {
        broken_ = true;
        return make_error(what + ": the kernel's answer belongs to another request", EIO);
      }
      if (e < 0 && !ex.done) {
        broken_ = true;
        return make_error(what + ": " + nl_geterror(e), EIO);
      }
    }
    if (ex.error != 0) return kernel_error(ex.error, ex.message, what, dev);
    return {};
  }

 private:
  EthtoolSocket(SockPtr sk, int family) : sk_(std::move(sk)), family_(family) {}

  static Error kernel_error(int code, const std::string& kernel_says, const std::string& what,
                            const std::string& dev_) {
    const std::string detail = kernel_says.empty() ? std::string(std::strerror(code)) : kernel_says;
    switch (code) {
      case ENODEV: return make_error("no interface " + dev_ + " in this namespace (" + detail + ")", code);
      case EPERM:
      case EACCES: return make_error(what + ": needs root (CAP_NET_ADMIN) (" + detail + ")", code);
      case EOPNOTSUPP:
        if (!kernel_says.empty()) return make_error(what + ": " + kernel_says, code);
        return make_error(what + ": the driver of " + dev_ + " does not support it", code);
      default: return make_error(what + ": " + detail, code);
    }
  }

  SockPtr sk_;
  int family_;
  bool broken_ = false;
};

// The attributes of a generic netlink message of the ethtool family.
template <int Max>
bool parse_reply(nlmsghdr* nlh, std::uint8_t cmd, nlattr* (&tb)[Max + 1]) {
  if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) return false;
  auto* gh = static_cast<genlmsghdr*>(nlmsg_data(nlh));
  if (gh->cmd != cmd) return false;
  return nla_parse(tb, Max, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), nullptr) == 0;
}

// Calls fn(index, name, value) for each bit a bitset holds. With NOMASK it
// holds exactly the bits that are set; without it, the bits in the mask, with
// their values. Compact (VALUE and MASK as u32 words; what rxerun asks for)
// or verbose (ETHTOOL_A_BITSET_BITS, one nest per bit, by name or index).
// `index` is the bit's place in `names`, or kNoIndex for a name `names` lacks.
constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);

template <class Fn>
void for_each_bit(nlattr* attr, const std::vector<std::string>& names, Fn&& fn) {
  nlattr* tb[ETHTOOL_A_BITSET_MAX + 1] = {};
  if (!attr || nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, attr, nullptr) < 0) return;
  const bool nomask = tb[ETHTOOL_A_BITSET_NOMASK] != nullptr;
  if (tb[ETHTOOL_A_BITSET_VALUE]) {
    const auto words = static_cast<std::size_t>(nla_len(tb[ETHTOOL_A_BITSET_VALUE])) / 4;
    const auto* value = static_cast<const std::uint32_t*>(nla_data(tb[ETHTOOL_A_BITSET_VALUE]));
    const std::uint32_t* mask = nullptr;
    if (!nomask && tb[ETHTOOL_A_BITSET_MASK] &&
        static_cast<std::size_t>(nla_len(tb[ETHTOOL_A_BITSET_MASK])) / 4 >= words)
      mask = static_cast<const std::uint32_t*>(nla_data(tb[ETHTOOL_A_BITSET_MASK]));
    std::size_t size = words * 32;
    if (tb[ETHTOOL_A_BITSET_SIZE]) size = std::min<std::size_t>(size, nla_get_u32(tb[ETHTOOL_A_BITSET_SIZE]));
    for (std::size_t i = 0; i < size && i < names.size(); ++i) {
      const bool set = (value[i / 32] >> (i % 32)) & 1u;
      const bool listed = mask ? ((mask[i / 32] >> (i % 32)) & 1u) : set;
      if (listed && !names[i].empty()) fn(i, names[i], set);
    }
    return;
  }
  if (!tb[ETHTOOL_A_BITSET_BITS]) return;
  nlattr* bit;
  int rem;
  nla_for_each_nested(bit, tb[ETHTOOL_A_BITSET_BITS], rem) {
    if (nla_type(bit) != ETHTOOL_A_BITSET_BITS_BIT) continue;
    nlattr* bt[ETHTOOL_A_BITSET_BIT_MAX + 1] = {};
    if (nla_parse_nested(bt, ETHTOOL_A_BITSET_BIT_MAX, bit, nullptr) < 0) continue;
    std::string name;
    std::size_t index = kNoIndex;
    if (bt[ETHTOOL_A_BITSET_BIT_NAME]) {
      name = attr_string(bt[ETHTOOL_A_BITSET_BIT_NAME]);
      if (auto it = std::find(names.begin(), names.end(), name); it != names.end())
        index = static_cast<std::size_t>(it - names.begin());
    } else if (bt[ETHTOOL_A_BITSET_BIT_INDEX]) {
      const auto i = nla_get_u32(bt[ETHTOOL_A_BITSET_BIT_INDEX]);
      if (i < names.size()) {
        index = i;
        name = names[i];
      }
    }
    if (name.empty()) continue;
    fn(index, name, nomask || bt[ETHTOOL_A_BITSET_BIT_VALUE] != nullptr);
  }
}

// A bitset as name -> value of each bit it holds.
std::map<std::string, bool> parse_bitset(nlattr* attr, const std::vector<std::string>& names) {
  std::map<std::string, bool> out;
  for_each_bit(attr, names, [&](std::size_t, const std::string& name, bool on) { out[name] = on; });
  return out;
}

// Every feature name the kernel knows (the ETH_SS_FEATURES string set), by
// index: a FEATURES_GET reply names only the bits that are set, and a
// feature set in none of its bitsets is still one `ethtool -k` shows.
// The set is the kernel's own table (netdev_features_strings), the same for
// every device and namespace: read once per process.
Result<const std::vector<std::string>*> feature_names(EthtoolSocket& sock, const std::string& dev) {
  static std::vector<std::string> cached;
  if (!cached.empty()) return &cached;
  // Newer kernels insist on the header; naming the device is allowed for a global set.
  auto msg = sock.message(ETHTOOL_MSG_STRSET_GET, ETHTOOL_A_STRSET_HEADER, dev);
  if (!msg) return msg.error();
  nlattr* sets = nla_nest_start(msg->get(), ETHTOOL_A_STRSET_STRINGSETS | NLA_F_NESTED);
  nlattr* set = sets ? nla_nest_start(msg->get(), ETHTOOL_A_STRINGSETS_STRINGSET | NLA_F_NESTED) : nullptr;
  if (!set || nla_put_u32(msg->get(), ETHTOOL_A_STRINGSET_ID, ETH_SS_FEATURES) < 0)
    return make_error("cannot build an ethtool netlink message", EMSGSIZE);
  nla_nest_end(msg->get(), set);
  nla_nest_end(msg->get(), sets);

  std::vector<std::string> names;
  auto r = sock.exchange(
      msg->get(),
      [&](nlmsghdr* nlh) {
        nlattr* tb[ETHTOOL_A_STRSET_MAX + 1] = {};
        if (!parse_reply<ETHTOOL_A_STRSET_MAX>(nlh, ETHTOOL_MSG_STRSET_GET_REPLY, tb) ||
            !tb[ETHTOOL_A_STRSET_STRINGSETS])
          return;
        nlattr* s;
        int rem;
        nla_for_each_nested(s, tb[ETHTOOL_A_STRSET_STRINGSETS], rem) {
          nlattr* st[ETHTOOL_A_STRINGSET_MAX + 1] = {};
          if (nla_parse_nested(st, ETHTOOL_A_STRINGSET_MAX, s, nullptr) < 0 || !st[ETHTOOL_A_STRINGSET_ID] ||
              nla_get_u32(st[ETHTOOL_A_STRINGSET_ID]) != ETH_SS_FEATURES || !st[ETHTOOL_A_STRINGSET_STRINGS])
            continue;
          nlattr* str;
          int rem2;
          nla_for_each_nested(str, st[ETHTOOL_A_STRINGSET_STRINGS], rem2) {
            nlattr* at[ETHTOOL_A_STRING_MAX + 1] = {};
            if (nla_parse_nested(at, ETHTOOL_A_STRING_MAX, str, nullptr) < 0 || !at[ETHTOOL_A_STRING_INDEX] ||
                !at[ETHTOOL_A_STRING_VALUE])
              continue;
            const auto index = nla_get_u32(at[ETHTOOL_A_STRING_INDEX]);
            if (index > 4096) continue;  // a bitmap of features, not a table of this size
            if (names.size() <= index) names.resize(index + 1);
            names[index] = attr_string(at[ETHTOOL_A_STRING_VALUE]);
          }
        }
      },
      "reading the names of netdev features", dev, EthtoolSocket::Until::Reply);
  if (!r) return r.error();
  cached = std::move(names);
  return &cached;
}

}  // namespace

Result<std::map<std::string, Feature>> GenlEthtool::features(const std::string& dev) {
  auto sock = EthtoolSocket::current();
  if (!sock) return make_error("cannot read the offloads of " + dev + ": " + sock.error().message, sock.error().code);
  auto names = feature_names(**sock, dev);
  if (!names) return names.error();
  auto msg = (*sock)->message(ETHTOOL_MSG_FEATURES_GET, ETHTOOL_A_FEATURES_HEADER, dev, ETHTOOL_FLAG_COMPACT_BITSETS);
  if (!msg) return msg.error();

  // Per feature: changeable (hw), active, never changeable (nochange); by
  // bit index, and by name for a bit the table of names lacks.
  enum Slot { kHw, kActive, kNoChange };
  using Flags = std::array<bool, 3>;
  const auto& table = **names;
  std::vector<Flags> by_index(table.size(), Flags{});
  std::map<std::string, Flags> by_name;
  bool got = false;
  auto r = (*sock)->exchange(
      msg->get(),
      [&](nlmsghdr* nlh) {
        nlattr* tb[ETHTOOL_A_FEATURES_MAX + 1] = {};
        if (!parse_reply<ETHTOOL_A_FEATURES_MAX>(nlh, ETHTOOL_MSG_FEATURES_GET_REPLY, tb)) return;
        got = true;
        for (auto [attr, which] : {std::pair{ETHTOOL_A_FEATURES_HW, kHw}, std::pair{ETHTOOL_A_FEATURES_ACTIVE, kActive},
                                   std::pair{ETHTOOL_A_FEATURES_NOCHANGE, kNoChange}}) {
          const auto slot = which;  // a copy: a lambda cannot capture a structured binding before clang 16
          for_each_bit(tb[attr], table, [&](std::size_t i, const std::string& name, bool on) {
            (i == kNoIndex ? by_name[name] : by_index[i])[slot] = on;
          });
        }
      },
      "reading the offload features of " + dev, dev, EthtoolSocket::Until::Reply);
  if (!r) return r.error();
  if (!got) return make_error("reading the offload features of " + dev + ": the kernel sent no reply", EIO);

  auto feature = [](const Flags& f) { return Feature{.active = f[kActive], .fixed = !f[kHw] || f[kNoChange]}; };
  std::map<std::string, Feature> out;
  for (std::size_t i = 0; i < table.size(); ++i)
    if (!table[i].empty()) out.emplace(table[i], feature(by_index[i]));
  for (const auto& [name, flags] : by_name) out.emplace(name, feature(flags));
  return out;
}

std::optional<FeaturesSetReply> parse_features_set_reply(const nlmsghdr* nlh, const std::vector<std::string>& names) {
  nlattr* tb[ETHTOOL_A_FEATURES_MAX + 1] = {};
  // libnl's parsers take no const; nothing here writes to the message.
  if (!parse_reply<ETHTOOL_A_FEATURES_MAX>(const_cast<nlmsghdr*>(nlh), ETHTOOL_MSG_FEATURES_SET_REPLY, tb))
    return std::nullopt;
  return FeaturesSetReply{.refused = parse_bitset(tb[ETHTOOL_A_FEATURES_WANTED], names),
                          .changed = parse_bitset(tb[ETHTOOL_A_FEATURES_ACTIVE], names)};
}

Result<std::map<std::string, bool>> GenlEthtool::set_features(const std::string& dev,
                                                              const std::map<std::string, bool>& wanted) {
  if (wanted.empty()) return std::map<std::string, bool>{};
  auto sock = EthtoolSocket::current();
  if (!sock) return make_error("cannot change the offloads of " + dev + ": " + sock.error().message, sock.error().code);
  // Flags 0: the kernel replies with what it could not set (no OMIT_REPLY).
  auto names = feature_names(**sock, dev);
  if (!names) return names.error();
  std::size_t room = 64;  // the nests of WANTED and BITS, and for each bit its nest, name and value
  for (const auto& [name, _] : wanted) room += 32 + NLA_ALIGN(name.size() + 1);
  auto msg =
      (*sock)->message(ETHTOOL_MSG_FEATURES_SET, ETHTOOL_A_FEATURES_HEADER, dev, ETHTOOL_FLAG_COMPACT_BITSETS, room);
  if (!msg) return msg.error();
  // A bitset without NOMASK: only the named bits change, each to its VALUE.
  nlattr* set = nla_nest_start(msg->get(), ETHTOOL_A_FEATURES_WANTED | NLA_F_NESTED);
  nlattr* bits = set ? nla_nest_start(msg->get(), ETHTOOL_A_BITSET_BITS | NLA_F_NESTED) : nullptr;
  if (!bits) return make_error("cannot build an ethtool netlink message", EMSGSIZE);
  for (const auto& [name, on] : wanted) {
    nlattr* bit = nla_nest_start(msg->get(), ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
    if (!bit || nla_put_string(msg->get(), ETHTOOL_A_BITSET_BIT_NAME, name.c_str()) < 0 ||
        (on && nla_put_flag(msg->get(), ETHTOOL_A_BITSET_BIT_VALUE) < 0))
      return make_error("cannot build an ethtool netlink message", EMSGSIZE);
    nla_nest_end(msg->get(), bit);
  }
  nla_nest_end(msg->get(), bits);
  nla_nest_end(msg->get(), set);

  // The reply says what was refused and what changed (FeaturesSetReply).
  std::optional<FeaturesSetReply> reply;
  std::string what;
  for (const auto& [name, on] : wanted) what += (what.empty() ? "" : ", ") + name + (on ? " on" : " off");
  auto r = (*sock)->exchange(
      msg->get(),
      [&](nlmsghdr* nlh) {
        if (auto parsed = parse_features_set_reply(nlh, **names)) reply = std::move(parsed);
      },
      "setting " + what + " on " + dev, dev, EthtoolSocket::Until::Ack);
  if (!r) return r.error();

  std::map<std::string, bool> refused, changed;
  if (reply) {
    refused = std::move(reply->refused);
    changed = std::move(reply->changed);
  } else {
    // No reply (kernels before 5.9 send none when nothing changed): read back
    // what happened; every feature's value then stands for what changed.
    auto now = features(dev);
    if (!now) return now.error();
    for (const auto& [name, on] : wanted) {
      auto it = now->find(name);
      if (it == now->end() || it->second.active != on) refused[name] = on;
    }
    for (const auto& [name, f] : *now) changed[name] = f.active;
  }
  if (refused.empty()) return changed;
  std::string list;
  for (const auto& [name, on] : refused) list += (list.empty() ? "" : ", ") + name + (on ? " on" : " off");
  return make_error("the kernel would not set " + list + " on " + dev +
                        " (fixed by the driver, or it depends on a feature that is off)",
                    EOPNOTSUPP);
}

}  // namespace rxerun::sys
