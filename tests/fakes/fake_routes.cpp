#include "fakes/fake_routes.h"

#include <cerrno>

namespace rxerun::fakes {

Result<std::vector<sys::Route>> FakeRoutes::routes(int family, unsigned t) {
  return routes_of(family, t);
}

Result<void> FakeRoutes::add_route(const sys::Route& r) {
  if (add_error) return *add_error;
  if (!r.dev.empty() && missing_devs.count(r.dev)) return make_error("no interface " + r.dev, ENODEV);
  if (auto added = insert_route(r); !added) return added;
  log.push_back("route add " + sys::route_args(r));
  return {};
}

Result<void> FakeRoutes::remove_route(const sys::Route& r) {
  if (!r.dev.empty() && missing_devs.count(r.dev)) return make_error("no interface " + r.dev, ENODEV);
  if (auto removed = delete_route(r); !removed) return removed;
  log.push_back("route del " + sys::route_args(r));
  return {};
}

Result<std::vector<sys::Rule>> FakeRoutes::rules(int family) {
  return rules_of(family);
}

Result<void> FakeRoutes::add_rule(const sys::Rule& r) {
  if (add_error) return *add_error;
  if (auto added = insert_rule(r); !added) return added;
  log.push_back("rule add " + sys::rule_args(r));
  return {};
}

Result<void> FakeRoutes::remove_rule(const sys::Rule& r) {
  if (auto removed = delete_rule(r); !removed) return removed;
  log.push_back("rule del " + sys::rule_args(r));
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
