#pragma once
// Routes and policy-routing rules in the model (sys/model/kernel.h), per
// namespace, with the kernel's answers where the steps depend on them. A
// namespace starts as a new one does: no routes in the tables a scenario
// names, and the kernel's own rules (pref 0 lookup local, 32766 main, 32767
// default for IPv4; 0 local and 32766 main for IPv6). A route through an
// interface goes with the interface.

#include <map>
#include <vector>

#include "sys/model/links.h"
#include "sys/routes.h"

namespace rxerun::sys {

class ModelRoutes final : public Routes, public NetnsScoped {
 public:
  struct Tables {
    Tables();
    std::vector<Route> table;                    // every route, of any table, in the order added
    std::map<int, std::vector<Rule>> rule_sets;  // family -> rules, in the kernel's order
  };

  ModelRoutes(ModelKernel& k, const ModelLinks& links) : k_(k), links_(links) {}
  Result<std::vector<Route>> routes(int family, unsigned table) override;
  // EEXIST when a route with its key (table, destination, metric, tos; for
  // IPv6 the source) is there, whatever its interface or gateway; ENODEV
  // when its interface does not exist.
  Result<void> add_route(const Route& r) override;
  // ESRCH when no route has every field of `r`; ENODEV when its interface is gone.
  Result<void> remove_route(const Route& r) override;
  Result<std::vector<Rule>> rules(int family) override { return by_netns[k_.netns].rule_sets[family]; }
  // After the rules of lower or equal priority, as the kernel inserts it;
  // EEXIST when the same rule is there.
  Result<void> add_rule(const Rule& r) override;
  // The kernel deletes the first rule the request matches (the selectors it
  // leaves out match anything): ENOENT when the rule is not there, EBUSY
  // when that first match is another rule.
  Result<void> remove_rule(const Rule& r) override;
  void netns_created(const std::string& netns) override { by_netns[netns] = Tables(); }
  void netns_deleted(const std::string& netns) override { by_netns.erase(netns); }

  // The rules of `family` in rxerun's own namespace, as `ip rule` lists
  // them, one "pref ..." a line.
  std::vector<std::string> rule_lines(int family);

  std::map<std::string, Tables> by_netns;
  std::vector<Route>& table = by_netns[""].table;
  std::map<int, std::vector<Rule>>& rule_sets = by_netns[""].rule_sets;

 private:
  // The current namespace's tables, without the routes of interfaces gone.
  Tables& here();
  ModelKernel& k_;
  const ModelLinks& links_;
};

}  // namespace rxerun::sys
