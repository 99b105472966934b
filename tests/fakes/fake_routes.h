#pragma once
// A fake sys::Routes for step tests: one namespace's routes and rules as
// sys::RoutesModel keeps them (with the kernel's answers: EEXIST for a route
// key or a rule taken, ESRCH/ENOENT for what is absent, a rule delete that
// takes the first match), their state open to the test, and what tests
// script on top: interfaces that do not exist, a failure for every add.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sys/model/routes.h"
#include "sys/routes.h"

namespace rxerun::fakes {

class FakeRoutes final : public sys::Routes, public sys::RoutesModel {
 public:
  Result<std::vector<sys::Route>> routes(int family, unsigned table) override;
  Result<void> add_route(const sys::Route& r) override;
  Result<void> remove_route(const sys::Route& r) override;
  Result<std::vector<sys::Rule>> rules(int family) override;
  Result<void> add_rule(const sys::Rule& r) override;
  Result<void> remove_rule(const sys::Rule& r) override;

  // The rules of `family` as `ip rule` lists them, one "pref ..." a line.
  std::vector<std::string> rule_lines(int family) const;

  std::set<std::string> missing_devs;  // interfaces that do not exist (ENODEV)
  std::optional<Error> add_error;      // set: add_route() and add_rule() fail with it
  std::vector<std::string> log;        // "route add ...", "route del ...", "rule add ...", "rule del ..."
};

}  // namespace rxerun::fakes
