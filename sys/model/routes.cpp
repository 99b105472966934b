#include "sys/model/routes.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

Rule kernel_rule(int family, unsigned pref, unsigned table) {
  Rule r;
  r.family = family;
  r.pref = pref;
  r.table = table;
  r.action = FR_ACT_TO_TBL;
  r.protocol = RTPROT_KERNEL;
  return r;
}

// What of `other` belongs to the key ("tos 4", IPv6's "from fd00::/64"), as
// the kernel's reader writes it there; the rest ("multipath (2 next hops)")
// does not.
std::string route_key_words(const std::string& other) {
  std::istringstream in(other);
  std::string key;
  for (std::string w; in >> w;) {
    if (w != "tos" && w != "from") continue;
    std::string value;
    in >> value;
    key += w + " " + value + " ";
  }
  return key;
}

bool same_route_key(const Route& a, const Route& b) {
  return a.family == b.family && a.table == b.table && a.dst == b.dst && a.metric == b.metric &&
         route_key_words(a.other) == route_key_words(b.other);
}

// The route a delete that names every field takes (what rxerun's steps send).
bool same_route(const Route& a, const Route& b) {
  return same_route_key(a, b) && a.dev == b.dev && a.via == b.via && a.src == b.src && a.type == b.type &&
         a.scope == b.scope && a.other == b.other;
}

// `ip [-6] OBJECT VERB WORDS...`, quoted for a shell.
std::string ip_shell(int family, std::vector<std::string> verb, const std::vector<std::string>& words) {
  std::vector<std::string> argv = ip_argv(family);
  argv.insert(argv.end(), verb.begin(), verb.end());
  argv.insert(argv.end(), words.begin(), words.end());
  return shell_join(argv);
}

}  // namespace

ModelRoutes::Tables::Tables() {
  rule_sets[AF_INET] = {kernel_rule(AF_INET, 0, kTableLocal), kernel_rule(AF_INET, 32766, kTableMain),
                        kernel_rule(AF_INET, 32767, kTableDefault)};
  rule_sets[AF_INET6] = {kernel_rule(AF_INET6, 0, kTableLocal), kernel_rule(AF_INET6, 32766, kTableMain)};
}

ModelRoutes::Tables& ModelRoutes::here() {
  auto& t = by_netns[k_.netns];
  std::erase_if(t.table, [&](const Route& r) { return !r.dev.empty() && !links_.may_exist(k_.netns, r.dev); });
  return t;
}

Result<std::vector<Route>> ModelRoutes::routes(int family, unsigned t) {
  std::vector<Route> out;
  for (const auto& r : here().table)
    if (r.family == family && r.table == t) out.push_back(r);
  return out;
}

Result<void> ModelRoutes::add_route(const Route& r) {
  if (auto f = k_.fault("routes.add_route", r.dst)) return *f;
  if (!r.dev.empty() && !links_.may_exist(k_.netns, r.dev)) return make_error("no interface " + r.dev, ENODEV);
  auto& all = here().table;
  if (std::any_of(all.begin(), all.end(), [&](const Route& x) { return same_route_key(x, r); }))
    return make_error("cannot add route " + route_args(r) + ": File exists", EEXIST);
  all.push_back(r);
  k_.did("routes", "add route " + route_args(r), ip_shell(r.family, {"route", "add"}, route_argv(r)));
  return {};
}

Result<void> ModelRoutes::remove_route(const Route& r) {
  if (auto f = k_.fault("routes.remove_route", r.dst)) return *f;
  if (!r.dev.empty() && !links_.may_exist(k_.netns, r.dev)) return make_error("no interface " + r.dev, ENODEV);
  auto& all = here().table;
  auto it = std::find_if(all.begin(), all.end(), [&](const Route& x) { return same_route(x, r); });
  if (it != all.end()) {
    all.erase(it);
  } else if (const Error e = make_error("cannot delete route " + route_args(r) + ": No such process", ESRCH);
             k_.refused(e)) {
    return e;
  }
  k_.did("routes", "delete route " + route_args(r), ip_shell(r.family, {"route", "del"}, route_argv(r)));
  return {};
}

Result<void> ModelRoutes::add_rule(const Rule& r) {
  if (auto f = k_.fault("routes.add_rule", std::to_string(r.pref))) return *f;
  auto& all = here().rule_sets[r.family];
  if (std::any_of(all.begin(), all.end(), [&](const Rule& x) { return same_rule(x, r); }))
    return make_error("cannot add rule " + rule_args(r) + ": File exists", EEXIST);
  all.insert(std::find_if(all.begin(), all.end(), [&](const Rule& x) { return x.pref > r.pref; }), r);
  // A rule put back carries its protocol ("kernel" for the kernel's own).
  std::vector<std::string> words = rule_argv(r);
  if (r.protocol == RTPROT_KERNEL)
    words.insert(words.end(), {"protocol", "kernel"});
  else if (r.protocol == RTPROT_BOOT)
    words.insert(words.end(), {"protocol", "boot"});
  else if (r.protocol == RTPROT_STATIC)
    words.insert(words.end(), {"protocol", "static"});
  else if (r.protocol)
    words.insert(words.end(), {"protocol", std::to_string(r.protocol)});
  k_.did("routes", "add rule " + rule_args(r), ip_shell(r.family, {"rule", "add"}, words));
  return {};
}

Result<void> ModelRoutes::remove_rule(const Rule& r) {
  if (auto f = k_.fault("routes.remove_rule", std::to_string(r.pref))) return *f;
  auto& all = here().rule_sets[r.family];
  auto first = std::find_if(all.begin(), all.end(), [&](const Rule& x) { return rule_delete_matches(x, r); });
  const bool present = std::any_of(all.begin(), all.end(), [&](const Rule& x) { return same_rule(x, r); });
  if (!present || first == all.end()) {
    if (const Error e = make_error("no rule " + rule_args(r), ENOENT); k_.refused(e)) return e;
  } else if (!same_rule(*first, r)) {
    return make_error(
        "cannot delete rule " + rule_args(r) + " alone: the kernel would take rule " + rule_args(*first) + " first",
        EBUSY);
  } else {
    all.erase(first);
  }
  k_.did("routes", "delete rule " + rule_args(r), ip_shell(r.family, {"rule", "del"}, rule_argv(r)));
  return {};
}

std::vector<std::string> ModelRoutes::rule_lines(int family) {
  std::vector<std::string> out;
  for (const auto& r : by_netns[""].rule_sets[family]) out.push_back(rule_args(r));
  return out;
}

}  // namespace rxerun::sys
