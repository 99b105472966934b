// The words ip(8) uses for routes and rules (table, scope and type names,
// the arguments of `ip route add` / `ip rule add`): shared by the steps'
// messages and facts and by `rxerun plan`, so that all of them read the
// way a person types the commands.

#include "sys/routes.h"

#include <arpa/inet.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <charconv>
#include <cstdio>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

// "default" for a prefix of length 0, as ip(8) writes it.
std::string prefix_text(const std::string& cidr) {
  const auto slash = cidr.rfind('/');
  if (slash != std::string::npos && cidr.substr(slash + 1) == "0") return "default";
  return cidr;
}

}  // namespace

std::optional<Prefix> parse_address(const std::string& text) {
  unsigned char buf[16];
  Prefix p;
  if (inet_pton(AF_INET, text.c_str(), buf) == 1)
    p.family = AF_INET;
  else if (inet_pton(AF_INET6, text.c_str(), buf) == 1)
    p.family = AF_INET6;
  else
    return std::nullopt;
  char out[INET6_ADDRSTRLEN] = {};
  inet_ntop(p.family, buf, out, sizeof(out));
  p.text = out;
  p.length = p.family == AF_INET ? 32 : 128;
  return p;
}

std::optional<Prefix> parse_prefix(const std::string& text, std::string* why) {
  const auto slash = text.find('/');
  auto addr = parse_address(text.substr(0, slash));
  if (!addr) {
    if (why) *why = "'" + text.substr(0, slash) + "' is not an IPv4 or IPv6 address";
    return std::nullopt;
  }
  const unsigned max = addr->length;
  unsigned len = max;
  if (slash != std::string::npos) {
    const std::string digits = text.substr(slash + 1);
    unsigned long n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n > max) {
      if (why) *why = "prefix length '" + digits + "' is not a number 0.." + std::to_string(max);
      return std::nullopt;
    }
    len = static_cast<unsigned>(n);
  }
  unsigned char buf[16] = {};
  inet_pton(addr->family, addr->text.c_str(), buf);
  bool host_bits = false;
  for (unsigned bit = len; bit < max; ++bit) {
    unsigned char& byte = buf[bit / 8];
    const unsigned char mask = static_cast<unsigned char>(0x80u >> (bit % 8));
    if (byte & mask) host_bits = true;
    byte = static_cast<unsigned char>(byte & ~mask);
  }
  char out[INET6_ADDRSTRLEN] = {};
  inet_ntop(addr->family, buf, out, sizeof(out));
  const std::string canonical = std::string(out) + "/" + std::to_string(len);
  if (host_bits) {
    if (why) *why = "'" + text + "' has bits set past its prefix length: the prefix is " + canonical;
    return std::nullopt;
  }
  return Prefix{addr->family, canonical, len};
}

bool same_rule(const Rule& a, const Rule& b) {
  return a.family == b.family && a.pref == b.pref && a.from == b.from && a.to == b.to && a.iif == b.iif &&
         a.oif == b.oif && a.fwmark == b.fwmark && a.fwmask == b.fwmask && a.action == b.action && a.table == b.table &&
         a.other == b.other;
}

bool rule_delete_matches(const Rule& have, const Rule& req) {
  if (req.action && have.action != req.action) return false;
  if (req.table && have.table != req.table) return false;
  if (have.pref != req.pref) return false;  // a request always names its priority
  if (!req.iif.empty() && have.iif != req.iif) return false;
  if (!req.oif.empty() && have.oif != req.oif) return false;
  if (req.fwmark && have.fwmark != req.fwmark) return false;
  if (req.fwmask && have.fwmask != req.fwmask) return false;
  if (req.protocol && have.protocol != req.protocol) return false;
  if (!req.from.empty() && have.from != req.from) return false;
  if (!req.to.empty() && have.to != req.to) return false;
  return true;
}

std::string table_name(unsigned table) {
  switch (table) {
    case kTableLocal: return "local";
    case kTableMain: return "main";
    case kTableDefault: return "default";
    default: return std::to_string(table);
  }
}

std::optional<unsigned> parse_table(const std::string& text) {
  if (text == "local") return kTableLocal;
  if (text == "main") return kTableMain;
  if (text == "default") return kTableDefault;
  unsigned long long n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n == 0 || n > 0xffffffffull)
    return std::nullopt;
  return static_cast<unsigned>(n);
}

std::string scope_name(int scope) {
  switch (scope) {
    case RT_SCOPE_UNIVERSE: return "global";
    case RT_SCOPE_SITE: return "site";
    case RT_SCOPE_LINK: return "link";
    case RT_SCOPE_HOST: return "host";
    case RT_SCOPE_NOWHERE: return "nowhere";
    default: return std::to_string(scope);
  }
}

std::string family_name(int family) {
  return family == AF_INET6 ? "inet6" : "inet";
}

std::string route_type_name(int type) {
  switch (type) {
    case RTN_UNICAST: return "unicast";
    case RTN_LOCAL: return "local";
    case RTN_BROADCAST: return "broadcast";
    case RTN_ANYCAST: return "anycast";
    case RTN_MULTICAST: return "multicast";
    case RTN_BLACKHOLE: return "blackhole";
    case RTN_UNREACHABLE: return "unreachable";
    case RTN_PROHIBIT: return "prohibit";
    case RTN_THROW: return "throw";
    case RTN_NAT: return "nat";
    default: return "type " + std::to_string(type);
  }
}

int default_scope(const Route& r) {
  if (r.type == RTN_LOCAL) return RT_SCOPE_HOST;
  if (r.family == AF_INET && r.type == RTN_UNICAST && r.via.empty()) return RT_SCOPE_LINK;
  return RT_SCOPE_UNIVERSE;
}

std::vector<std::string> ip_argv(int family) {
  if (family == AF_INET6) return {"ip", "-6"};
  return {"ip"};
}

namespace {

// `other` is text for people ("tos 4", "multipath (2 next hops)"): its words.
void add_words(std::vector<std::string>& out, const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t end = text.find(' ', i);
    const std::string word = text.substr(i, end == std::string::npos ? std::string::npos : end - i);
    if (!word.empty()) out.push_back(word);
    if (end == std::string::npos) break;
    i = end + 1;
  }
}

}  // namespace

std::vector<std::string> route_argv(const Route& r) {
  std::vector<std::string> a;
  if (r.type != RTN_UNICAST) a.push_back(route_type_name(r.type));
  a.push_back(prefix_text(r.dst));
  if (!r.via.empty()) a.insert(a.end(), {"via", r.via});
  if (!r.dev.empty()) a.insert(a.end(), {"dev", r.dev});
  if (!r.src.empty()) a.insert(a.end(), {"src", r.src});
  if (r.table != kTableMain) a.insert(a.end(), {"table", table_name(r.table)});
  if (r.metric != (r.family == AF_INET6 ? 1024u : 0u)) a.insert(a.end(), {"metric", std::to_string(r.metric)});
  if (r.scope != default_scope(r)) a.insert(a.end(), {"scope", scope_name(r.scope)});
  add_words(a, r.other);
  return a;
}

std::string route_args(const Route& r) {
  return join(route_argv(r), " ");
}

std::vector<std::string> rule_argv(const Rule& r) {
  std::vector<std::string> a{"pref", std::to_string(r.pref)};
  if (!r.iif.empty()) a.insert(a.end(), {"iif", r.iif});
  if (!r.oif.empty()) a.insert(a.end(), {"oif", r.oif});
  if (!r.from.empty()) a.insert(a.end(), {"from", prefix_text(r.from)});
  if (!r.to.empty()) a.insert(a.end(), {"to", prefix_text(r.to)});
  if (r.fwmark || r.fwmask) {
    std::string mark = hex(r.fwmark);
    if (r.fwmask != 0xffffffffu) mark += "/" + hex(r.fwmask);
    a.insert(a.end(), {"fwmark", mark});
  }
  add_words(a, r.other);
  switch (r.action) {
    case FR_ACT_TO_TBL: a.insert(a.end(), {"lookup", table_name(r.table)}); break;
    case FR_ACT_BLACKHOLE: a.push_back("blackhole"); break;
    case FR_ACT_UNREACHABLE: a.push_back("unreachable"); break;
    case FR_ACT_PROHIBIT: a.push_back("prohibit"); break;
    case FR_ACT_NOP: a.push_back("nop"); break;
    default: a.insert(a.end(), {"action", std::to_string(r.action)}); break;
  }
  return a;
}

std::string rule_args(const Rule& r) {
  return join(rule_argv(r), " ");
}

}  // namespace rxerun::sys
