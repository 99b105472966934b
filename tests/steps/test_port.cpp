// port: waiting for a port state against the fake Rdma and the virtual clock;
// the facts it reports, its timeout, and what it says when the MTU or the
// device is missing.

#include <doctest/doctest.h>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;

namespace {

struct PortHarness : fakes::Harness {
  PortHarness() {
    fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    for (const auto& [name, deps] : fake.modules.known) fake.modules.live.insert(name);
    fake.rdma.devices.push_back({.index = 1, .name = "rxe0", .netns = "", .netdev = "vA"});
  }
};

}  // namespace

TEST_CASE("port: an ACTIVE port passes at once with its state, physical state and MTUs") {
  PortHarness h;
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe0, state: ACTIVE}, expect: {active_mtu: 1024}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "p");
  CHECK(s.facts.at("state") == "ACTIVE");
  CHECK(s.facts.at("phys_state") == "LinkUp");
  CHECK(s.facts.at("active_mtu") == 1024);
  CHECK(s.facts.at("max_mtu") == 4096);
  CHECK(h.fake.clock.waits.empty());
  CHECK(r.cleanup.undos.empty());  // reads only
}

TEST_CASE("port: waits (virtual time) until the port becomes ACTIVE, ACTIVE and port 1 are the defaults") {
  PortHarness h;
  const auto active_at = h.fake.clock.now() + Duration{300};
  h.fake.rdma.state_of = [&](const sys::ModelRdma::Device&) { return h.fake.clock.now() >= active_at ? 4 : 1; };
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe0}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "p").facts.at("state") == "ACTIVE");
  CHECK(h.fake.clock.waits == std::vector<Duration>(6, Duration{50}));
}

TEST_CASE("port: follows the netdev: DOWN when it is down, and a wait for DOWN passes") {
  PortHarness h;
  h.fake.links.find("", "vA")->up = false;
  h.fake.links.find("", "vA")->carrier = false;
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe0, state: DOWN}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "p").facts.at("state") == "DOWN");
  CHECK(step_named(r, "p").facts.at("phys_state") == "Disabled");
}

TEST_CASE("port: a port that stays DOWN times out after its default 10s, with the state it had") {
  PortHarness h;
  h.fake.links.find("", "vA")->carrier = false;  // up, but the peer is down
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe0}}\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "p");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(s.message == "rxe0 port 1 is DOWN (Polling), not ACTIVE, after 10s");
  CHECK(s.facts.at("state") == "DOWN");
  CHECK_FALSE(s.hints.empty());

  PortHarness e;
  e.fake.links.find("", "vA")->carrier = false;
  auto expected = e.run("steps:\n  - {name: p, port: {dev: rxe0}, timeout: 1s, expect: timeout}\n");
  CHECK(expected.exit_code == 0);
}

TEST_CASE("port: no such device or port is an error") {
  PortHarness h;
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe7}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "p").message == "no RDMA device rxe7 (add it with an rxe step first)");
  auto q = h.run("steps:\n  - {name: p, port: {dev: rxe0, port: 2}}\n");
  CHECK(q.exit_code == 3);
  CHECK(step_named(q, "p").message == "rxe0 has no port 2");
}

TEST_CASE("port: a device that goes away during the wait fails the step") {
  PortHarness h;
  h.fake.links.find("", "vA")->carrier = false;
  h.fake.rdma.state_of = [&](const sys::ModelRdma::Device&) {
    if (h.fake.clock.now() > h.fake.clock.start() + Duration{100}) h.fake.links.links[""].erase("vA");
    return 1;
  };
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe0}}\n");
  CHECK(r.exit_code == 1);
  CHECK(step_named(r, "p").message == "RDMA device rxe0 went away while waiting for ACTIVE");
}

TEST_CASE("port: an unknown MTU leaves its facts out and says why") {
  PortHarness h;
  h.fake.kernel.fail("rdma.port_mtu", EIO, "", 1, 0, "ibv_devinfo -d rxe0 -i 1: exit 1");
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe0}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "p");
  CHECK_FALSE(s.facts.contains("active_mtu"));
  REQUIRE(s.hints.size() == 1);
  CHECK(contains(s.hints[0], "MTU unknown"));
  auto e = h.run("steps:\n  - {name: p, port: {dev: rxe0}, expect: {active_mtu: 1024}}\n");
  CHECK(e.exit_code == 1);
}

TEST_CASE("port: ABSENT waits until the device is gone with its netdev") {
  PortHarness h;
  h.fake.rdma.state_of = [&](const sys::ModelRdma::Device&) {
    if (h.fake.clock.now() > h.fake.clock.start() + Duration{200}) h.fake.links.links[""].erase("vA");
    return 4;
  };
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe0, state: ABSENT}, expect: {state: ABSENT}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "p").duration >= Duration{200});

  PortHarness stays;
  auto t = stays.run("steps:\n  - {name: p, port: {dev: rxe0, state: ABSENT}, timeout: 1s}\n");
  CHECK(step_named(t, "p").outcome == Outcome::Timeout);
  CHECK(step_named(t, "p").message == "RDMA device rxe0 still exists after 1s");
  CHECK(step_named(t, "p").facts.at("state") == "ACTIVE");
}

TEST_CASE("port: ABSENT keeps waiting while the device's attributes fail to read during removal") {
  const std::string removing = "rxe0 is being removed (state: No such device)";
  PortHarness h;
  h.fake.kernel.fail("rdma.port_state", EAGAIN, "rxe0", 1, 0, removing);
  h.fake.clock.on_wait = [&] {
    if (h.fake.clock.now() > h.fake.clock.start() + Duration{300}) h.fake.links.links[""].erase("vA");
  };
  auto r = h.run("steps:\n  - {name: p, port: {dev: rxe0, state: ABSENT}, expect: {state: ABSENT}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "p").duration >= Duration{300});

  PortHarness stuck;
  stuck.fake.kernel.fail("rdma.port_state", EAGAIN, "rxe0", 1, 0, removing);
  auto t = stuck.run("steps:\n  - {name: p, port: {dev: rxe0, state: ABSENT}, timeout: 1s}\n");
  CHECK(step_named(t, "p").outcome == Outcome::Timeout);
  CHECK(step_named(t, "p").message == "RDMA device rxe0 still exists after 1s (" + removing + ")");

  // Waiting for ACTIVE, a device that starts going away is a failure, not an error.
  PortHarness going;
  going.fake.clock.on_wait = [&] {
    if (going.fake.clock.now() > going.fake.clock.start() + Duration{100} && going.fake.kernel.faults.empty())
      going.fake.kernel.fail("rdma.port_state", EAGAIN, "rxe0", 1, 0, removing);
  };
  going.fake.rdma.state_of = [](const sys::ModelRdma::Device&) { return 1; };
  auto g = going.run("steps:\n  - {name: p, port: {dev: rxe0}, timeout: 2s}\n");
  CHECK(step_named(g, "p").outcome == Outcome::Fail);
  CHECK(step_named(g, "p").message == "RDMA device rxe0 went away while waiting for ACTIVE");
}
