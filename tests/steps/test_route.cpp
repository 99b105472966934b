// route: the step's logic against the model's Routes.

#include <doctest/doctest.h>

#include <sys/socket.h>

#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

const char* kForced = "steps:\n  - {name: r, route: {dst: 10.10.0.2/32, dev: vA, src: 10.10.0.1, table: 100}}\n";

// The interfaces the routes go through.
struct RouteHarness : fakes::Harness {
  RouteHarness() {
    fake.links.add_host_link("", {.name = "vA", .up = true, .mtu = 1500});
    fake.links.add_host_link("", {.name = "vB", .up = true, .mtu = 1500});
  }
};

}  // namespace

TEST_CASE("route: adds the route, reports it as ip writes it, and cleanup deletes exactly it") {
  RouteHarness h;
  auto r = h.run_keep(kForced);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "r");
  CHECK(s.facts.at("changed") == true);
  CHECK(s.facts.at("route") == "10.10.0.2/32 dev vA src 10.10.0.1 table 100");
  CHECK(s.facts.at("table") == "100");
  CHECK(s.facts.at("dev") == "vA");
  CHECK(s.facts.at("metric") == 0);
  REQUIRE(h.fake.routes.table.size() == 1);
  const auto& added = h.fake.routes.table[0];
  CHECK(added.table == 100);
  CHECK(added.scope == 253);  // link: no gateway, as ip(8) gives it
  CHECK(h.fake.kernel.commands("routes") == Strings{"ip route add 10.10.0.2/32 dev vA src 10.10.0.1 table 100"});

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "delete route 10.10.0.2/32 dev vA src 10.10.0.1 table 100");
  CHECK(h.fake.routes.table.empty());
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("route: a second apply reports nothing changed and records no second undo") {
  RouteHarness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: a, route: {dst: 10.10.0.2/32, dev: vA, src: 10.10.0.1, table: 100}}\n"
      "  - {name: b, route: {dst: 10.10.0.2, dev: vA, src: 10.10.0.1, table: '100'}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("changed") == false);
  CHECK(r.cleanup.undos.size() == 1);
  CHECK(h.fake.routes.table.empty());
  CHECK(h.fake.kernel.commands("routes").size() == 2);  // one add, one delete
}

TEST_CASE("route: an identical route already there is adopted and left there") {
  RouteHarness h;
  h.fake.routes.table.push_back({.family = AF_INET,
                                 .dst = "10.10.0.2/32",
                                 .dev = "vA",
                                 .src = "10.10.0.1",
                                 .table = 100,
                                 .metric = 0,
                                 .scope = 253,
                                 .type = 1});
  auto r = h.run(kForced);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "r").facts.at("changed") == false);
  CHECK(r.cleanup.undos.empty());
  CHECK(h.fake.routes.table.size() == 1);  // not rxerun's: still there
  CHECK(h.fake.kernel.commands("routes").empty());
}

TEST_CASE("route: a different route with the same key is an error naming it, and nothing changes") {
  RouteHarness h;
  h.fake.routes.table.push_back({.family = AF_INET,
                                 .dst = "10.10.0.2/32",
                                 .dev = "vB",
                                 .src = "10.10.0.2",
                                 .table = 100,
                                 .metric = 0,
                                 .scope = 253,
                                 .type = 1});
  auto r = h.run(kForced);
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "r");
  CAPTURE(s.message);
  CHECK(s.message.find("table 100 has a route to 10.10.0.2/32 with metric 0 already") != std::string::npos);
  CHECK(s.message.find("10.10.0.2/32 dev vB src 10.10.0.2 table 100") != std::string::npos);
  CHECK(r.cleanup.undos.empty());
  CHECK(h.fake.kernel.commands("routes").empty());

  // Another metric is another route.
  RouteHarness h2;
  h2.fake.routes.table = h.fake.routes.table;
  auto r2 = h2.run("steps:\n  - {name: r, route: {dst: 10.10.0.2/32, dev: vA, table: 100, metric: 10}}\n");
  CHECK(r2.exit_code == 0);
  CHECK(step_named(r2, "r").facts.at("route") == "10.10.0.2/32 dev vA table 100 metric 10");
  CHECK(h2.fake.routes.table.size() == 1);
}

TEST_CASE("route: the kernel's EEXIST and ENODEV become words") {
  RouteHarness h;
  h.fake.kernel.fail("routes.add_route", EEXIST, "", 1, 0, "cannot add route: File exists");
  auto r = h.run(kForced);
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "r").message.find("table 100 has a route to 10.10.0.2/32 with metric 0 already") !=
        std::string::npos);
  CHECK(r.cleanup.clean());  // the recorded undo finds nothing to delete

  RouteHarness h2;
  h2.fake.links.delete_link("", "vA");
  auto r2 = h2.run(kForced);
  CHECK(r2.exit_code == 3);
  CHECK(step_named(r2, "r").message == "no interface vA (create it first)");
  CHECK(r2.cleanup.clean());
}

TEST_CASE("route: undo succeeds when the route or its interface is gone already") {
  RouteHarness h;
  REQUIRE(h.run_keep(kForced).exit_code == 0);
  h.fake.routes.table.clear();
  CHECK(h.cleanup().clean());
  CHECK(h.journal.pending().empty());

  RouteHarness h2;
  REQUIRE(h2.run_keep(kForced).exit_code == 0);
  h2.fake.links.delete_link("", "vA");
  CHECK(h2.cleanup().clean());
}

TEST_CASE("route: default, gateways, IPv6 with its default metric, and named tables") {
  RouteHarness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - {name: d, route: {dst: default, via: 10.0.0.1}}\n"
      "  - {name: six, route: {dst: 'fd00::/64', dev: vB, table: local}}\n"
      "  - {name: six-default, route: {dst: default, via: 'fe80::1', dev: vB}}\n"
      "  - {name: hole, route: {dst: 192.0.2.0/24, type: blackhole, table: 7}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "d").facts.at("route") == "default via 10.0.0.1");
  CHECK(step_named(r, "six").facts.at("route") == "fd00::/64 dev vB table local");
  CHECK(step_named(r, "six").facts.at("metric") == 1024);
  CHECK(step_named(r, "six-default").facts.at("route") == "default via fe80::1 dev vB");
  CHECK(step_named(r, "hole").facts.at("route") == "blackhole 192.0.2.0/24 table 7");
  CHECK(h.fake.routes.table.size() == 4);
  CHECK(h.cleanup().clean());
  CHECK(h.fake.routes.table.empty());
}

TEST_CASE("route: parameters are checked at load time, with the place") {
  RouteHarness h;
  auto d = h.diagnostics("steps:\n  - route: {dst: 10.10.0.5/24, dev: vA}\n");
  CHECK(d.find("test.yaml:2:") == 0);
  CHECK(d.find("the prefix is 10.10.0.0/24") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - route: {dst: 10.10.0.0/24}\n").find("needs 'dev' or 'via'") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - route: {dst: 10.10.0.0/24, dev: vA, table: mian}\n")
            .find("'table' must be a number 1..4294967295 or main, local, default, got 'mian'") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - route: {dst: 'fd00::/64', via: 10.0.0.1}\n").find("'dst' is inet6") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - route: {dst: 10.0.0.0/8, type: blackhole, dev: vA}\n")
            .find("takes no 'dev' and no 'via'") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - route: {dst: nowhere, dev: vA}\n").find("'dst' must be a prefix") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - route: {dev: vA}\n").find("missing required parameter 'dst'") != std::string::npos);
}

TEST_CASE("route: plan shows the ip route commands, and the footprint lets the veth take the route along") {
  auto planned = fakes::Harness().plan_run(
      "steps:\n"
      "  - netns: {name: lab}\n"
      "  - {name: r, route: {dst: 10.10.0.2/32, dev: vA, src: 10.10.0.1, table: 100}, netns: lab}\n");
  CHECK(step_named(planned.report, "r").status == StepStatus::Passed);
  Strings shells;
  for (const auto& a : planned.actions) shells.push_back(a.shell);
  CAPTURE(shells);
  CHECK(std::count(shells.begin(), shells.end(),
                   "ip netns exec lab ip route add 10.10.0.2/32 dev vA src 10.10.0.1 table 100") == 1);

  RouteHarness h;
  REQUIRE(h.run_keep("steps:\n  - route: {dst: '2001:db8::/32', dev: vA}\n").exit_code == 0);
  REQUIRE(h.journal.pending().size() == 1);
  CHECK(h.journal.pending()[0].footprint.on == Strings{"link:/vA"});
  CHECK(h.cleanup().clean());
}
