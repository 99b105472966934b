// link: the step's logic against the model's Links.

#include <doctest/doctest.h>

#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

struct LinkHarness : fakes::Harness {
  LinkHarness() { fake.links.add_host_link("", {.name = "vB", .kind = "veth", .up = false, .mtu = 1500}); }
  sys::LinkInfo& vB() { return *fake.links.find("", "vB"); }
};

}  // namespace

TEST_CASE("link: sets state and MTU, and cleanup restores what it found") {
  LinkHarness h;
  auto r = h.run_keep("steps:\n  - {name: l, link: {dev: vB, up: true, mtu: 9000}, expect: {up: true, mtu: 9000}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "l");
  CHECK(s.facts.at("changed") == true);
  CHECK(s.facts.at("up_before") == false);
  CHECK(s.facts.at("mtu_before") == 1500);
  CHECK(s.facts.at("carrier") == true);
  CHECK(h.vB().up);
  CHECK(h.vB().mtu == 9000);
  CHECK(h.fake.kernel.commands("links") == Strings{"ip link set vB mtu 9000", "ip link set vB up"});

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "set the MTU of vB back to 1500 and bring it down again");
  CHECK_FALSE(h.vB().up);
  CHECK(h.vB().mtu == 1500);
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("link: a second apply reports nothing changed and records no undo") {
  LinkHarness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: a, link: {dev: vB, up: true}}\n"
      "  - {name: b, link: {dev: vB, up: true}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("changed") == false);
  CHECK(r.cleanup.undos.size() == 1);
  CHECK(h.fake.kernel.commands("links") == Strings{"ip link set vB up", "ip link set vB down"});
}

TEST_CASE("link: undo restores only what the step changed") {
  LinkHarness h;
  h.vB().up = true;
  auto r = h.run_keep("steps:\n  - {name: l, link: {dev: vB, up: true, mtu: 9000}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.kernel.commands("links") == Strings{"ip link set vB mtu 9000"});
  h.vB().up = false;  // somebody else brought it down meanwhile
  CHECK(h.cleanup().clean());
  CHECK(h.vB().mtu == 1500);
  CHECK_FALSE(h.vB().up);  // the state was not the step's to restore
  CHECK(h.fake.kernel.commands("links") == Strings{"ip link set vB mtu 9000", "ip link set vB mtu 1500"});
}

TEST_CASE("link: restores the value found, not a default") {
  LinkHarness h;
  h.vB().mtu = 4000;
  REQUIRE(h.run("steps:\n  - link: {dev: vB, mtu: 9000}\n").exit_code == 0);
  CHECK(h.vB().mtu == 4000);
}

TEST_CASE("link: errors name the interface, and a step with nothing to set is refused") {
  LinkHarness h;
  auto r = h.run("steps:\n  - {name: l, link: {dev: vX, up: true}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "l").message.find("no interface vX") != std::string::npos);

  auto r2 = h.run("steps:\n  - {name: l, link: {dev: vB}}\n");
  CHECK(r2.exit_code == 3);
  CHECK(step_named(r2, "l").message.find("up` and/or `mtu") != std::string::npos);
  CHECK(h.fake.kernel.commands("links").empty());
}

TEST_CASE("link: undo of an interface that is gone succeeds") {
  LinkHarness h;
  REQUIRE(h.run_keep("steps:\n  - link: {dev: vB, up: true}\n").exit_code == 0);
  REQUIRE(h.fake.links.remove({"vB"}));
  CHECK(h.cleanup().clean());
}
