#pragma once
// A fake sys::Routes for step tests: one namespace's routes and rules in
// memory, with the kernel's answers where the steps depend on them (EEXIST
// for a route key or a rule taken, ESRCH/ENOENT for what is absent, ENODEV
// for a missing interface, a rule delete that takes the first match). Rules
// start as a new namespace's: pref 0 local, 32766 main, 32767 default (IPv4);
// 0 local, 32766 main (IPv6).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sys/routes.h"

namespace rxerun::fakes {

class FakeRoutes final : public sys::Routes {
 public:
  FakeRoutes();
  Result<std::vector<sys::Route>> routes(int family, unsigned table) override;
  Result<void> add_route(const sys::Route& r) override;
  Result<void> remove_route(const sys::Route& r) override;
  Result<std::vector<sys::Rule>> rules(int family) override;
  Result<void> add_rule(const sys::Rule& r) override;
  Result<void> remove_rule(const sys::Rule& r) override;

  // The rules of `family` as `ip rule` lists them, one "pref ..." a line.
  std::vector<std::string> rule_lines(int family) const;

  std::vector<sys::Route> table;                    // every route, any table
  std::map<int, std::vector<sys::Rule>> rule_sets;  // family -> rules, in the kernel's order
  std::set<std::string> missing_devs;               // interfaces that do not exist (ENODEV)
  std::optional<Error> add_error;                   // set: add_route() and add_rule() fail with it
  std::vector<std::string> log;                     // "route add ...", "route del ...", "rule add ...", "rule del ..."
};

}  // namespace rxerun::fakes
