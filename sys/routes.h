#pragma once
// Routes and policy-routing rules over rtnetlink (libnl-route), in the
// calling thread's network namespace: what `ip route` and `ip rule` do.
// Values are kept in the kernel's own terms (table numbers, RT_SCOPE_*,
// RTN_*, FR_ACT_*), addresses as canonical text ("10.10.0.2/32"), so that a
// step compares what it asks for with what the kernel lists field by field
// and the journal can carry a rule through JSON and put it back exactly.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

// The kernel's reserved table numbers (linux/rtnetlink.h), which ip(8) names.
inline constexpr unsigned kTableDefault = 253;
inline constexpr unsigned kTableMain = 254;
inline constexpr unsigned kTableLocal = 255;

// One route as `ip route` shows it. Its key in the kernel is (table, dst,
// metric): a second route with the same key is a conflict (EEXIST).
struct Route {
  int family = 0;   // AF_INET or AF_INET6
  std::string dst;  // "10.10.0.2/32", "::/0"; canonical (inet_ntop), prefix always written
  std::string dev;  // "" when the route names no interface
  std::string via;  // the gateway; "" none
  std::string src;  // the preferred source address; "" none
  unsigned table = kTableMain;
  unsigned metric = 0;  // IPv4's default is 0, IPv6's 1024 (what the kernel gives one without)
  int scope = 0;        // RT_SCOPE_UNIVERSE (0), RT_SCOPE_LINK (253), RT_SCOPE_HOST (254)
  int type = 1;         // RTN_UNICAST (1), RTN_LOCAL, RTN_BLACKHOLE, RTN_UNREACHABLE, RTN_PROHIBIT
  // What this model cannot express, as ip(8) would write it ("multipath
  // (2 next hops)", "tos 0x10"): such a route never counts as identical to
  // one a step asks for. "" when nothing.
  std::string other;
};

// One policy-routing rule as `ip rule` shows it. The kernel knows no handle
// for a rule: a rule IS its selectors, action and priority.
struct Rule {
  int family = 0;     // AF_INET or AF_INET6
  unsigned pref = 0;  // the priority; lower is looked at first
  std::string from;   // source prefix, "" for all
  std::string to;     // destination prefix, "" for all
  std::string iif;    // "" any
  std::string oif;    // "" any
  std::uint32_t fwmark = 0;
  std::uint32_t fwmask = 0;  // 0 when fwmark is 0; the kernel makes 0xffffffff of an fwmark without a mask
  int action = 1;            // FR_ACT_TO_TBL (1: lookup), FR_ACT_BLACKHOLE (6), UNREACHABLE (7), PROHIBIT (8), NOP (3)
  unsigned table = 0;        // for FR_ACT_TO_TBL
  // Who added it (RTPROT_KERNEL for the kernel's own rules): not a selector,
  // kept so that a rule taken away comes back as it was.
  unsigned protocol = 0;
  // Selectors this model cannot express ("suppress_prefixlength 0", "goto
  // 10", "not"): a rule with any is never identical to one a step names, and
  // is never removed (rxerun could not put it back). "" when none.
  std::string other;
};

// An address or a prefix in canonical text (inet_ntop), with its family.
struct Prefix {
  int family = 0;
  std::string text;  // "10.10.0.2/32", "fd00::/64"; for an address alone: "10.10.0.1"
  unsigned length = 0;
};
// "10.10.0.2/32", "fd00::/64", or an address alone (the full length). A
// prefix with bits set past its length is refused (the kernel refuses it
// too): `why` says so and names the prefix meant.
std::optional<Prefix> parse_prefix(const std::string& text, std::string* why = nullptr);
// An IPv4 or IPv6 address, canonical.
std::optional<Prefix> parse_address(const std::string& text);

// Equal as the kernel tells rules apart: every selector, the action and the
// table; the protocol does not count.
bool same_rule(const Rule& a, const Rule& b);

// Whether the kernel's delete request `req` (fib_rules.c, rule_find())
// would match rule `have`: every selector the request names must agree; those
// it does not name match anything. The first match in the kernel's order goes.
bool rule_delete_matches(const Rule& have, const Rule& req);

// "main", "local", "default", else the number.
std::string table_name(unsigned table);
// "main", "local", "default" or a number 1..4294967295; nullopt otherwise.
std::optional<unsigned> parse_table(const std::string& text);
// "global", "link", "host", else the number.
std::string scope_name(int scope);
// "inet6" for AF_INET6, else "inet": ip(8)'s names of the families.
std::string family_name(int family);
// "unicast", "local", "blackhole", ...
std::string route_type_name(int type);
// The scope ip(8) gives a route when none is named: host for a local route,
// link for an IPv4 unicast without a gateway, else global.
int default_scope(const Route& r);
// {"ip"} or {"ip", "-6"}.
std::vector<std::string> ip_argv(int family);
// What follows `ip route add` for this route, one word each: {"10.10.0.2/32",
// "dev", "vA", "src", "10.10.0.1", "table", "100"}; `plan` quotes them.
std::vector<std::string> route_argv(const Route& r);
// The same words joined with spaces, for messages.
std::string route_args(const Route& r);
// What follows `ip rule add`, one word each: {"pref", "100", "iif", "lo", ...}.
std::vector<std::string> rule_argv(const Rule& r);
// The same words joined with spaces, for messages.
std::string rule_args(const Rule& r);

class Routes {
 public:
  virtual ~Routes() = default;

  // Every route of `table` in `family`. A table that does not exist yet
  // (the kernel makes one on its first route) lists as empty.
  virtual Result<std::vector<Route>> routes(int family, unsigned table) = 0;
  // Adds exactly this route (NLM_F_EXCL). Error codes: EEXIST when a route
  // with its key is there, ENODEV when `dev` does not exist.
  virtual Result<void> add_route(const Route& r) = 0;
  // Deletes the route that has every field of `r` (the kernel matches the
  // interface, gateway, source, type and scope given). ESRCH when there is
  // no such route; ENODEV when its interface is gone (it took the route).
  virtual Result<void> remove_route(const Route& r) = 0;

  // Every rule of `family`, in the kernel's order (by priority, then age).
  virtual Result<std::vector<Rule>> rules(int family) = 0;
  // Adds exactly this rule, its protocol included. EEXIST when the kernel
  // holds it for present.
  virtual Result<void> add_rule(const Rule& r) = 0;
  // Deletes exactly this rule. The kernel deletes the first rule that
  // matches the selectors a request names, as wildcards: this is refused
  // with EBUSY when that first match would be another rule (one with more
  // selectors at the same priority). ENOENT when the rule is not there.
  virtual Result<void> remove_rule(const Rule& r) = 0;
};

}  // namespace rxerun::sys
