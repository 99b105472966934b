// The model of interfaces and namespaces (sys/model/links.h,
// sys/model/netns.h), the stand-in of plan and tests: what goes with an
// interface or a namespace, carrier, and when an address counts as present.

#include <doctest/doctest.h>

#include <cerrno>

#include "sys/model/system.h"

using namespace rxerun;

namespace {

using Strings = std::vector<std::string>;

sys::VethSpec veth(const std::string& peer_netns = "") {
  return {.name = "vA", .peer = "vB", .peer_netns = peer_netns};
}

// The addresses of `dev` in `netns`, read from there.
Result<std::vector<std::string>> addresses_in(sys::ModelSystem& m, const std::string& netns, const std::string& dev) {
  auto scope = m.netns.enter(netns);
  REQUIRE(scope);
  return m.links.addresses(dev);
}

}  // namespace

TEST_CASE("sys.model.links: deleting a veth end deletes the other end, and both ends' addresses") {
  sys::ModelSystem m;
  REQUIRE(m.netns.create("b"));
  REQUIRE(m.links.add_veth(veth("b")));
  REQUIRE(m.links.add_address("vA", "10.10.0.1/24"));
  {
    auto scope = m.netns.enter("b");
    REQUIRE(m.links.add_address("vB", "10.10.0.2/24"));
  }
  REQUIRE(m.links.remove({"vA"}));
  CHECK_FALSE(m.links.find("", "vA"));
  CHECK_FALSE(m.links.find("b", "vB"));
  CHECK(m.links.peers.empty());
  CHECK(addresses_in(m, "b", "vB").error().code == ENODEV);
  // Made again, it has no address left over from before.
  REQUIRE(m.links.add_veth(veth("b")));
  CHECK(*m.links.addresses("vA") == Strings{});
  CHECK(m.kernel.commands("links") == Strings{"ip link add vA type veth peer name vB netns b",
                                              "ip addr add 10.10.0.1/24 dev vA",
                                              "ip netns exec b ip addr add 10.10.0.2/24 dev vB", "ip link del vA",
                                              "ip link add vA type veth peer name vB netns b"});
}

TEST_CASE("sys.model.links: a veth's peer namespace must exist, and its names must be free") {
  sys::ModelSystem m;
  auto absent = m.links.add_veth(veth("nowhere"));
  REQUIRE_FALSE(absent);
  CHECK(absent.error().code == ENOENT);
  CHECK(m.links.links_in("nowhere").empty());
  REQUIRE(m.links.add_veth(veth()));
  CHECK(m.links.add_veth({.name = "vC", .peer = "vA"}).error().code == EEXIST);
  CHECK(m.kernel.commands("links").size() == 1);
}

TEST_CASE("sys.model.links: a veth has carrier while both ends are up, another interface while it is up") {
  sys::ModelSystem m;
  REQUIRE(m.links.add_veth(veth()));
  REQUIRE(m.links.set_up("vA", true));
  CHECK_FALSE(m.links.find("", "vA")->carrier);  // the other end is down
  REQUIRE(m.links.set_up("vB", true));
  CHECK(m.links.find("", "vA")->carrier);
  CHECK(m.links.find("", "vB")->carrier);
  REQUIRE(m.links.set_up("vB", false));
  CHECK_FALSE(m.links.find("", "vA")->carrier);
  CHECK(m.links.find("", "vA")->up);

  m.links.add_host_link("", {.name = "eth0"});
  REQUIRE(m.links.set_up("eth0", true));
  CHECK(m.links.find("", "eth0")->carrier);
  CHECK(m.links.set_up("nope", true).error().code == ENODEV);
}

TEST_CASE("sys.model.links: an IPv4 address is known by address and prefix, an IPv6 one by its address alone") {
  sys::ModelSystem m;
  m.links.add_host_link("", {.name = "eth0"});
  REQUIRE(m.links.add_address("eth0", "10.10.0.1/24"));
  CHECK(m.links.add_address("eth0", "10.10.0.1/24").error().code == EEXIST);
  CHECK(m.links.add_address("eth0", "10.10.0.1/16"));  // another prefix: another address
  REQUIRE(m.links.add_address("eth0", "fd00::1/64"));
  CHECK(m.links.add_address("eth0", "fd00::1/128").error().code == EEXIST);
  CHECK(m.links.add_address("eth0", "fd00:0::1/64").error().code == EEXIST);  // canonically the same

  // A delete names the prefix too.
  CHECK(m.links.remove_address("eth0", "fd00::1/128").error().code == EADDRNOTAVAIL);
  CHECK(m.links.remove_address("eth0", "10.10.0.1/16"));
  CHECK(*m.links.addresses("eth0") == Strings{"10.10.0.1/24", "fd00::1/64"});
  CHECK(m.links.add_address("vX", "10.10.0.1/24").error().code == ENODEV);
}

TEST_CASE("sys.model.links: an index is never handed out twice, and an address add checks it") {
  sys::ModelSystem m;
  REQUIRE(m.links.add_veth(veth()));
  int first = 0;
  REQUIRE(m.links.addresses("vA", &first));
  REQUIRE(m.links.remove({"vA"}));
  REQUIRE(m.links.add_veth(veth()));
  int second = 0;
  REQUIRE(m.links.addresses("vA", &second));
  CHECK(first != 0);
  CHECK(second != first);
  CHECK(m.links.add_address("vA", "10.10.0.1/24", first).error().code == EINVAL);
  CHECK(m.links.add_address("vA", "10.10.0.1/24", second));
}

TEST_CASE("sys.model.netns: a new namespace has its loopback, a deleted one takes its interfaces and their peers") {
  sys::ModelSystem m;
  REQUIRE(m.netns.create("lab"));
  CHECK(m.netns.create("lab").error().code == EEXIST);
  const auto* lo = m.links.find("lab", "lo");
  REQUIRE(lo);
  CHECK(lo->up);
  CHECK(lo->ifindex == 1);

  // vA in rxerun's namespace, its peer vB in lab.
  REQUIRE(m.links.add_veth(veth("lab")));
  const auto inode = *m.netns.inode("lab");
  REQUIRE(m.netns.remove("lab"));
  CHECK(m.links.links_in("lab").empty());
  CHECK_FALSE(m.links.find("", "vA"));
  CHECK(m.netns.remove("lab").error().code == ENOENT);
  CHECK(m.netns.enter("lab").error().code == ENOENT);
  // Made again under its name, it is another namespace.
  REQUIRE(m.netns.create("lab"));
  CHECK(*m.netns.inode("lab") != inode);
}
