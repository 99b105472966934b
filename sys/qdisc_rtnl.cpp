#include "sys/qdisc_rtnl.h"

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/cache.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/netem.h>
#include <netlink/route/tc.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <system_error>
#include <thread>

#include "base/files.h"
#include "sys/libnl.h"
#include "sys/netns_local.h"
#include "sys/rtnl_socket.h"

namespace rxerun::sys {

namespace {

struct QdiscPut {
  void operator()(rtnl_qdisc* q) const { rtnl_qdisc_put(q); }
};
struct CacheFree {
  void operator()(nl_cache* c) const { nl_cache_free(c); }
};
using QdiscPtr = std::unique_ptr<rtnl_qdisc, QdiscPut>;
using CachePtr = std::unique_ptr<nl_cache, CacheFree>;

// The root qdisc of `ifindex` as the kernel dumps it; null when none.
Result<QdiscPtr> root_of(RtnlSocket& sock, int ifindex) {
  nl_cache* raw = nullptr;
  if (auto r = sock.check(rtnl_qdisc_alloc_cache(sock.get(), &raw), "cannot list qdiscs"); !r) return r.error();
  CachePtr cache(raw);
  return QdiscPtr(rtnl_qdisc_get_by_parent(cache.get(), ifindex, TC_H_ROOT));
}

// A percentage as netem's probability: 0..UINT32_MAX for 0..100 % (as tc does).
int probability(double pct) {
  const double scaled = std::round(pct / 100.0 * std::numeric_limits<std::uint32_t>::max());
  const auto p = scaled >= std::numeric_limits<std::uint32_t>::max() ? std::numeric_limits<std::uint32_t>::max()
                 : scaled <= 0                                       ? 0u
                                                                     : static_cast<std::uint32_t>(scaled);
  return static_cast<int>(p);  // libnl stores it back into a u32
}

int micros(Duration d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  return us > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max() : static_cast<int>(us);
}

// netem's TCA_OPTIONS is a struct followed by attributes, and must run to
// the end of the message. libnl 3.7 builds it so but then counts the nested
// attributes twice in the message length, leaving zeros after TCA_OPTIONS
// (the kernel warns of "bytes leftover"): cut them off.
Result<nlattr*> netem_options(nl_msg* msg) {
  nlmsghdr* hdr = nlmsg_hdr(msg);
  nlattr* options = nlmsg_find_attr(hdr, sizeof(tcmsg), TCA_OPTIONS);
  if (!options) return make_error("cannot build the netem request: libnl wrote no options", EINVAL);
  char* end = reinterpret_cast<char*>(options) + NLA_ALIGN(options->nla_len);
  char* msg_end = reinterpret_cast<char*>(hdr) + hdr->nlmsg_len;
  if (end > msg_end) return make_error("cannot build the netem request: options beyond the message", EINVAL);
  for (const char* p = end; p < msg_end; ++p)
    if (*p != 0) return make_error("cannot build the netem request: attributes after the options", EINVAL);
  hdr->nlmsg_len = static_cast<std::uint32_t>(end - reinterpret_cast<char*>(hdr));
  return options;
}

// libnl's netem has no rate: append it inside TCA_OPTIONS (which ends the
// message, see netem_options) and grow TCA_OPTIONS by as much.
Result<void> append_rate(nl_msg* msg, std::uint64_t bytes_per_s) {
  auto options = netem_options(msg);
  if (!options) return options.error();
  const auto before = nlmsg_hdr(msg)->nlmsg_len;
  tc_netem_rate rate{};
  rate.rate =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes_per_s, std::numeric_limits<std::uint32_t>::max()));
  if (nla_put(msg, TCA_NETEM_RATE, sizeof(rate), &rate) < 0) return make_error("netlink message too large", EMSGSIZE);
  if (bytes_per_s > std::numeric_limits<std::uint32_t>::max() && nla_put_u64(msg, TCA_NETEM_RATE64, bytes_per_s) < 0)
    return make_error("netlink message too large", EMSGSIZE);
  // nla_put never moves the buffer (nlmsg_reserve fails instead of growing).
  (*options)->nla_len = static_cast<std::uint16_t>((*options)->nla_len + (nlmsg_hdr(msg)->nlmsg_len - before));
  return {};
}

Result<void> add_netem_on(RtnlSocket& sock, int ifindex, const std::string& dev, const NetemSpec& spec) {
  QdiscPtr q(rtnl_qdisc_alloc());
  if (!q) return make_error("out of memory", ENOMEM);
  rtnl_tc_set_ifindex(TC_CAST(q.get()), ifindex);
  rtnl_tc_set_parent(TC_CAST(q.get()), TC_H_ROOT);
  if (int rc = rtnl_tc_set_kind(TC_CAST(q.get()), "netem"); rc < 0)
    return make_error("libnl knows no netem qdisc", errno_of_nl(rc));
  if (spec.delay) rtnl_netem_set_delay(q.get(), micros(*spec.delay));
  if (spec.jitter) rtnl_netem_set_jitter(q.get(), micros(*spec.jitter));
  if (spec.loss_pct) rtnl_netem_set_loss(q.get(), probability(*spec.loss_pct));
  if (spec.duplicate_pct) rtnl_netem_set_duplicate(q.get(), probability(*spec.duplicate_pct));
  if (spec.corrupt_pct) rtnl_netem_set_corruption_probability(q.get(), probability(*spec.corrupt_pct));
  if (spec.reorder_pct) rtnl_netem_set_reorder_probability(q.get(), probability(*spec.reorder_pct));

  nl_msg* raw = nullptr;
  // NLM_F_EXCL: the kernel replaces only a default root qdisc (handle 0),
  // never one somebody added.
  if (int rc = rtnl_qdisc_build_add_request(q.get(), NLM_F_CREATE | NLM_F_EXCL, &raw); rc < 0)
    return make_error(std::string("cannot build the netem request for ") + dev + ": " + nl_geterror(rc),
                      errno_of_nl(rc));
  MsgPtr msg(raw);
  if (spec.rate_bytes_per_s) {
    if (auto r = append_rate(msg.get(), *spec.rate_bytes_per_s); !r) return r;
  } else if (auto r = netem_options(msg.get()); !r) {
    return r.error();
  }
  return sock.send(msg.release(), "cannot add netem on " + dev);
}

bool readable(const std::string& path) {
  return std::ifstream(path).good();
}

// Asks the kernel itself, where nothing says whether netem exists: a netem
// on the loopback of a namespace that lives only as long as a helper thread.
// Used only when this kernel has no module tree, so the request cannot load
// a module either: nothing on the host changes.
Result<bool> probe_in_throwaway_netns() {
  Result<bool> result = false;
  try {
    std::thread helper([&] {
      if (unshare_netns() != 0) {
        const int err = errno;
        result = make_error(std::string("cannot create a namespace to look for netem") +
                                (err == EPERM ? " (needs root: CAP_SYS_ADMIN)" : ""),
                            err);
        return;
      }
      auto sock = RtnlSocket::open();
      if (!sock) {
        result = sock.error();
        return;
      }
      auto lo = sock->ifindex("lo");
      if (!lo) {
        result = lo.error();
        return;
      }
      auto added = add_netem_on(*sock, *lo, "lo", NetemSpec{});
      if (added) {
        result = true;
      } else if (added.error().code == ENOENT || added.error().code == EOPNOTSUPP) {
        result = false;  // "Specified qdisc kind is unknown"
      } else {
        result = added.error();
      }
    });
    helper.join();
  } catch (const std::system_error& e) {
    return make_error("cannot start a thread to look for netem", e.code().value());
  }
  return result;
}

}  // namespace

// Looks, in this order, at what never changes anything: a loaded module
// (/sys/module, /proc/modules), then the kernel's module tree (built in or
// loadable). Only a kernel without a module tree is asked directly.
Result<bool> RtnlQdiscs::netem_available() {
  if (readable("/sys/module/sch_netem/refcnt") || file_mentions("/proc/modules", "sch_netem ")) return true;
  struct utsname u {};
  if (::uname(&u) == 0) {
    const std::string tree = std::string("/lib/modules/") + u.release + "/";
    if (file_mentions(tree + "modules.builtin", "sch_netem.ko") || file_mentions(tree + "modules.dep", "sch_netem.ko"))
      return true;
    if (readable(tree + "modules.builtin") || readable(tree + "modules.dep")) return false;
  }
  return probe_in_throwaway_netns();
}

Result<std::optional<std::string>> RtnlQdiscs::root_kind(const std::string& dev) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto index = sock.ifindex(dev);
  if (!index) return index.error();
  auto root = root_of(sock, *index);
  if (!root) return root.error();
  if (!*root) return std::optional<std::string>();
  const char* kind = rtnl_tc_get_kind(TC_CAST(root->get()));
  return std::optional<std::string>(kind ? kind : "");
}

Result<void> RtnlQdiscs::add_netem(const std::string& dev, const NetemSpec& spec) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto index = sock.ifindex(dev);
  if (!index) return index.error();
  return add_netem_on(sock, *index, dev, spec);
}

Result<QdiscStats> RtnlQdiscs::root_stats(const std::string& dev) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto index = sock.ifindex(dev);
  if (!index) return index.error();
  auto root = root_of(sock, *index);
  if (!root) return root.error();
  if (!*root) return make_error("no qdisc on " + dev, ENOENT);
  rtnl_tc* tc = TC_CAST(root->get());
  QdiscStats s;
  s.packets = rtnl_tc_get_stat(tc, RTNL_TC_PACKETS);
  s.bytes = rtnl_tc_get_stat(tc, RTNL_TC_BYTES);
  s.drops = rtnl_tc_get_stat(tc, RTNL_TC_DROPS);
  s.overlimits = rtnl_tc_get_stat(tc, RTNL_TC_OVERLIMITS);
  s.requeues = rtnl_tc_get_stat(tc, RTNL_TC_REQUEUES);
  return s;
}

Result<void> RtnlQdiscs::remove_root(const std::string& dev) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto index = sock.ifindex(dev);
  if (!index) return index.error();
  QdiscPtr q(rtnl_qdisc_alloc());
  if (!q) return make_error("out of memory", ENOMEM);
  rtnl_tc_set_ifindex(TC_CAST(q.get()), *index);
  rtnl_tc_set_parent(TC_CAST(q.get()), TC_H_ROOT);
  // The kernel answers ENOENT for a default root ("handle of zero") too.
  return sock.check(rtnl_qdisc_delete(sock.get(), q.get()), "cannot remove the root qdisc of " + dev);
}

}  // namespace rxerun::sys
