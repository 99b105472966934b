// The model of routes and rules (sys/model/routes.h), the stand-in of plan
// and tests: what the kernel takes for the same route and the same rule.

#include <doctest/doctest.h>

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>

#include "sys/model/system.h"

using namespace rxerun;

namespace {

sys::Route route(const std::string& dst, const std::string& dev) {
  return sys::Route{.family = AF_INET, .dst = dst, .dev = dev, .table = sys::kTableMain, .scope = RT_SCOPE_LINK};
}

sys::Rule lookup(unsigned pref, unsigned table) {
  return sys::Rule{.family = AF_INET, .pref = pref, .action = FR_ACT_TO_TBL, .table = table};
}

// A model with the interfaces vA and vB.
struct Model : sys::ModelSystem {
  Model() {
    links.add_host_link("", {.name = "vA"});
    links.add_host_link("", {.name = "vB"});
  }
};

std::size_t routes_in(Model& m, unsigned table) {
  return m.routes.routes(AF_INET, table)->size();
}

}  // namespace

TEST_CASE("sys.model.routes: a route's key is table, destination, tos and metric, not its interface") {
  Model m;
  REQUIRE(m.routes.add_route(route("10.10.0.0/24", "vA")));

  auto again = m.routes.add_route(route("10.10.0.0/24", "vB"));  // same key, another interface
  REQUIRE_FALSE(again);
  CHECK(again.error().code == EEXIST);
  auto multipath = route("10.10.0.0/24", "");
  multipath.other = "multipath (2 next hops)";  // next hops are no part of the key
  CHECK(m.routes.add_route(multipath).error().code == EEXIST);

  auto metric = route("10.10.0.0/24", "vB");
  metric.metric = 10;
  CHECK(m.routes.add_route(metric));
  auto table = route("10.10.0.0/24", "vB");
  table.table = 100;
  CHECK(m.routes.add_route(table));
  auto tos = route("10.10.0.0/24", "vB");
  tos.other = "tos 4";
  CHECK(m.routes.add_route(tos));
  CHECK(routes_in(m, sys::kTableMain) == 3);
  CHECK(routes_in(m, 100) == 1);
}

TEST_CASE("sys.model.routes: a delete takes only the route equal in every field, `other` included") {
  Model m;
  auto tos = route("10.10.0.0/24", "vA");
  tos.other = "tos 4";
  REQUIRE(m.routes.add_route(tos));

  auto plain = m.routes.remove_route(route("10.10.0.0/24", "vA"));
  REQUIRE_FALSE(plain);
  CHECK(plain.error().code == ESRCH);
  auto gateway = tos;
  gateway.via = "10.10.0.1";
  CHECK(m.routes.remove_route(gateway).error().code == ESRCH);
  CHECK(m.routes.remove_route(tos));
  CHECK(m.routes.table.empty());
}

TEST_CASE("sys.model.routes: a namespace starts with the kernel's rules, and a rule goes in after its priority's") {
  Model m;
  CHECK(m.routes.rules(AF_INET)->size() == 3);
  CHECK(m.routes.rules(AF_INET6)->size() == 2);
  CHECK(m.routes.rules(AF_INET)->front().protocol == RTPROT_KERNEL);

  REQUIRE(m.routes.add_rule(lookup(32766, 100)));
  const auto rules = *m.routes.rules(AF_INET);
  REQUIRE(rules.size() == 4);
  CHECK(rules[1].table == sys::kTableMain);  // the older rule of that priority first
  CHECK(rules[2].table == 100);
  CHECK(m.routes.add_rule(lookup(32766, 100)).error().code == EEXIST);
}

TEST_CASE("sys.model.routes: a rule delete takes the kernel's first match, and is refused when that is another rule") {
  Model m;
  auto from = lookup(100, 100);
  from.from = "10.10.0.0/24";
  REQUIRE(m.routes.add_rule(from));
  REQUIRE(m.routes.add_rule(lookup(100, 100)));

  // The kernel matches `lookup 100` at 100 to the older rule with `from`
  // first: deleting the one without would take the other.
  auto busy = m.routes.remove_rule(lookup(100, 100));
  REQUIRE_FALSE(busy);
  CHECK(busy.error().code == EBUSY);
  CHECK(m.routes.remove_rule(from));
  CHECK(m.routes.remove_rule(lookup(100, 100)));
  CHECK(m.routes.remove_rule(lookup(100, 100)).error().code == ENOENT);
}

TEST_CASE("sys.model.routes: a route needs its interface, and goes with it") {
  Model m;
  CHECK(m.routes.add_route(route("10.20.0.0/24", "vX")).error().code == ENODEV);
  REQUIRE(m.routes.add_route(route("10.20.0.0/24", "vA")));
  REQUIRE(m.links.remove({"vA"}));
  CHECK(routes_in(m, sys::kTableMain) == 0);
  CHECK(m.routes.remove_route(route("10.20.0.0/24", "vA")).error().code == ENODEV);
}
