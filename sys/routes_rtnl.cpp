// Routes and rules over rtnetlink: requests are built and sent with
// libnl-route's objects (rtnl_route_*, rtnl_rule_*); route dumps are read
// through libnl's parser, rule dumps by hand, because a rule must be seen
// whole (every selector the kernel reports, also those libnl has no getter
// for) before rxerun may take it away and promise to put it back.

#include "sys/routes_rtnl.h"

#include <arpa/inet.h>
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#include "sys/libnl.h"
#include "sys/rtnl_socket.h"

namespace rxerun::sys {

namespace {

struct RoutePut {
  void operator()(rtnl_route* r) const { rtnl_route_put(r); }
};
struct RulePut {
  void operator()(rtnl_rule* r) const { rtnl_rule_put(r); }
};
using RoutePtr = std::unique_ptr<rtnl_route, RoutePut>;
using RulePtr = std::unique_ptr<rtnl_rule, RulePut>;

// "10.10.0.2/32" from raw address bytes; "" when they do not fit the family.
std::string prefix_from(int family, const void* bytes, std::size_t len, unsigned prefix) {
  const std::size_t want = family == AF_INET ? 4 : 16;
  if (len < want) return {};
  char buf[INET6_ADDRSTRLEN] = {};
  if (!inet_ntop(family, bytes, buf, sizeof(buf))) return {};
  return std::string(buf) + "/" + std::to_string(prefix);
}

std::string address_text(nl_addr* a) {
  if (!a || nl_addr_get_len(a) == 0) return {};
  char buf[INET6_ADDRSTRLEN] = {};
  if (!inet_ntop(nl_addr_get_family(a), nl_addr_get_binary_addr(a), buf, sizeof(buf))) return {};
  return buf;
}

// An address or prefix as libnl takes it; `text` is canonical (the steps made it so).
Result<NlAddrPtr> nl_address(const std::string& text, int family) {
  nl_addr* raw = nullptr;
  if (nl_addr_parse(text.c_str(), family, &raw) < 0 || !raw)
    return make_error("'" + text + "' is not an address of the route's family", EINVAL);
  return NlAddrPtr(raw);
}

// Sends the dump request `build` makes and hands every answer to `each`. A
// table that changes during the dump makes the kernel flag it interrupted:
// ask again (as libnl's caches do); `restart` runs before each attempt.
Result<void> dump_all(RtnlSocket& sock, const std::function<nl_msg*()>& build, const std::function<void(nl_msg*)>& each,
                      const std::function<void()>& restart, const std::string& what) {
  std::unique_ptr<nl_cb, void (*)(nl_cb*)> cb(nl_cb_clone(nl_socket_get_cb(sock.get())), nl_cb_put);
  if (!cb) return make_error("out of memory", ENOMEM);
  nl_cb_set(
      cb.get(), NL_CB_VALID, NL_CB_CUSTOM,
      [](nl_msg* msg, void* arg) -> int {
        (*static_cast<const std::function<void(nl_msg*)>*>(arg))(msg);
        return NL_OK;
      },
      const_cast<std::function<void(nl_msg*)>*>(&each));
  for (int attempt = 1;; ++attempt) {
    restart();
    MsgPtr msg(build());
    if (!msg) return make_error("out of memory", ENOMEM);
    if (auto r = sock.check(nl_send_auto(sock.get(), msg.get()), what); !r) return r.error();
    const int rc = nl_recvmsgs(sock.get(), cb.get());
    if (rc == -NLE_DUMP_INTR && attempt < 10) continue;
    return sock.check(rc, what);
  }
}

// The name of interface `index`, through a GETLINK without statistics.
Result<std::string> name_of(RtnlSocket& sock, int index) {
  MsgPtr msg(nlmsg_alloc_size(128));
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = index;
  if (!msg || !nlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, RTM_GETLINK, 0, 0) ||
      nlmsg_append(msg.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
      nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0)
    return make_error("out of memory", ENOMEM);
  std::string name;
  auto r = sock.get(
      msg.get(),
      [&](nlmsghdr* h) {
        nlattr* tb[IFLA_MAX + 1] = {};
        if (h->nlmsg_type == RTM_NEWLINK && nlmsg_parse(h, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) == 0 &&
            tb[IFLA_IFNAME])
          name = attr_string(tb[IFLA_IFNAME]);
      },
      "cannot read interface " + std::to_string(index));
  if (!r) {
    if (r.error().code == ENODEV) return "if" + std::to_string(index);  // went away meanwhile
    return r.error();
  }
  return name.empty() ? "if" + std::to_string(index) : name;
}

// ---------------------------------------------------------------- routes

// The fields of Route from libnl's parse of one RTM_NEWROUTE; the interface
// stays an index here (`ifindex`) and is named by the caller.
Route route_of(rtnl_route* rt, int* ifindex) {
  Route r;
  r.family = rtnl_route_get_family(rt);
  nl_addr* dst = rtnl_route_get_dst(rt);
  const unsigned len = dst ? nl_addr_get_prefixlen(dst) : 0;
  if (dst && nl_addr_get_len(dst) > 0) {
    r.dst = prefix_from(r.family, nl_addr_get_binary_addr(dst), nl_addr_get_len(dst), len);
  } else {
    r.dst = r.family == AF_INET6 ? "::/0" : "0.0.0.0/0";
  }
  r.table = rtnl_route_get_table(rt);
  r.metric = rtnl_route_get_priority(rt);
  r.scope = rtnl_route_get_scope(rt);
  r.type = rtnl_route_get_type(rt);
  r.src = address_text(rtnl_route_get_pref_src(rt));
  *ifindex = 0;
  const int n = rtnl_route_get_nnexthops(rt);
  if (n == 1) {
    rtnl_nexthop* nh = rtnl_route_nexthop_n(rt, 0);
    *ifindex = rtnl_route_nh_get_ifindex(nh);
    r.via = address_text(rtnl_route_nh_get_gateway(nh));
  } else if (n > 1) {
    r.other = "multipath (" + std::to_string(n) + " next hops)";
  }
  if (const int tos = rtnl_route_get_tos(rt))
    r.other += std::string(r.other.empty() ? "" : " ") + "tos " + std::to_string(tos);
  if (nl_addr* s = rtnl_route_get_src(rt); s && nl_addr_get_prefixlen(s) > 0)
    r.other += std::string(r.other.empty() ? "" : " ") + "from " + address_text(s) + "/" +
               std::to_string(nl_addr_get_prefixlen(s));
  return r;
}

// A libnl route object for `r`, ready to add or delete.
Result<RoutePtr> route_object(RtnlSocket& sock, const Route& r) {
  RoutePtr rt(rtnl_route_alloc());
  if (!rt) return make_error("out of memory", ENOMEM);
  if (rtnl_route_set_family(rt.get(), static_cast<std::uint8_t>(r.family)) < 0)
    return make_error("not a route family: " + std::to_string(r.family), EINVAL);
  auto dst = nl_address(r.dst, r.family);
  if (!dst) return dst.error();
  if (rtnl_route_set_dst(rt.get(), dst->get()) < 0) return make_error("cannot use destination " + r.dst, EINVAL);
  rtnl_route_set_table(rt.get(), r.table);
  rtnl_route_set_priority(rt.get(), r.metric);
  rtnl_route_set_scope(rt.get(), static_cast<std::uint8_t>(r.scope));
  if (rtnl_route_set_type(rt.get(), static_cast<std::uint8_t>(r.type)) < 0)
    return make_error("not a route type: " + std::to_string(r.type), EINVAL);
  rtnl_route_set_protocol(rt.get(), RTPROT_BOOT);  // as `ip route add` gives it
  if (!r.src.empty()) {
    auto src = nl_address(r.src, r.family);
    if (!src) return src.error();
    if (rtnl_route_set_pref_src(rt.get(), src->get()) < 0) return make_error("cannot use source " + r.src, EINVAL);
  }
  if (!r.dev.empty() || !r.via.empty()) {
    rtnl_nexthop* nh = rtnl_route_nh_alloc();
    if (!nh) return make_error("out of memory", ENOMEM);
    if (!r.dev.empty()) {
      auto index = sock.ifindex(r.dev);
      if (!index) {
        rtnl_route_nh_free(nh);
        return index.error();
      }
      rtnl_route_nh_set_ifindex(nh, *index);
    }
    if (!r.via.empty()) {
      auto gw = nl_address(r.via, r.family);
      if (!gw) {
        rtnl_route_nh_free(nh);
        return gw.error();
      }
      rtnl_route_nh_set_gateway(nh, gw->get());
    }
    rtnl_route_add_nexthop(rt.get(), nh);  // the route owns it now
  }
  return rt;
}

// ---------------------------------------------------------------- rules

void add_other(Rule& r, const std::string& what) {
  r.other += (r.other.empty() ? "" : " ") + what;
}

// One RTM_NEWRULE, read whole: everything the model cannot express ends up
// in `other`, so that such a rule is never taken for one rxerun can restore.
bool parse_rule(nlmsghdr* h, Rule& r) {
  if (h->nlmsg_type != RTM_NEWRULE || h->nlmsg_len < NLMSG_LENGTH(sizeof(fib_rule_hdr))) return false;
  const auto* frh = static_cast<const fib_rule_hdr*>(nlmsg_data(h));
  r.family = frh->family;
  r.action = frh->action;
  r.table = frh->table;
  const int len = static_cast<int>(h->nlmsg_len) - static_cast<int>(NLMSG_LENGTH(sizeof(fib_rule_hdr)));
  auto* attrs = reinterpret_cast<nlattr*>(reinterpret_cast<char*>(NLMSG_DATA(h)) + NLMSG_ALIGN(sizeof(fib_rule_hdr)));
  std::uint32_t suppress_prefixlen = 0xffffffffu, suppress_ifgroup = 0xffffffffu;
  nlattr* a;
  int rem;
  nla_for_each_attr(a, attrs, len, rem) {
    const int type = nla_type(a);
    const bool u32 = nla_len(a) >= 4, u8 = nla_len(a) >= 1;
    switch (type) {
      case FRA_DST:
        if (frh->dst_len) r.to = prefix_from(r.family, nla_data(a), static_cast<std::size_t>(nla_len(a)), frh->dst_len);
        break;
      case FRA_SRC:
        if (frh->src_len)
          r.from = prefix_from(r.family, nla_data(a), static_cast<std::size_t>(nla_len(a)), frh->src_len);
        break;
      case FRA_IIFNAME: r.iif = attr_string(a); break;
      case FRA_OIFNAME: r.oif = attr_string(a); break;
      case FRA_PRIORITY:
        if (u32) r.pref = nla_get_u32(a);
        break;
      case FRA_TABLE:
        if (u32) r.table = nla_get_u32(a);
        break;
      case FRA_FWMARK:
        if (u32) r.fwmark = nla_get_u32(a);
        break;
      case FRA_FWMASK:
        if (u32) r.fwmask = nla_get_u32(a);
        break;
      case FRA_PROTOCOL:
        if (u8) r.protocol = nla_get_u8(a);
        break;
      case FRA_SUPPRESS_PREFIXLEN:
        if (u32) suppress_prefixlen = nla_get_u32(a);
        break;
      case FRA_SUPPRESS_IFGROUP:
        if (u32) suppress_ifgroup = nla_get_u32(a);
        break;
      case FRA_PAD: break;
      case FRA_GOTO:
        if (u32) add_other(r, "goto " + std::to_string(nla_get_u32(a)));
        break;
      case FRA_FLOW:
        if (u32 && nla_get_u32(a)) add_other(r, "realms " + std::to_string(nla_get_u32(a)));
        break;
      case FRA_TUN_ID: add_other(r, "tun_id"); break;
      case FRA_L3MDEV:
        if (u8 && nla_get_u8(a)) add_other(r, "l3mdev");
        break;
      case FRA_UID_RANGE: add_other(r, "uidrange"); break;
      case FRA_IP_PROTO:
        if (u8 && nla_get_u8(a)) add_other(r, "ipproto " + std::to_string(nla_get_u8(a)));
        break;
      case FRA_SPORT_RANGE: add_other(r, "sport"); break;
      case FRA_DPORT_RANGE: add_other(r, "dport"); break;
      // A selector newer than this build (dscp, flowlabel, ...): the kernel
      // sends those only when set, and restoring the rule would lose it.
      default: add_other(r, "attribute " + std::to_string(type)); break;
    }
  }
  if ((frh->src_len && r.from.empty()) || (frh->dst_len && r.to.empty())) return false;
  if (frh->tos) add_other(r, "tos " + std::to_string(frh->tos));
  if (frh->flags & FIB_RULE_INVERT) add_other(r, "not");
  if (suppress_prefixlen != 0xffffffffu) add_other(r, "suppress_prefixlength " + std::to_string(suppress_prefixlen));
  if (suppress_ifgroup != 0xffffffffu) add_other(r, "suppress_ifgroup " + std::to_string(suppress_ifgroup));
  if (r.action != FR_ACT_TO_TBL) r.table = 0;
  return true;
}

Result<std::vector<Rule>> rules_on(RtnlSocket& sock, int family) {
  std::vector<Rule> out;
  auto r = dump_all(
      sock,
      [&]() -> nl_msg* {
        nl_msg* m = nlmsg_alloc_size(128);
        fib_rule_hdr frh{};
        frh.family = static_cast<std::uint8_t>(family);
        if (m && (!nlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, RTM_GETRULE, 0, NLM_F_DUMP) ||
                  nlmsg_append(m, &frh, sizeof(frh), NLMSG_ALIGNTO) < 0)) {
          nlmsg_free(m);
          return nullptr;
        }
        return m;
      },
      [&](nl_msg* m) {
        Rule rule;
        if (parse_rule(nlmsg_hdr(m), rule) && rule.family == family) out.push_back(std::move(rule));
      },
      [&] { out.clear(); }, "cannot list the routing rules");
  if (!r) return r.error();
  return out;
}

Result<RulePtr> rule_object(const Rule& r) {
  if (!r.other.empty()) return make_error("rxerun cannot express the rule's selectors " + r.other, EINVAL);
  RulePtr rule(rtnl_rule_alloc());
  if (!rule) return make_error("out of memory", ENOMEM);
  rtnl_rule_set_family(rule.get(), r.family);
  rtnl_rule_set_prio(rule.get(), r.pref);
  rtnl_rule_set_action(rule.get(), static_cast<std::uint8_t>(r.action));
  rtnl_rule_set_table(rule.get(), r.table);
  if (!r.from.empty()) {
    auto a = nl_address(r.from, r.family);
    if (!a) return a.error();
    if (rtnl_rule_set_src(rule.get(), a->get()) < 0) return make_error("cannot use " + r.from, EINVAL);
  }
  if (!r.to.empty()) {
    auto a = nl_address(r.to, r.family);
    if (!a) return a.error();
    if (rtnl_rule_set_dst(rule.get(), a->get()) < 0) return make_error("cannot use " + r.to, EINVAL);
  }
  if (!r.iif.empty() && rtnl_rule_set_iif(rule.get(), r.iif.c_str()) < 0)
    return make_error("not an interface name: " + r.iif, EINVAL);
  if (!r.oif.empty() && rtnl_rule_set_oif(rule.get(), r.oif.c_str()) < 0)
    return make_error("not an interface name: " + r.oif, EINVAL);
  if (r.fwmark || r.fwmask) {
    rtnl_rule_set_mark(rule.get(), r.fwmark);
    rtnl_rule_set_mask(rule.get(), r.fwmask);
  }
  if (r.protocol) (void)rtnl_rule_set_protocol(rule.get(), static_cast<std::uint8_t>(r.protocol));
  return rule;
}

}  // namespace

Result<std::vector<Route>> RtnlRoutes::routes(int family, unsigned table) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  std::vector<std::pair<Route, int>> found;
  // The kernel filters by table (NETLINK_GET_STRICT_CHK on the socket);
  // older kernels send every table: filter here too.
  auto r = dump_all(
      sock,
      [&]() -> nl_msg* {
        nl_msg* m = nlmsg_alloc_size(128);
        rtmsg rtm{};
        rtm.rtm_family = static_cast<unsigned char>(family);
        if (m && (!nlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, RTM_GETROUTE, 0, NLM_F_DUMP) ||
                  nlmsg_append(m, &rtm, sizeof(rtm), NLMSG_ALIGNTO) < 0 || nla_put_u32(m, RTA_TABLE, table) < 0)) {
          nlmsg_free(m);
          return nullptr;
        }
        return m;
      },
      [&](nl_msg* m) {
        nl_msg_parse(
            m,
            [](nl_object* o, void* arg) {
              auto* rt = reinterpret_cast<rtnl_route*>(o);
              int ifindex = 0;
              Route route = route_of(rt, &ifindex);
              static_cast<std::vector<std::pair<Route, int>>*>(arg)->emplace_back(std::move(route), ifindex);
            },
            &found);
      },
      [&] { found.clear(); }, "cannot list the routes of table " + table_name(table));
  if (!r) {
    // IPv4 answers a dump of a table that does not exist with ENOENT.
    if (r.error().code == ENOENT) return std::vector<Route>{};
    return r.error();
  }
  std::vector<Route> out;
  std::map<int, std::string> names;
  for (auto& [route, ifindex] : found) {
    if (route.family != family || route.table != table) continue;
    if (ifindex > 0) {
      auto it = names.find(ifindex);
      if (it == names.end()) {
        auto name = name_of(sock, ifindex);
        if (!name) return name.error();
        it = names.emplace(ifindex, *name).first;
      }
      route.dev = it->second;
    }
    out.push_back(std::move(route));
  }
  return out;
}

Result<void> RtnlRoutes::add_route(const Route& r) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto rt = route_object(sock, r);
  if (!rt) return rt.error();
  return sock.check(rtnl_route_add(sock.get(), rt->get(), NLM_F_EXCL), "cannot add route " + route_args(r));
}

Result<void> RtnlRoutes::remove_route(const Route& r) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto rt = route_object(sock, r);
  if (!rt) return rt.error();
  return sock.check(rtnl_route_delete(sock.get(), rt->get(), 0), "cannot delete route " + route_args(r));
}

Result<std::vector<Rule>> RtnlRoutes::rules(int family) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  return rules_on(**cur, family);
}

Result<void> RtnlRoutes::add_rule(const Rule& r) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto rule = rule_object(r);
  if (!rule) return rule.error();
  return sock.check(rtnl_rule_add(sock.get(), rule->get(), NLM_F_EXCL), "cannot add rule " + rule_args(r));
}

Result<void> RtnlRoutes::remove_rule(const Rule& r) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto all = rules_on(sock, r.family);
  if (!all) return all.error();
  const Rule* first = nullptr;
  bool present = false;
  for (const auto& have : *all) {
    if (!first && rule_delete_matches(have, r)) first = &have;
    present = present || same_rule(have, r);
  }
  // A rule like it that the request does not match (another protocol
  // added it) is not the one asked for: the kernel would delete nothing.
  if (!present || !first) return make_error("no rule " + rule_args(r), ENOENT);
  if (!same_rule(*first, r))
    return make_error("cannot delete rule " + rule_args(r) + " alone: the kernel would take rule " + rule_args(*first) +
                          " first (it matches every selector named)",
                      EBUSY);
  auto rule = rule_object(r);
  if (!rule) return rule.error();
  return sock.check(rtnl_rule_delete(sock.get(), rule->get(), 0), "cannot delete rule " + rule_args(r));
}

}  // namespace rxerun::sys
