// The shared model of interfaces and namespaces (sys/model/links.h,
// sys/model/netns.h), which `rxerun plan` and the tests' fakes both keep
// their state in: what goes with an interface or a namespace, carrier, and
// when an address counts as present.

#include <doctest/doctest.h>

#include <cerrno>

#include "sys/model/links.h"
#include "sys/model/netns.h"

using namespace rxerun;

namespace {

using Strings = std::vector<std::string>;

sys::VethSpec veth(const std::string& peer_netns = "") {
  return {.name = "vA", .peer = "vB", .peer_netns = peer_netns};
}

}  // namespace

TEST_CASE("sys.model.links: deleting a veth end deletes the other end, and both ends' addresses") {
  sys::LinksModel m;
  REQUIRE(m.add_veth_pair("", veth("b")));
  REQUIRE(m.add_address_to("", "vA", "10.10.0.1/24"));
  REQUIRE(m.add_address_to("b", "vB", "10.10.0.2/24"));

  m.delete_link("", "vA");
  CHECK_FALSE(m.find("", "vA"));
  CHECK_FALSE(m.find("b", "vB"));
  CHECK(m.peers.empty());
  CHECK(m.addresses_of("b", "vB").error().code == ENODEV);
  // Made again, it has no address left over from before.
  REQUIRE(m.add_veth_pair("", veth("b")));
  CHECK(*m.addresses_of("", "vA") == Strings{});
}

TEST_CASE("sys.model.links: a veth has carrier while both ends are up, another interface while it is up") {
  sys::LinksModel m;
  REQUIRE(m.add_veth_pair("", veth()));
  REQUIRE(m.set_link_up("", "vA", true));
  CHECK_FALSE(m.find("", "vA")->carrier);  // the other end is down
  REQUIRE(m.set_link_up("", "vB", true));
  CHECK(m.find("", "vA")->carrier);
  CHECK(m.find("", "vB")->carrier);
  REQUIRE(m.set_link_up("", "vB", false));
  CHECK_FALSE(m.find("", "vA")->carrier);
  CHECK(m.find("", "vA")->up);

  m.add_host_link("", {.name = "eth0"});
  REQUIRE(m.set_link_up("", "eth0", true));
  CHECK(m.find("", "eth0")->carrier);
  CHECK(m.set_link_up("", "nope", true).error().code == ENODEV);
}

TEST_CASE("sys.model.links: an IPv4 address is known by address and prefix, an IPv6 one by its address alone") {
  sys::LinksModel m;
  m.add_host_link("", {.name = "eth0"});
  REQUIRE(m.add_address_to("", "eth0", "10.10.0.1/24"));
  CHECK(m.add_address_to("", "eth0", "10.10.0.1/24").error().code == EEXIST);
  CHECK(m.add_address_to("", "eth0", "10.10.0.1/16"));  // another prefix: another address
  REQUIRE(m.add_address_to("", "eth0", "fd00::1/64"));
  CHECK(m.add_address_to("", "eth0", "fd00::1/128").error().code == EEXIST);
  CHECK(m.add_address_to("", "eth0", "fd00:0::1/64").error().code == EEXIST);  // canonically the same

  // A delete names the prefix too.
  CHECK(m.remove_address_from("", "eth0", "fd00::1/128").error().code == EADDRNOTAVAIL);
  CHECK(m.remove_address_from("", "eth0", "10.10.0.1/16"));
  CHECK(*m.addresses_of("", "eth0") == Strings{"10.10.0.1/24", "fd00::1/64"});
  CHECK(m.add_address_to("", "vX", "10.10.0.1/24").error().code == ENODEV);
}

TEST_CASE("sys.model.links: an index is never handed out twice, and an address add checks it") {
  sys::LinksModel m;
  REQUIRE(m.add_veth_pair("", veth()));
  int first = 0;
  REQUIRE(m.addresses_of("", "vA", &first));
  m.delete_link("", "vA");
  REQUIRE(m.add_veth_pair("", veth()));
  int second = 0;
  REQUIRE(m.addresses_of("", "vA", &second));
  CHECK(first != 0);
  CHECK(second != first);
  CHECK(m.add_address_to("", "vA", "10.10.0.1/24", first).error().code == EINVAL);
  CHECK(m.add_address_to("", "vA", "10.10.0.1/24", second));
}

TEST_CASE("sys.model.netns: a new namespace has its loopback, a deleted one takes its interfaces and their peers") {
  sys::LinksModel links;
  sys::NetnsModel m(&links);
  REQUIRE(m.add_netns("lab"));
  CHECK(m.add_netns("lab").error().code == EEXIST);
  const auto* lo = links.find("lab", "lo");
  REQUIRE(lo);
  CHECK(lo->up);
  CHECK(lo->ifindex == 1);

  // vA in rxerun's namespace, its peer vB in lab.
  REQUIRE(links.add_veth_pair("", veth("lab")));
  REQUIRE(m.delete_netns("lab"));
  CHECK(links.links_in("lab").empty());
  CHECK_FALSE(links.find("", "vA"));
  CHECK(m.delete_netns("lab").error().code == ENOENT);
}
