#include "fakes/fake_routes.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace rxerun::fakes {

namespace {

sys::Rule kernel_rule(int family, unsigned pref, unsigned table) {
  sys::Rule r;
  r.family = family;
  r.pref = pref;
  r.table = table;
  r.action = FR_ACT_TO_TBL;
  r.protocol = RTPROT_KERNEL;
  return r;
}

bool same_key(const sys::Route& a, const sys::Route& b) {
  return a.family == b.family && a.table == b.table && a.dst == b.dst && a.metric == b.metric;
}

bool same_route(const sys::Route& a, const sys::Route& b) {
  return same_key(a, b) && a.dev == b.dev && a.via == b.via && a.src == b.src && a.type == b.type &&
         a.scope == b.scope && a.other == b.other;
}

}  // namespace

FakeRoutes::FakeRoutes() {
  rule_sets[AF_INET] = {kernel_rule(AF_INET, 0, sys::kTableLocal), kernel_rule(AF_INET, 32766, sys::kTableMain),
                        kernel_rule(AF_INET, 32767, sys::kTableDefault)};
  rule_sets[AF_INET6] = {kernel_rule(AF_INET6, 0, sys::kTableLocal), kernel_rule(AF_INET6, 32766, sys::kTableMain)};
}

Result<std::vector<sys::Route>> FakeRoutes::routes(int family, unsigned t) {
  std::vector<sys::Route> out;
  for (const auto& r : table)
    if (r.family == family && r.table == t) out.push_back(r);
  return out;
}

Result<void> FakeRoutes::add_route(const sys::Route& r) {
  if (add_error) return *add_error;
  if (!r.dev.empty() && missing_devs.count(r.dev)) return make_error("no interface " + r.dev, ENODEV);
  if (std::any_of(table.begin(), table.end(), [&](const sys::Route& x) { return same_key(x, r); }))
    return make_error("cannot add route " + sys::route_args(r) + ": File exists", EEXIST);
  log.push_back("route add " + sys::route_args(r));
  table.push_back(r);
  return {};
}

Result<void> FakeRoutes::remove_route(const sys::Route& r) {
  if (!r.dev.empty() && missing_devs.count(r.dev)) return make_error("no interface " + r.dev, ENODEV);
  auto it = std::find_if(table.begin(), table.end(), [&](const sys::Route& x) { return same_route(x, r); });
  if (it == table.end()) return make_error("cannot delete route " + sys::route_args(r) + ": No such process", ESRCH);
  log.push_back("route del " + sys::route_args(r));
  table.erase(it);
  return {};
}

Result<std::vector<sys::Rule>> FakeRoutes::rules(int family) {
  return rule_sets[family];
}

Result<void> FakeRoutes::add_rule(const sys::Rule& r) {
  if (add_error) return *add_error;
  auto& all = rule_sets[r.family];
  if (std::any_of(all.begin(), all.end(), [&](const sys::Rule& x) { return sys::same_rule(x, r); }))
    return make_error("cannot add rule " + sys::rule_args(r) + ": File exists", EEXIST);
  log.push_back("rule add " + sys::rule_args(r));
  auto at = std::find_if(all.begin(), all.end(), [&](const sys::Rule& x) { return x.pref > r.pref; });
  all.insert(at, r);
  return {};
}

Result<void> FakeRoutes::remove_rule(const sys::Rule& r) {
  auto& all = rule_sets[r.family];
  auto first = std::find_if(all.begin(), all.end(), [&](const sys::Rule& x) { return sys::rule_delete_matches(x, r); });
  const bool present = std::any_of(all.begin(), all.end(), [&](const sys::Rule& x) { return sys::same_rule(x, r); });
  if (!present || first == all.end()) return make_error("no rule " + sys::rule_args(r), ENOENT);
  if (!sys::same_rule(*first, r))
    return make_error("cannot delete rule " + sys::rule_args(r) + " alone: the kernel would take rule " +
                          sys::rule_args(*first) + " first",
                      EBUSY);
  log.push_back("rule del " + sys::rule_args(r));
  all.erase(first);
  return {};
}

std::vector<std::string> FakeRoutes::rule_lines(int family) const {
  std::vector<std::string> out;
  auto it = rule_sets.find(family);
  if (it != rule_sets.end())
    for (const auto& r : it->second) out.push_back(sys::rule_args(r));
  return out;
}

}  // namespace rxerun::fakes
