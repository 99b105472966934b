#pragma once
// Routes and rules for `rxerun plan` (sys/recording/system.h): notes the `ip route`
// / `ip rule` command a person would type and answers reads from a model of
// what the plan did, one per namespace (sys/model/routes.h). Every namespace
// starts as a new one does, the kernel's default rules included, so that
// moving the local rule previews as it will run.

#include <map>
#include <string>
#include <vector>

#include "sys/model/routes.h"
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
  RoutesModel& here();
  ActionLog& log_;
  std::map<std::string, RoutesModel> models_;  // by namespace
};

}  // namespace rxerun::sys
