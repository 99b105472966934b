#pragma once
// Routes and rules for `rxerun plan` (sys/recording/system.h): notes the `ip route`
// / `ip rule` command a person would type and answers reads from a model of
// what the plan did. Every namespace starts as a new one does: no routes in
// the tables a scenario names, and the kernel's default rules (pref 0
// lookup local, 32766 main, 32767 default for IPv4; 0 local and 32766 main
// for IPv6), so that moving the local rule previews as it will run.

#include <map>
#include <string>
#include <vector>

#include "sys/routes.h"

namespace rxerun::sys {

class ActionLog;

class RecordingRoutes final : public Routes {
 public:
  explicit RecordingRoutes(ActionLog& log) : log_(log) {}
  Result<std::vector<Route>> routes(int family, unsigned table) override;
  Result<void> add_route(const Route& r) override;
  Result<void> remove_route(const Route& r) override;
  Result<std::vector<Rule>> rules(int family) override;
  Result<void> add_rule(const Rule& r) override;
  Result<void> remove_rule(const Rule& r) override;

 private:
  std::vector<Route>& routes_here();
  std::vector<Rule>& rules_here(int family);
  ActionLog& log_;
  std::map<std::string, std::vector<Route>> routes_;                // by namespace
  std::map<std::pair<std::string, int>, std::vector<Rule>> rules_;  // by (namespace, family)
};

}  // namespace rxerun::sys
