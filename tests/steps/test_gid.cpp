// gid: finding the entry for an address (the index perftest's -x needs),
// checking an entry, waiting for the kernel to fill the table, and the
// load-time rule "index or find".

#include <doctest/doctest.h>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;

namespace {

struct GidHarness : fakes::Harness {
  GidHarness() {
    fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    fake.links.addrs[""]["vA"] = {"10.10.0.1/24"};
    for (const auto& [name, deps] : fake.modules.known) fake.modules.live.insert(name);
    fake.rdma.devices.push_back({.index = 1, .name = "rxe0", .netns = "", .netdev = "vA"});
  }
};

}  // namespace

TEST_CASE("gid: find looks an IPv4 address up as IPv4-mapped and reports its index") {
  GidHarness h;
  auto r = h.run("steps:\n  - {name: g, gid: {dev: rxe0, find: 10.10.0.1, type: RoCEv2}, expect: {index: 1}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "g");
  CHECK(s.facts.at("gid") == "::ffff:10.10.0.1");
  CHECK(s.facts.at("type") == "RoCE v2");
  CHECK(s.facts.at("netdev") == "vA");
  CHECK(r.cleanup.undos.empty());  // reads only
}

TEST_CASE("gid: the index is found, not assumed: another table order gives another index") {
  GidHarness h;
  h.fake.rdma.gid_tables["rxe0"] = {{0, "::ffff:10.10.0.1", "IB/RoCE v1", "vA"},
                                    {1, "fe80::1", "RoCE v2", "vA"},
                                    {3, "::ffff:10.10.0.1", "RoCE v2", "vA"}};
  auto r = h.run("steps:\n  - {name: g, gid: {dev: rxe0, find: 10.10.0.1, type: RoCEv2}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "g").facts.at("index") == 3);
  auto v1 = h.run("steps:\n  - {name: g, gid: {dev: rxe0, find: 10.10.0.1, type: RoCEv1}}\n");
  CHECK(step_named(v1, "g").facts.at("index") == 0);
}

TEST_CASE("gid: the index feeds a later step through {{steps.NAME.index}}") {
  GidHarness h;
  auto r = h.run(
      "steps:\n  - {name: g, gid: {dev: rxe0, find: 10.10.0.1}}\n"
      "  - {name: again, gid: {dev: rxe0, index: \"{{steps.g.index}}\", equals: 10.10.0.1}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "again").facts.at("index") == 1);
}

TEST_CASE("gid: an entry that does not hold what is expected fails, naming the table") {
  GidHarness h;
  auto r = h.run("steps:\n  - {name: g, gid: {dev: rxe0, index: 0, equals: 10.10.0.1}, timeout: 200ms}\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "g");
  CHECK(s.outcome == Outcome::Fail);
  CAPTURE(s.message);
  CHECK(contains(s.message, "rxe0 GID 0 holds fe80::1, not ::ffff:10.10.0.1"));
  CHECK(contains(s.message, "1: ::ffff:10.10.0.1 (RoCE v2, vA)"));
}

TEST_CASE("gid: waits for the kernel to fill the entry, then fails with the table it saw") {
  GidHarness h;
  h.fake.links.addrs[""]["vA"].clear();
  auto r = h.run("steps:\n  - {name: g, gid: {dev: rxe0, find: 10.10.0.9}, timeout: 1s}\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "g");
  CHECK(s.outcome == Outcome::Fail);
  CHECK(s.message == "rxe0 has no GID ::ffff:10.10.0.9; 0: fe80::1 (RoCE v2, vA)");
  CHECK(h.fake.clock.waits.size() == 20);  // polled every 50ms for its 1s

  GidHarness later;
  later.fake.links.addrs[""]["vA"].clear();
  const auto at = later.fake.clock.now() + Duration{200};
  bool added = false;
  later.fake.clock.on_wait = [&] {
    if (!added && later.fake.clock.now() >= at) {
      later.fake.links.addrs[""]["vA"] = {"10.10.0.9/24"};
      added = true;
    }
  };
  auto ok = later.run("steps:\n  - {name: g, gid: {dev: rxe0, find: 10.10.0.9}}\n");
  CHECK(ok.exit_code == 0);
}

TEST_CASE("gid: no such device is an error, index and find together, or neither, are refused at load") {
  GidHarness h;
  auto r = h.run("steps:\n  - {name: g, gid: {dev: rxe7, index: 1}}\n");
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "g").message, "no RDMA device rxe7"));
  CHECK(contains(h.diagnostics("steps:\n  - gid: {dev: rxe0, index: 1, find: 10.0.0.1}\n"), "either 'index'"));
  CHECK(contains(h.diagnostics("steps:\n  - gid: {dev: rxe0}\n"), "not neither"));
  CHECK(contains(h.diagnostics("steps:\n  - gid: {dev: rxe0, find: nowhere}\n"), "find"));
  CHECK(contains(h.diagnostics("steps:\n  - gid: {dev: rxe0, index: 1, type: RoCEv3}\n"), "RoCEv2"));
}
