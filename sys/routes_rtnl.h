#pragma once
// Routes and rules over rtnetlink with libnl-route, on the thread's cached
// socket for its current network namespace (RtnlSocket::current()), so that
// callers may setns between calls.

#include "sys/routes.h"

namespace rxerun::sys {

class RtnlRoutes final : public Routes {
 public:
  Result<std::vector<Route>> routes(int family, unsigned table) override;
  Result<void> add_route(const Route& r) override;
  Result<void> remove_route(const Route& r) override;
  Result<std::vector<Rule>> rules(int family) override;
  Result<void> add_rule(const Rule& r) override;
  Result<void> remove_rule(const Rule& r) override;
};

}  // namespace rxerun::sys
