// address: the step's logic against the model's Links.

#include <doctest/doctest.h>

#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

struct AddressHarness : fakes::Harness {
  AddressHarness() { fake.links.add_host_link("", {.name = "vB", .kind = "veth", .mtu = 1500}); }
  std::vector<std::string>& addrs() { return fake.links.addrs[""]["vB"]; }
};

}  // namespace

TEST_CASE("address: adds the address and cleanup removes it") {
  AddressHarness h;
  auto r = h.run_keep("steps:\n  - {name: a, address: {dev: vB, cidr: 10.10.0.2/24}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "a").facts.at("address") == "10.10.0.2/24");
  CHECK(h.addrs() == Strings{"10.10.0.2/24"});
  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "remove 10.10.0.2/24 from vB");
  CHECK(h.addrs().empty());
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("address: an address that is there already is left alone and records no undo") {
  AddressHarness h;
  h.addrs().push_back("fd00::1/64");
  auto r = h.run("steps:\n  - {name: a, address: {dev: vB, cidr: 'fd00:0:0::1/64'}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == false);
  CHECK(step_named(r, "a").facts.at("address") == "fd00::1/64");
  CHECK(r.cleanup.undos.empty());
  CHECK(h.addrs() == Strings{"fd00::1/64"});  // not rxerun's: still there
  CHECK(h.fake.kernel.commands("links").empty());
}

TEST_CASE("address: a second apply reports nothing changed, and one undo removes it") {
  AddressHarness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: a, address: {dev: vB, cidr: 10.10.0.2/24}}\n"
      "  - {name: b, address: {dev: vB, cidr: 10.10.0.2/24}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("changed") == false);
  CHECK(r.cleanup.undos.size() == 1);
  CHECK(h.addrs().empty());
}

TEST_CASE("address: the same IPv4 address with another prefix is another address") {
  AddressHarness h;
  h.addrs().push_back("10.10.0.2/16");
  auto r = h.run_keep("steps:\n  - {name: a, address: {dev: vB, cidr: 10.10.0.2/24}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(h.cleanup().clean());
  CHECK(h.addrs() == Strings{"10.10.0.2/16"});
}

TEST_CASE("address: an IPv6 address there with another prefix is an error, and nothing changes") {
  AddressHarness h;
  h.addrs().push_back("fd00::1/48");
  auto r = h.run("steps:\n  - {name: a, address: {dev: vB, cidr: fd00::1/64}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "a").message.find("fd00::1/48") != std::string::npos);
  CHECK(h.fake.kernel.commands("links").empty());
}

TEST_CASE("address: a missing interface is an error that names it") {
  AddressHarness h;
  auto r = h.run("steps:\n  - {name: a, address: {dev: vX, cidr: 10.0.0.1/24}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "a").message.find("no interface vX") != std::string::npos);
}

TEST_CASE("address: undo succeeds when the address or the interface is gone already") {
  AddressHarness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - address: {dev: vB, cidr: 10.10.0.2/24}\n"
      "  - address: {dev: vB, cidr: 10.10.0.3/24}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.links.remove_address("vB", "10.10.0.3/24"));
  CHECK(h.cleanup().clean());

  AddressHarness h2;
  REQUIRE(h2.run_keep("steps:\n  - address: {dev: vB, cidr: 10.10.0.2/24}\n").exit_code == 0);
  REQUIRE(h2.fake.links.remove({"vB"}));
  CHECK(h2.cleanup().clean());
}
