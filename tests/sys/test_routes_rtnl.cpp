// RtnlRoutes and the route and rule steps on the real kernel, as root, each
// case inside its own throwaway network namespace; `ip` is the independent
// observer.

#include <doctest/doctest.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "support/privileged.h"
#include "support/real_harness.h"
#include "support/shell.h"
#include "sys/routes_rtnl.h"

using namespace rxerun;
using rxerun::testing::command_output;
using rxerun::testing::RealHarness;
using rxerun::testing::sh;
using rxerun::testing::step_named;
using rxerun::testing::ThrowawayNetns;

namespace {

// A veth pair vA/vB, both up, 10.10.0.1/24 on vA and 10.10.0.2/24 on vB.
void pair() {
  rxerun::testing::loopback_up();
  sh("ip link add vA type veth peer name vB");
  sh("ip addr add 10.10.0.1/24 dev vA && ip addr add 10.10.0.2/24 dev vB");
  sh("ip link set vA up && ip link set vB up");
}

std::string rules4() {
  return command_output("ip -4 rule show");
}
std::string rules6() {
  return command_output("ip -6 rule show");
}

const char* kDefaultRules4 = "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default";

}  // namespace

TEST_CASE("sys.routes: a route goes into a table, lists back field by field, and is deleted exactly") {
  ThrowawayNetns ns;
  pair();
  sys::RtnlRoutes routes;
  sys::Route r{.family = AF_INET,
               .dst = "10.10.0.2/32",
               .dev = "vA",
               .src = "10.10.0.1",
               .table = 100,
               .metric = 0,
               .scope = RT_SCOPE_LINK,
               .type = RTN_UNICAST};
  auto none = routes.routes(AF_INET, 100);  // a table that does not exist yet
  REQUIRE(none);
  CHECK(none->empty());

  REQUIRE(routes.add_route(r));
  CHECK(command_output("ip route show table 100") == "10.10.0.2 dev vA scope link src 10.10.0.1 ");
  auto listed = routes.routes(AF_INET, 100);
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  const auto& got = (*listed)[0];
  CHECK(got.dst == "10.10.0.2/32");
  CHECK(got.dev == "vA");
  CHECK(got.src == "10.10.0.1");
  CHECK(got.via.empty());
  CHECK(got.table == 100);
  CHECK(got.metric == 0);
  CHECK(got.scope == RT_SCOPE_LINK);
  CHECK(got.type == RTN_UNICAST);
  CHECK(got.other.empty());

  auto twice = routes.add_route(r);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == EEXIST);
  sys::Route other = r;
  other.dev = "vB";
  other.src = "10.10.0.2";
  auto clash = routes.add_route(other);
  REQUIRE_FALSE(clash);
  CHECK(clash.error().code == EEXIST);

  // A delete that names another interface leaves ours alone.
  auto wrong = routes.remove_route(other);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().code == ESRCH);
  CHECK(command_output("ip route show table 100").find("dev vA") != std::string::npos);

  REQUIRE(routes.remove_route(r));
  CHECK(command_output("ip route show table 100").empty());
  auto gone = routes.remove_route(r);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == ESRCH);
  sys::Route nodev = r;
  nodev.dev = "vX";
  auto missing = routes.add_route(nodev);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ENODEV);
}

TEST_CASE("sys.routes: default routes, gateways, IPv6, blackholes, the kernel's words on a bad source") {
  ThrowawayNetns ns;
  pair();
  sh("ip addr add fd00::1/64 dev vA nodad");
  sh("ip addr add 10.30.0.1/24 dev vA");
  sys::RtnlRoutes routes;
  sys::Route d{.family = AF_INET, .dst = "0.0.0.0/0", .via = "10.30.0.2", .table = 7, .scope = RT_SCOPE_UNIVERSE};
  REQUIRE(routes.add_route(d));
  CHECK(command_output("ip route show table 7") == "default via 10.30.0.2 dev vA ");
  auto l = routes.routes(AF_INET, 7);
  REQUIRE(l);
  REQUIRE(l->size() == 1);
  CHECK((*l)[0].dst == "0.0.0.0/0");
  CHECK((*l)[0].via == "10.30.0.2");
  CHECK((*l)[0].dev == "vA");  // the kernel chose it; not asked for
  REQUIRE(routes.remove_route(d));

  sys::Route six{.family = AF_INET6, .dst = "fd01::/64", .dev = "vA", .via = "fd00::2", .table = 7, .metric = 1024};
  REQUIRE(routes.add_route(six));
  CHECK(command_output("ip -6 route show table 7").find("fd01::/64 via fd00::2 dev vA metric 1024") !=
        std::string::npos);
  auto l6 = routes.routes(AF_INET6, 7);
  REQUIRE(l6);
  REQUIRE(l6->size() == 1);
  CHECK((*l6)[0].dst == "fd01::/64");
  CHECK((*l6)[0].metric == 1024);
  CHECK((*l6)[0].via == "fd00::2");
  REQUIRE(routes.remove_route(six));
  CHECK(command_output("ip -6 route show table 7").empty());

  sys::Route hole{.family = AF_INET, .dst = "192.0.2.0/24", .table = 7, .type = RTN_BLACKHOLE};
  REQUIRE(routes.add_route(hole));
  CHECK(command_output("ip route show table 7") == "blackhole 192.0.2.0/24 ");
  REQUIRE(routes.remove_route(hole));

  sys::Route bad{.family = AF_INET, .dst = "10.20.0.0/24", .dev = "vA", .src = "10.99.0.1", .scope = RT_SCOPE_LINK};
  auto refused = routes.add_route(bad);
  REQUIRE_FALSE(refused);
  CAPTURE(refused.error().message);
  CHECK(refused.error().message.find("cannot add route 10.20.0.0/24 dev vA src 10.99.0.1") == 0);
  CHECK(refused.error().message.find("prefsrc") != std::string::npos);  // the kernel's extended ACK
}

TEST_CASE("sys.routes: rules list whole, go in and out exactly, and the kernel's own come back as they were") {
  ThrowawayNetns ns;
  sys::RtnlRoutes routes;
  REQUIRE(rules4() == kDefaultRules4);
  const std::string six_before = rules6();
  auto listed = routes.rules(AF_INET);
  REQUIRE(listed);
  REQUIRE(listed->size() == 3);
  const sys::Rule local = (*listed)[0];
  CHECK(local.pref == 0);
  CHECK(local.table == sys::kTableLocal);
  CHECK(local.action == 1);
  CHECK(local.protocol == RTPROT_KERNEL);
  CHECK(local.other.empty());
  CHECK(sys::rule_args(local) == "pref 0 lookup local");

  sys::Rule r100{.family = AF_INET, .pref = 100, .to = "10.10.0.2/32", .iif = "lo", .table = 100};
  REQUIRE(routes.add_rule(r100));
  CHECK(rules4().find("100:\tfrom all to 10.10.0.2 iif lo lookup 100") != std::string::npos);
  auto again = routes.add_rule(r100);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == EEXIST);
  sys::Rule moved{.family = AF_INET, .pref = 1000, .table = sys::kTableLocal};
  REQUIRE(routes.add_rule(moved));
  REQUIRE(routes.remove_rule(local));
  CHECK(command_output("ip rule show pref 0").empty());
  auto now = routes.rules(AF_INET);
  REQUIRE(now);
  CHECK(std::none_of(now->begin(), now->end(), [&](const sys::Rule& x) { return sys::same_rule(x, local); }));

  REQUIRE(routes.add_rule(local));  // back, as it was: protocol kernel
  CHECK(command_output("ip -4 -d rule show pref 0") == "0:\tfrom all lookup local proto kernel");
  REQUIRE(routes.remove_rule(moved));
  REQUIRE(routes.remove_rule(r100));
  auto gone = routes.remove_rule(r100);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == ENOENT);
  CHECK(rules4() == kDefaultRules4);
  CHECK(rules6() == six_before);
}

TEST_CASE("sys.routes: a rule delete the kernel would match to another rule first is refused") {
  ThrowawayNetns ns;
  sys::RtnlRoutes routes;
  sh("ip rule add pref 100 iif lo to 10.10.0.2/32 lookup 100");  // older: first in the kernel's list
  sys::Rule ours{.family = AF_INET, .pref = 100, .to = "10.10.0.2/32", .table = 100};
  REQUIRE(routes.add_rule(ours));
  auto refused = routes.remove_rule(ours);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == EBUSY);
  CHECK(rules4().find("iif lo lookup 100") != std::string::npos);  // theirs survived
  sh("ip rule del pref 100 iif lo to 10.10.0.2/32 lookup 100");
  REQUIRE(routes.remove_rule(ours));
  CHECK(rules4() == kDefaultRules4);
}

TEST_CASE("sys.routes: a rule with selectors rxerun cannot express lists as such and is never deleted") {
  ThrowawayNetns ns;
  sys::RtnlRoutes routes;
  sh("ip rule add pref 50 lookup main suppress_prefixlength 0");
  sh("ip rule add pref 51 fwmark 0x10/0xff lookup 7");
  auto listed = routes.rules(AF_INET);
  REQUIRE(listed);
  auto at = [&](unsigned pref) {
    auto it = std::find_if(listed->begin(), listed->end(), [&](const sys::Rule& r) { return r.pref == pref; });
    REQUIRE(it != listed->end());
    return *it;
  };
  CHECK(at(50).other == "suppress_prefixlength 0");
  CHECK(at(51).other.empty());
  CHECK(at(51).fwmark == 0x10);
  CHECK(at(51).fwmask == 0xff);
  CHECK(sys::rule_args(at(51)) == "pref 51 fwmark 0x10/0xff lookup 7");
  auto refused = routes.remove_rule(at(50));
  REQUIRE_FALSE(refused);
  CHECK(command_output("ip rule show pref 50").find("suppress_prefixlength 0") != std::string::npos);
  REQUIRE(routes.remove_rule(at(51)));
  CHECK(command_output("ip rule show pref 51").empty());
}

TEST_CASE("sys.routes: the forced wire with the route and rule steps: ping crosses the veth, cleanup restores all") {
  ThrowawayNetns ns;
  pair();
  const std::string rules_before = rules4();
  const std::string six_before = rules6();
  RealHarness run;
  auto r = run.run_keep(
      "steps:\n"
      "  - {name: looped, ping: {to: 10.10.0.2, from: vA, count: 1, interval: 100ms}, timeout: 2s, expect: fail}\n"
      "  - sysctl: {key: net.ipv4.conf.all.accept_local, value: 1}\n"
      "  - sysctl: {key: net.ipv4.conf.vA.accept_local, value: 1}\n"
      "  - sysctl: {key: net.ipv4.conf.vB.accept_local, value: 1}\n"
      "  - {name: ra, route: {dst: 10.10.0.2/32, dev: vA, src: 10.10.0.1, table: 100}}\n"
      "  - {name: rb, route: {dst: 10.10.0.1/32, dev: vB, src: 10.10.0.2, table: 101}}\n"
      "  - {name: r100, rule: {pref: 100, iif: lo, to: 10.10.0.2/32, table: 100}}\n"
      "  - {name: r101, rule: {pref: 101, iif: lo, to: 10.10.0.1/32, table: 101}}\n"
      "  - {name: l1000, rule: {pref: 1000, table: local}}\n"
      "  - {name: l0, rule: {pref: 0, table: local, action: delete}}\n"
      "  - {name: again, rule: {pref: 1000, table: local}}\n"
      "  - {name: wired, ping: {to: 10.10.0.2, from: vA, count: 2, interval: 100ms}, retries: 3, delay: 300ms}\n");
  for (const auto& s : r.steps) CAPTURE(s.name + ": " + s.message);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "looped").facts.at("received") == 0);
  CHECK(step_named(r, "wired").facts.at("received").get<int>() >= 1);
  CHECK(step_named(r, "l0").facts.at("changed") == true);
  CHECK(step_named(r, "again").facts.at("changed") == false);
  CHECK(command_output("ip rule show") ==
        "100:\tfrom all to 10.10.0.2 iif lo lookup 100\n101:\tfrom all to 10.10.0.1 iif lo lookup 101\n"
        "1000:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default");
  CHECK(command_output("ip route show table 100") == "10.10.0.2 dev vA scope link src 10.10.0.1 ");
  // It really crossed: vB received what vA sent.
  const auto stats = nlohmann::json::parse(command_output("ip -s -j link show vB"));
  CHECK(stats.at(0).at("stats64").at("rx").at("packets").get<long long>() >= 2);

  auto c = run.cleanup();
  for (const auto& u : c.undos) CAPTURE(u.summary + ": " + u.error);
  CHECK(c.clean());
  CHECK(rules4() == rules_before);
  CHECK(rules6() == six_before);
  CHECK(command_output("ip -d rule show pref 0") == "0:\tfrom all lookup local proto kernel");
  CHECK(command_output("ip route show table 100").empty());
  CHECK(command_output("ip route show table 101").empty());
  CHECK(command_output("cat /proc/sys/net/ipv4/conf/all/accept_local") == "0");
  CHECK(command_output("cat /proc/sys/net/ipv4/conf/vA/accept_local") == "0");
  CHECK(run.cleanup().undos.empty());
}
