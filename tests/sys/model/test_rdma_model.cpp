// The shared model of rxe devices and RDMA modules (sys/model/rdma.h), which
// `rxerun plan` and the tests' FakeRdma both keep their state in.

#include <doctest/doctest.h>

#include <cerrno>

#include "sys/model/links.h"
#include "sys/model/rdma.h"

using namespace rxerun;

TEST_CASE("sys.model.rdma: names are global, one device per netdev, and the netdev must be there") {
  sys::LinksModel links;
  links.add_host_link("a", {.name = "vA"});
  links.add_host_link("b", {.name = "vA"});
  sys::RdmaModel m;
  REQUIRE(m.create_device("rxe", "rxe0", "a", "vA", links));
  CHECK(m.create_device("rxe", "rxe0", "b", "vA", links).error().code == ENFILE);
  CHECK(m.create_device("rxe", "rxe1", "a", "vA", links).error().code == EEXIST);
  CHECK(m.create_device("rxe", "rxe1", "a", "vB", links).error().code == ENODEV);
  CHECK(m.create_device("rxe", "rxe1", "b", "vA", links));  // the same name in another namespace is another netdev

  // The netdev is named only where it lives.
  const auto seen = m.seen_from("a", links);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].netdev == "vA");
  CHECK(seen[0].netdev_ifindex == links.find("a", "vA")->ifindex);
  CHECK(seen[1].netdev.empty());
  CHECK(seen[1].parent == "vA");
  CHECK(seen[1].netdev_ifindex == 0);
}

TEST_CASE("sys.model.rdma: a device goes with its netdev, also when another interface takes the name") {
  sys::LinksModel links;
  REQUIRE(links.add_veth_pair("", {.name = "vA", .peer = "vB"}));
  sys::RdmaModel m;
  REQUIRE(m.create_device("rxe", "rxe0", "", "vA", links));
  REQUIRE(m.create_device("rxe", "rxe1", "", "vB", links));

  links.delete_link("", "vA");  // takes vB along
  links.add_host_link("", {.name = "vA"});
  m.prune(links);
  CHECK(m.devices.empty());

  // Over an interface the links model may not see (the host's, in a plan),
  // a device stays: the model cannot see that one go.
  CHECK(m.create_device("rxe", "rxe0", "", "eth0", links).error().code == ENODEV);
  links.unseen_host_links = true;
  REQUIRE(m.create_device("rxe", "rxe0", "", "eth0", links));
  m.prune(links);
  CHECK(m.devices.size() == 1);
  CHECK(m.devices[0].netdev_outside);
}

TEST_CASE("sys.model.rdma: the GID table lists the link-local entry, then one RoCE v2 entry per IPv4 address") {
  sys::LinksModel links;
  links.add_host_link("", {.name = "vA"});
  REQUIRE(links.add_address_to("", "vA", "10.10.0.1/24"));
  REQUIRE(links.add_address_to("", "vA", "fd00::1/64"));
  sys::RdmaModel m;
  REQUIRE(m.create_device("rxe", "rxe0", "", "vA", links));
  auto table = m.gid_table("rxe0", 1, links);
  REQUIRE(table);
  REQUIRE(table->size() == 2);
  CHECK((*table)[0].gid == "fe80::1");
  CHECK((*table)[1].gid == "::ffff:10.10.0.1");
  CHECK((*table)[1].index == 1);
  CHECK(m.gid_table("rxe0", 2, links).error().code == ENOENT);
  CHECK(m.gid_table("rxe9", 1, links).error().code == ENODEV);
}

TEST_CASE("sys.model.rdma: a module in use stays, and unloading rdma_rxe deletes every rxe device") {
  sys::LinksModel links;
  links.add_host_link("", {.name = "vA"});
  sys::RdmaModel m;
  m.modules = {{"rdma_rxe", {"ib_core"}}, {"ib_core", {}}};
  m.load("rdma_rxe");
  CHECK(m.loaded == std::set<std::string>{"ib_core", "rdma_rxe"});
  REQUIRE(m.create_device("rxe", "rxe0", "", "vA", links));

  CHECK(m.unload("ib_core").error().code == EBUSY);
  REQUIRE(m.unload("rdma_rxe"));
  CHECK(m.devices.empty());
  CHECK(m.unload("rdma_rxe").error().code == ENOENT);
  CHECK(m.unload("ib_core"));
}
