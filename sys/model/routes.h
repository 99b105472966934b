#pragma once
// One namespace's routes and policy-routing rules, in memory (sys/model/links.h
// says why sys/model/ exists), with the kernel's answers where the steps
// depend on them. A namespace starts as a new one does: no routes in the
// tables a scenario names, and the kernel's own rules (pref 0 lookup local,
// 32766 main, 32767 default for IPv4; 0 local and 32766 main for IPv6).

#include <map>
#include <vector>

#include "base/result.h"
#include "sys/routes.h"

namespace rxerun::sys {

// The kernel's key of a route: table, destination prefix, tos and
// priority (metric), and for IPv6 the source prefix. A second route with the
// same key is refused (EEXIST), whatever its interface or gateway.
bool same_route_key(const Route& a, const Route& b);
// The route a delete that names every field takes (what rxerun's steps
// send): the key, and the interface, gateway, preferred source, type, scope
// and what the model cannot express.
bool same_route(const Route& a, const Route& b);

class RoutesModel {
 public:
  RoutesModel();

  // Every route of `table` in `family`, in the order added.
  std::vector<Route> routes_of(int family, unsigned table) const;
  // EEXIST when a route with its key is there.
  Result<void> insert_route(const Route& r);
  // ESRCH when no route is the same (same_route()).
  Result<void> delete_route(const Route& r);

  // The rules of `family` in the kernel's order.
  const std::vector<Rule>& rules_of(int family);
  // After the rules of lower or equal priority, as the kernel inserts it.
  // EEXIST when the same rule (same_rule(), sys/routes.h) is there.
  Result<void> insert_rule(const Rule& r);
  // The kernel deletes the first rule that the request matches, the
  // selectors it leaves out matching anything (rule_delete_matches()):
  // ENOENT when the rule is not there, EBUSY when that first match is
  // another rule (which the kernel would take instead).
  Result<void> delete_rule(const Rule& r);

  // Open to the tests, which put the host's routes and rules here.
  std::vector<Route> table;                    // every route, of any table
  std::map<int, std::vector<Rule>> rule_sets;  // family -> rules, in the kernel's order
};

}  // namespace rxerun::sys
