// The shared model of routes and rules (sys/model/routes.h), which `rxerun
// plan` and the tests' FakeRoutes both keep their state in: what the kernel
// takes for the same route and the same rule.

#include <doctest/doctest.h>

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>

#include "sys/model/routes.h"

using namespace rxerun;

namespace {

sys::Route route(const std::string& dst, const std::string& dev) {
  return sys::Route{.family = AF_INET, .dst = dst, .dev = dev, .table = sys::kTableMain, .scope = RT_SCOPE_LINK};
}

sys::Rule lookup(unsigned pref, unsigned table) {
  return sys::Rule{.family = AF_INET, .pref = pref, .action = FR_ACT_TO_TBL, .table = table};
}

}  // namespace

TEST_CASE("sys.model.routes: a route's key is table, destination, tos and metric, not its interface") {
  sys::RoutesModel m;
  REQUIRE(m.insert_route(route("10.10.0.0/24", "vA")));

  auto again = m.insert_route(route("10.10.0.0/24", "vB"));  // same key, another interface
  REQUIRE_FALSE(again);
  CHECK(again.error().code == EEXIST);
  auto multipath = route("10.10.0.0/24", "");
  multipath.other = "multipath (2 next hops)";  // next hops are no part of the key
  CHECK(m.insert_route(multipath).error().code == EEXIST);

  auto metric = route("10.10.0.0/24", "vB");
  metric.metric = 10;
  CHECK(m.insert_route(metric));
  auto table = route("10.10.0.0/24", "vB");
  table.table = 100;
  CHECK(m.insert_route(table));
  auto tos = route("10.10.0.0/24", "vB");
  tos.other = "tos 4";
  CHECK(m.insert_route(tos));
  CHECK(m.routes_of(AF_INET, sys::kTableMain).size() == 3);
  CHECK(m.routes_of(AF_INET, 100).size() == 1);
}

TEST_CASE("sys.model.routes: a delete takes only the route equal in every field, `other` included") {
  sys::RoutesModel m;
  auto tos = route("10.10.0.0/24", "vA");
  tos.other = "tos 4";
  REQUIRE(m.insert_route(tos));

  auto plain = m.delete_route(route("10.10.0.0/24", "vA"));
  REQUIRE_FALSE(plain);
  CHECK(plain.error().code == ESRCH);
  auto gateway = tos;
  gateway.via = "10.10.0.1";
  CHECK(m.delete_route(gateway).error().code == ESRCH);
  CHECK(m.delete_route(tos));
  CHECK(m.table.empty());
}

TEST_CASE("sys.model.routes: a namespace starts with the kernel's rules, and a rule goes in after its priority's") {
  sys::RoutesModel m;
  CHECK(m.rules_of(AF_INET).size() == 3);
  CHECK(m.rules_of(AF_INET6).size() == 2);
  CHECK(m.rules_of(AF_INET).front().protocol == RTPROT_KERNEL);

  REQUIRE(m.insert_rule(lookup(32766, 100)));
  const auto& rules = m.rules_of(AF_INET);
  REQUIRE(rules.size() == 4);
  CHECK(rules[1].table == sys::kTableMain);  // the older rule of that priority first
  CHECK(rules[2].table == 100);
  CHECK(m.insert_rule(lookup(32766, 100)).error().code == EEXIST);
}

TEST_CASE("sys.model.routes: a rule delete takes the kernel's first match, and is refused when that is another rule") {
  sys::RoutesModel m;
  auto from = lookup(100, 100);
  from.from = "10.10.0.0/24";
  REQUIRE(m.insert_rule(from));
  REQUIRE(m.insert_rule(lookup(100, 100)));

  // The kernel matches `lookup 100` at 100 to the older rule with `from`
  // first: deleting the one without would take the other.
  auto busy = m.delete_rule(lookup(100, 100));
  REQUIRE_FALSE(busy);
  CHECK(busy.error().code == EBUSY);
  CHECK(m.delete_rule(from));
  CHECK(m.delete_rule(lookup(100, 100)));
  CHECK(m.delete_rule(lookup(100, 100)).error().code == ENOENT);
}
