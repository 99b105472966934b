#include "sys/model/routes.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

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

// What of `other` belongs to the key ("tos 4", IPv6's "from fd00::/64"),
// as the kernel's reader writes it there; the rest ("multipath (2 next
// hops)") does not.
std::string key_words(const std::string& other) {
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

}  // namespace

bool same_route_key(const Route& a, const Route& b) {
  return a.family == b.family && a.table == b.table && a.dst == b.dst && a.metric == b.metric &&
         key_words(a.other) == key_words(b.other);
}

bool same_route(const Route& a, const Route& b) {
  return same_route_key(a, b) && a.dev == b.dev && a.via == b.via && a.src == b.src && a.type == b.type &&
         a.scope == b.scope && a.other == b.other;
}

RoutesModel::RoutesModel() {
  rule_sets[AF_INET] = {kernel_rule(AF_INET, 0, kTableLocal), kernel_rule(AF_INET, 32766, kTableMain),
                        kernel_rule(AF_INET, 32767, kTableDefault)};
  rule_sets[AF_INET6] = {kernel_rule(AF_INET6, 0, kTableLocal), kernel_rule(AF_INET6, 32766, kTableMain)};
}

std::vector<Route> RoutesModel::routes_of(int family, unsigned t) const {
  std::vector<Route> out;
  for (const auto& r : table)
    if (r.family == family && r.table == t) out.push_back(r);
  return out;
}

Result<void> RoutesModel::insert_route(const Route& r) {
  if (std::any_of(table.begin(), table.end(), [&](const Route& x) { return same_route_key(x, r); }))
    return make_error("cannot add route " + route_args(r) + ": File exists", EEXIST);
  table.push_back(r);
  return {};
}

Result<void> RoutesModel::delete_route(const Route& r) {
  auto it = std::find_if(table.begin(), table.end(), [&](const Route& x) { return same_route(x, r); });
  if (it == table.end()) return make_error("cannot delete route " + route_args(r) + ": No such process", ESRCH);
  table.erase(it);
  return {};
}

const std::vector<Rule>& RoutesModel::rules_of(int family) {
  return rule_sets[family];
}

Result<void> RoutesModel::insert_rule(const Rule& r) {
  auto& all = rule_sets[r.family];
  if (std::any_of(all.begin(), all.end(), [&](const Rule& x) { return same_rule(x, r); }))
    return make_error("cannot add rule " + rule_args(r) + ": File exists", EEXIST);
  all.insert(std::find_if(all.begin(), all.end(), [&](const Rule& x) { return x.pref > r.pref; }), r);
  return {};
}

Result<void> RoutesModel::delete_rule(const Rule& r) {
  auto& all = rule_sets[r.family];
  auto first = std::find_if(all.begin(), all.end(), [&](const Rule& x) { return rule_delete_matches(x, r); });
  const bool present = std::any_of(all.begin(), all.end(), [&](const Rule& x) { return same_rule(x, r); });
  if (!present || first == all.end()) return make_error("no rule " + rule_args(r), ENOENT);
  if (!same_rule(*first, r))
    return make_error(
        "cannot delete rule " + rule_args(r) + " alone: the kernel would take rule " + rule_args(*first) + " first",
        EBUSY);
  all.erase(first);
  return {};
}

}  // namespace rxerun::sys
