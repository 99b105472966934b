#include "sys/links_rtnl.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netinet/ether.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "base/fd.h"
#include "sys/libnl.h"
#include "sys/rtnl_socket.h"

namespace rxerun::sys {

namespace {

struct LinkPut {
  void operator()(rtnl_link* l) const { rtnl_link_put(l); }
};
struct AddrPut {
  void operator()(rtnl_addr* a) const { rtnl_addr_put(a); }
};
using LinkPtr = std::unique_ptr<rtnl_link, LinkPut>;
using AddrPtr = std::unique_ptr<rtnl_addr, AddrPut>;

// The fields of LinkInfo from an RTM_NEWLINK message, read directly (libnl's
// parser builds every attribute of the link, statistics and all); false when
// the message is malformed.
bool parse_link_msg(nlmsghdr* h, LinkInfo& info, std::uint32_t* group = nullptr) {
  nlattr* tb[IFLA_MAX + 1] = {};
  if (h->nlmsg_type != RTM_NEWLINK || nlmsg_parse(h, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return false;
  if (group) *group = tb[IFLA_GROUP] && nla_len(tb[IFLA_GROUP]) >= 4 ? nla_get_u32(tb[IFLA_GROUP]) : 0;
  const auto* ifi = static_cast<const ifinfomsg*>(nlmsg_data(h));
  info.ifindex = ifi->ifi_index;
  info.up = ifi->ifi_flags & IFF_UP;
  info.carrier = ifi->ifi_flags & IFF_LOWER_UP;
  if (tb[IFLA_IFNAME]) info.name = attr_string(tb[IFLA_IFNAME]);
  if (tb[IFLA_IFALIAS]) info.alias = attr_string(tb[IFLA_IFALIAS]);
  if (tb[IFLA_MTU] && nla_len(tb[IFLA_MTU]) >= 4) info.mtu = nla_get_u32(tb[IFLA_MTU]);
  if (tb[IFLA_LINKINFO]) {
    nlattr* li[IFLA_INFO_MAX + 1] = {};
    if (nla_parse_nested(li, IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr) == 0 && li[IFLA_INFO_KIND])
      info.kind = attr_string(li[IFLA_INFO_KIND]);
  }
  return true;
}

// A link as the kernel has it now; nullopt when no link has that name.
Result<std::optional<LinkInfo>> fetch_if_present(RtnlSocket& sock, const std::string& name) {
  LinkInfo info;
  bool parsed = false;
  auto found = sock.get_link(name, [&](nlmsghdr* h) { parsed = parse_link_msg(h, info); });
  if (!found) return found.error();
  if (!*found) return std::optional<LinkInfo>();
  if (!parsed) return make_error("cannot read interface " + name + ": no usable answer from the kernel", EIO);
  return std::optional<LinkInfo>(std::move(info));
}

// Dumps every link of the socket's namespace into `each` (RTM_NEWLINK
// messages), with or without statistics. A link that changes during the dump
// makes the kernel flag it as interrupted: ask again, as libnl's cache does;
// `restart` runs before each attempt.
Result<void> dump_links(RtnlSocket& sock, bool with_stats, const std::function<void(nlmsghdr*)>& each,
                        const std::function<void()>& restart) {
  std::unique_ptr<nl_cb, void (*)(nl_cb*)> cb(nl_cb_clone(nl_socket_get_cb(sock.get())), nl_cb_put);
  if (!cb) return make_error("out of memory", ENOMEM);
  nl_cb_set(
      cb.get(), NL_CB_VALID, NL_CB_CUSTOM,
      [](nl_msg* msg, void* arg) -> int {
        (*static_cast<const std::function<void(nlmsghdr*)>*>(arg))(nlmsg_hdr(msg));
        return NL_OK;
      },
      const_cast<std::function<void(nlmsghdr*)>*>(&each));
  for (int attempt = 1;; ++attempt) {
    restart();
    std::unique_ptr<nl_msg, void (*)(nl_msg*)> msg(nlmsg_alloc_size(128), nlmsg_free);
    ifinfomsg ifi{};
    ifi.ifi_family = AF_UNSPEC;
    if (!msg || !nlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, RTM_GETLINK, 0, NLM_F_DUMP) ||
        nlmsg_append(msg.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
        (!with_stats && nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0))
      return make_error("out of memory", ENOMEM);
    if (auto r = sock.check(nl_send_auto(sock.get(), msg.get()), "cannot list interfaces"); !r) return r.error();
    const int rc = nl_recvmsgs(sock.get(), cb.get());
    if (rc == -NLE_DUMP_INTR && attempt < 10) continue;
    return sock.check(rc, "cannot list interfaces");
  }
}

// A dump without statistics, parsed here (libnl's link cache parses every
// attribute of every link).
Result<std::vector<LinkInfo>> list_on(RtnlSocket& sock, std::map<int, std::uint32_t>* groups = nullptr) {
  std::vector<LinkInfo> out;
  auto r = dump_links(
      sock, false,
      [&](nlmsghdr* h) {
        LinkInfo info;
        std::uint32_t group = 0;
        if (!parse_link_msg(h, info, &group)) return;
        if (groups) (*groups)[info.ifindex] = group;
        out.push_back(std::move(info));
      },
      [&] {
        out.clear();
        if (groups) groups->clear();
      });
  if (!r) return r.error();
  return out;
}

// The counters of IFLA_STATS64 under the names sysfs gives them.
void parse_stats(nlmsghdr* h, std::vector<LinkStats>& out) {
  nlattr* tb[IFLA_MAX + 1] = {};
  if (h->nlmsg_type != RTM_NEWLINK || nlmsg_parse(h, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0 || !tb[IFLA_IFNAME])
    return;
  LinkStats s;
  s.name = attr_string(tb[IFLA_IFNAME]);
  rtnl_link_stats64 st{};
  if (tb[IFLA_STATS64])
    std::memcpy(&st, nla_data(tb[IFLA_STATS64]),
                std::min(sizeof(st), static_cast<std::size_t>(nla_len(tb[IFLA_STATS64]))));
  s.counters = {
      {"rx_packets", st.rx_packets}, {"tx_packets", st.tx_packets}, {"rx_bytes", st.rx_bytes},
      {"tx_bytes", st.tx_bytes},     {"rx_errors", st.rx_errors},   {"tx_errors", st.tx_errors},
      {"rx_dropped", st.rx_dropped}, {"tx_dropped", st.tx_dropped},
  };
  out.push_back(std::move(s));
}

// One link request (RTM_SETLINK, RTM_DELLINK) with the header `ifi` and the
// attributes `fill` adds (it returns < 0 when the message is full); waits for
// the kernel's ACK.
Result<void> link_request(RtnlSocket& sock, int type, ifinfomsg ifi, const std::function<int(nl_msg*)>& fill,
                          const std::string& what) {
  ifi.ifi_family = AF_UNSPEC;
  // First in a message with room for a name and an alias (IFALIASZ), then,
  // should the attributes not fit, in one of libnl's default size: a page,
  // which costs a zeroed page per request.
  for (const std::size_t size : {std::size_t{512}, std::size_t{0}}) {
    nl_msg* msg = size ? nlmsg_alloc_size(size) : nlmsg_alloc();
    if (!msg) return make_error("out of memory", ENOMEM);
    if (!nlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, type, 0, 0) ||
        nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 || (fill && fill(msg) < 0)) {
      nlmsg_free(msg);
      continue;
    }
    return sock.send(msg, what);
  }
  return make_error("netlink message too large", EMSGSIZE);
}

// One RTM_SETLINK that names the link (IFLA_IFNAME, the kernel looks it up)
// and carries what `fill` adds: one round trip, no read first.
Result<void> setlink_on(RtnlSocket& sock, const std::string& name, const std::string& what, unsigned flags,
                        unsigned change_mask, const std::function<int(nl_msg*)>& fill) {
  auto r = link_request(
      sock, RTM_SETLINK, ifinfomsg{.ifi_flags = flags, .ifi_change = change_mask},
      [&](nl_msg* m) {
        const int rc = nla_put_string(m, IFLA_IFNAME, name.c_str());
        return rc < 0 || !fill ? rc : fill(m);
      },
      what);
  if (!r && r.error().code == ENODEV) return make_error("no interface " + name, ENODEV);
  return r;
}

Result<void> setlink(const std::string& name, const std::string& what, unsigned flags, unsigned change_mask,
                     const std::function<int(nl_msg*)>& fill) {
  auto sock = RtnlSocket::current();
  if (!sock) return sock.error();
  return setlink_on(**sock, name, what, flags, change_mask, fill);
}

Result<void> set_alias_on(RtnlSocket& sock, const std::string& name, const std::string& alias) {
  return setlink_on(sock, name, "cannot set the alias of " + name, 0, 0,
                    [&](nl_msg* m) { return nla_put_string(m, IFLA_IFALIAS, alias.c_str()); });
}

// RTM_SETLINK by index with one u32 attribute.
Result<void> set_u32(RtnlSocket& sock, int ifindex, int attr, std::uint32_t value, const std::string& what) {
  return link_request(
      sock, RTM_SETLINK, ifinfomsg{.ifi_index = ifindex}, [&](nl_msg* m) { return nla_put_u32(m, attr, value); }, what);
}

Result<void> delete_index(RtnlSocket& sock, int ifindex, const std::string& name) {
  auto r = link_request(sock, RTM_DELLINK, ifinfomsg{.ifi_index = ifindex}, nullptr, "cannot delete interface " + name);
  if (!r && r.error().code == ENODEV) return {};  // gone already (a veth's peer goes with it)
  return r;
}

// `ip link del group G`: one RTM_DELLINK, one unregister batch in the kernel.
Result<void> delete_group(RtnlSocket& sock, std::uint32_t group) {
  return link_request(
      sock, RTM_DELLINK, ifinfomsg{}, [&](nl_msg* m) { return nla_put_u32(m, IFLA_GROUP, group); },
      "cannot delete interface group " + std::to_string(group));
}

// A group number no link in the namespace uses: the batch deletion must take
// the links named, and nothing else.
std::uint32_t unused_group(const std::map<int, std::uint32_t>& groups) {
  std::set<std::uint32_t> used;
  for (const auto& [index, g] : groups) used.insert(g);
  std::uint32_t g = 0x52580000u | (static_cast<std::uint32_t>(::getpid()) & 0xffffu);  // "RX" + pid
  while (g == 0 || used.count(g)) ++g;
  return g;
}

Result<void> remove_one_by_one(RtnlSocket& sock, const std::vector<std::pair<int, std::string>>& links) {
  for (const auto& [index, name] : links)
    if (auto r = delete_index(sock, index, name); !r) return r;
  return {};
}

Result<NlAddrPtr> parse_cidr(const std::string& cidr) {
  nl_addr* raw = nullptr;
  if (int rc = nl_addr_parse(cidr.c_str(), AF_UNSPEC, &raw); rc < 0)
    return make_error("'" + cidr + "' is not an address/prefix", EINVAL);
  NlAddrPtr addr(raw);
  const int family = nl_addr_get_family(addr.get());
  if (family != AF_INET && family != AF_INET6)
    return make_error("'" + cidr + "' is not an IPv4 or IPv6 address", EINVAL);
  return addr;
}

std::string format_cidr(nl_addr* a, unsigned prefix) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(nl_addr_get_family(a), nl_addr_get_binary_addr(a), buf, sizeof(buf));
  return std::string(buf) + "/" + std::to_string(prefix);
}

// `ifindex`: dev's index when the caller knows it; 0 looks it up.
Result<AddrPtr> addr_request(RtnlSocket& sock, const std::string& dev, const std::string& cidr, int ifindex = 0) {
  auto index = ifindex ? Result<int>(ifindex) : sock.ifindex(dev);
  if (!index) return index.error();
  auto local = parse_cidr(cidr);
  if (!local) return local.error();
  AddrPtr a(rtnl_addr_alloc());
  if (!a) return make_error("out of memory", ENOMEM);
  rtnl_addr_set_ifindex(a.get(), *index);
  rtnl_addr_set_family(a.get(), nl_addr_get_family(local->get()));
  if (int rc = rtnl_addr_set_local(a.get(), local->get()); rc < 0)
    return make_error("cannot use address " + cidr, errno_of_nl(rc));
  rtnl_addr_set_prefixlen(a.get(), static_cast<int>(nl_addr_get_prefixlen(local->get())));
  return a;
}

// The addresses of one interface: a dump the kernel filters by index (with
// NETLINK_GET_STRICT_CHK on the socket), so the cost does not grow with the
// number of interfaces in the namespace.
Result<std::vector<std::string>> addresses_of(RtnlSocket& sock, int ifindex) {
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_UNSPEC;
  ifa.ifa_index = static_cast<unsigned>(ifindex);
  if (auto r =
          sock.check(nl_send_simple(sock.get(), RTM_GETADDR, NLM_F_DUMP, &ifa, sizeof(ifa)), "cannot list addresses");
      !r)
    return r.error();
  struct Collect {
    int ifindex;
    std::vector<std::string> out;
  } collect{ifindex, {}};
  std::unique_ptr<nl_cb, void (*)(nl_cb*)> cb(nl_cb_clone(nl_socket_get_cb(sock.get())), nl_cb_put);
  if (!cb) return make_error("out of memory", ENOMEM);
  nl_cb_set(
      cb.get(), NL_CB_VALID, NL_CB_CUSTOM,
      [](nl_msg* msg, void* arg) -> int {
        nl_msg_parse(
            msg,
            [](nl_object* o, void* arg) {
              auto* c = static_cast<Collect*>(arg);
              auto* a = reinterpret_cast<rtnl_addr*>(o);
              nl_addr* local = rtnl_addr_get_local(a);
              // Older kernels ignore the index in the request: filter here too.
              if (rtnl_addr_get_ifindex(a) != c->ifindex || !local) return;
              const int family = nl_addr_get_family(local);
              if (family != AF_INET && family != AF_INET6) return;
              c->out.push_back(format_cidr(local, static_cast<unsigned>(rtnl_addr_get_prefixlen(a))));
            },
            arg);
        return NL_OK;
      },
      &collect);
  if (auto r = sock.check(nl_recvmsgs(sock.get(), cb.get()), "cannot list addresses"); !r) return r.error();
  return std::move(collect.out);
}

}  // namespace

Result<std::optional<LinkInfo>> RtnlLinks::get(const std::string& name) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  return fetch_if_present(sock, name);
}

Result<std::vector<LinkInfo>> RtnlLinks::list() {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  return list_on(sock);
}

Result<std::vector<LinkStats>> RtnlLinks::statistics() {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  std::vector<LinkStats> out;
  auto r = dump_links(
      **cur, true, [&](nlmsghdr* h) { parse_stats(h, out); }, [&] { out.clear(); });
  if (!r) return r.error();
  return out;
}

Result<void> RtnlLinks::add_veth(const VethSpec& spec) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  LinkPtr link(rtnl_link_veth_alloc());
  if (!link) return make_error("out of memory", ENOMEM);
  LinkPtr peer(rtnl_link_veth_get_peer(link.get()));  // a reference of its own
  rtnl_link_set_name(link.get(), spec.name.c_str());
  rtnl_link_set_name(peer.get(), spec.peer.c_str());
  if (spec.mtu) {
    rtnl_link_set_mtu(link.get(), spec.mtu);
    rtnl_link_set_mtu(peer.get(), spec.mtu);
  }
  UniqueFd ns_fd;
  const std::string ns_path = "/run/netns/" + spec.peer_netns;
  if (!spec.peer_netns.empty()) {
    ns_fd.reset(::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!ns_fd.valid()) {
      int err = errno;
      return make_error(
          err == ENOENT ? "network namespace " + spec.peer_netns + " does not exist" : "cannot open " + ns_path, err);
    }
    rtnl_link_set_ns_fd(peer.get(), ns_fd.get());
  }
  const std::string pair = spec.name + "/" + spec.peer;
  auto added =
      sock.check(rtnl_link_add(sock.get(), link.get(), NLM_F_CREATE | NLM_F_EXCL), "cannot create veth pair " + pair);
  if (!added) return added;
  if (spec.alias.empty()) return {};

  // The kernel takes no alias when it creates a link: mark both ends now. A
  // link left without its mark would be one rxerun may not delete, so a
  // failure here takes the pair away again.
  auto mark = [&]() -> Result<void> {
    if (auto r = set_alias_on(sock, spec.name, spec.alias); !r) return r;
    if (spec.peer_netns.empty()) return set_alias_on(sock, spec.peer, spec.alias);
    auto peer_sock = RtnlSocket::open_in(ns_path);
    if (!peer_sock) return peer_sock.error();
    return set_alias_on(*peer_sock, spec.peer, spec.alias);
  };
  if (auto r = mark(); !r) {
    if (auto l = fetch_if_present(sock, spec.name); l && *l) (void)delete_index(sock, (*l)->ifindex, spec.name);
    return r;
  }
  return {};
}

Result<void> RtnlLinks::remove(const std::vector<std::string>& names) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  std::map<int, std::uint32_t> groups;
  auto links = list_on(sock, &groups);
  if (!links) return links.error();

  std::vector<std::pair<int, std::string>> targets;  // (ifindex, name), present ones only
  for (const auto& n : names) {
    auto it = std::find_if(links->begin(), links->end(), [&](const LinkInfo& l) { return l.name == n; });
    if (it != links->end() &&
        std::none_of(targets.begin(), targets.end(), [&](const auto& t) { return t.first == it->ifindex; }))
      targets.emplace_back(it->ifindex, n);
  }
  if (targets.empty()) return {};
  if (targets.size() == 1) return remove_one_by_one(sock, targets);

  // Several: tag them with a group no other link has, check that exactly
  // they carry it, and delete the group in one operation (one grace period
  // in the kernel instead of one per link). Any surprise: one by one.
  const std::uint32_t group = unused_group(groups);
  bool tagged = true;
  for (const auto& [index, name] : targets) {
    if (auto r = set_u32(sock, index, IFLA_GROUP, group, "cannot tag interface " + name); !r) {
      if (r.error().code == ENODEV) continue;
      tagged = false;
      break;
    }
  }
  if (tagged) {
    std::map<int, std::uint32_t> now;
    auto again = list_on(sock, &now);
    if (again) {
      std::set<int> wanted;
      for (const auto& t : targets) wanted.insert(t.first);
      bool only_ours = std::all_of(now.begin(), now.end(),
                                   [&](const auto& e) { return e.second != group || wanted.count(e.first); });
      if (only_ours && delete_group(sock, group)) return {};
    }
  }
  return remove_one_by_one(sock, targets);
}

Result<void> RtnlLinks::set_up(const std::string& name, bool up) {
  return setlink(name, std::string(up ? "cannot bring up " : "cannot bring down ") + name, up ? IFF_UP : 0, IFF_UP,
                 nullptr);
}

Result<void> RtnlLinks::set_mtu(const std::string& name, unsigned mtu) {
  return setlink(name, "cannot set the MTU of " + name + " to " + std::to_string(mtu), 0, 0,
                 [&](nl_msg* m) { return nla_put_u32(m, IFLA_MTU, mtu); });
}

Result<void> RtnlLinks::rename(const std::string& name, const std::string& new_name) {
  // By index: IFLA_IFNAME carries the new name.
  auto sock = RtnlSocket::current();
  if (!sock) return sock.error();
  auto index = (*sock)->ifindex(name);
  if (!index) return index.error();
  return link_request(
      **sock, RTM_SETLINK, ifinfomsg{.ifi_index = *index},
      [&](nl_msg* m) { return nla_put_string(m, IFLA_IFNAME, new_name.c_str()); },
      "cannot rename " + name + " to " + new_name);
}

Result<void> RtnlLinks::set_mac(const std::string& name, const std::string& mac) {
  ether_addr addr{};
  if (!::ether_aton_r(mac.c_str(), &addr)) return make_error("not a MAC address: " + mac, EINVAL);
  auto sock = RtnlSocket::current();
  if (!sock) return sock.error();
  auto index = (*sock)->ifindex(name);
  if (!index) return index.error();
  return link_request(
      **sock, RTM_SETLINK, ifinfomsg{.ifi_index = *index},
      [&](nl_msg* m) { return nla_put(m, IFLA_ADDRESS, sizeof addr.ether_addr_octet, addr.ether_addr_octet); },
      "cannot set the MAC address of " + name + " to " + mac);
}

std::string interface_with_mac(const std::string& mac) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/net", ec)) {
    std::ifstream in(entry.path() / "address");
    std::string address;
    std::getline(in, address);
    if (address == mac) return entry.path().filename().string();
  }
  return "";
}

Result<void> RtnlLinks::set_alias(const std::string& name, const std::string& alias) {
  auto sock = RtnlSocket::current();
  if (!sock) return sock.error();
  return set_alias_on(**sock, name, alias);
}

Result<std::vector<std::string>> RtnlLinks::addresses(const std::string& dev, int* ifindex) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  auto index = (*cur)->ifindex(dev);
  if (!index) return index.error();
  if (ifindex) *ifindex = *index;
  return addresses_of(**cur, *index);
}

Result<void> RtnlLinks::add_address(const std::string& dev, const std::string& cidr, int ifindex) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto a = addr_request(sock, dev, cidr, ifindex);
  if (!a) return a.error();
  auto r = sock.check(rtnl_addr_add(sock.get(), a->get(), NLM_F_EXCL), "cannot add " + cidr + " to " + dev);
  // The interface of that index went away since the caller read it: go by
  // the name, as without the index (a new interface may carry it now).
  if (!r && r.error().code == ENODEV && ifindex) return add_address(dev, cidr, 0);
  return r;
}

Result<void> RtnlLinks::remove_address(const std::string& dev, const std::string& cidr) {
  auto cur = RtnlSocket::current();
  if (!cur) return cur.error();
  RtnlSocket& sock = **cur;
  auto a = addr_request(sock, dev, cidr);
  if (!a) return a.error();
  return sock.check(rtnl_addr_delete(sock.get(), a->get(), 0), "cannot remove " + cidr + " from " + dev);
}

}  // namespace rxerun::sys
