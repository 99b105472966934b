// The model of rxe devices and kernel modules (sys/model/rdma.h,
// sys/model/modules.h), the stand-in of plan and tests.

#include <doctest/doctest.h>

#include <cerrno>

#include "fakes/fake_system.h"

using namespace rxerun;

TEST_CASE("sys.model.rdma: names are global, one device per netdev, and the netdev must be there") {
  fakes::FakeSystem m;
  REQUIRE(m.modules.load("rdma_rxe", ""));
  REQUIRE(m.netns.create("a"));
  REQUIRE(m.netns.create("b"));
  m.links.add_host_link("a", {.name = "vA"});
  m.links.add_host_link("b", {.name = "vA"});
  {
    auto in_a = m.netns.enter("a");
    REQUIRE(m.rdma.add_soft_device("rxe", "rxe0", "vA"));
    CHECK(m.rdma.add_soft_device("rxe", "rxe1", "vA").error().code == EEXIST);
    CHECK(m.rdma.add_soft_device("rxe", "rxe1", "vB").error().code == ENODEV);
  }
  {
    auto in_b = m.netns.enter("b");
    CHECK(m.rdma.add_soft_device("rxe", "rxe0", "vA").error().code == ENFILE);
    CHECK(m.rdma.add_soft_device("rxe", "rxe1", "vA"));  // the same name in another namespace is another netdev
  }
  // The netdev is named only where it lives.
  auto in_a = m.netns.enter("a");
  const auto seen = *m.rdma.soft_devices();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].netdev == "vA");
  CHECK(seen[0].netdev_ifindex == m.links.find("a", "vA")->ifindex);
  CHECK(seen[1].netdev.empty());
  CHECK(seen[1].parent == "vA");
  CHECK(seen[1].netdev_ifindex == 0);
}

TEST_CASE("sys.model.rdma: a device goes with its netdev, also when another interface takes the name") {
  fakes::FakeSystem m;
  REQUIRE(m.modules.load("rdma_rxe", ""));
  REQUIRE(m.links.add_veth({.name = "vA", .peer = "vB"}));
  REQUIRE(m.rdma.add_soft_device("rxe", "rxe0", "vA"));
  REQUIRE(m.rdma.add_soft_device("rxe", "rxe1", "vB"));
  REQUIRE(m.links.remove({"vA"}));  // takes vB along
  m.links.add_host_link("", {.name = "vA"});
  CHECK(m.rdma.soft_devices()->empty());
  CHECK(m.rdma.add_soft_device("rxe", "rxe0", "eth0").error().code == ENODEV);

  // Over an interface a plan does not see (the host's), a device stays: the
  // model cannot see that one go.
  sys::ModelSystem plan;
  sys::make_plan_world(plan);
  REQUIRE(plan.modules.load("rdma_rxe", ""));
  REQUIRE(plan.rdma.add_soft_device("rxe", "rxe0", "eth0"));
  CHECK(plan.rdma.soft_devices()->size() == 1);
  CHECK(plan.rdma.devices[0].netdev_outside);
}

TEST_CASE("sys.model.rdma: the GID table lists the link-local entry, then one RoCE v2 entry per IPv4 address") {
  fakes::FakeSystem m;
  REQUIRE(m.modules.load("rdma_rxe", ""));
  m.links.add_host_link("", {.name = "vA"});
  REQUIRE(m.links.add_address("vA", "10.10.0.1/24"));
  REQUIRE(m.links.add_address("vA", "fd00::1/64"));
  REQUIRE(m.rdma.add_soft_device("rxe", "rxe0", "vA"));
  auto table = m.rdma.gids("rxe0", 1);
  REQUIRE(table);
  REQUIRE(table->size() == 2);
  CHECK((*table)[0].gid == "fe80::1");
  CHECK((*table)[1].gid == "::ffff:10.10.0.1");
  CHECK((*table)[1].index == 1);
  CHECK(m.rdma.gids("rxe0", 2).error().code == ENOENT);
  CHECK(m.rdma.gids("rxe9", 1).error().code == ENODEV);
}

TEST_CASE("sys.model.rdma: a module in use stays, and unloading rdma_rxe deletes every rxe device") {
  fakes::FakeSystem m;
  m.links.add_host_link("", {.name = "vA"});
  CHECK(m.rdma.add_soft_device("rxe", "rxe0", "vA").error().code == EINVAL);  // no rdma_rxe yet
  REQUIRE(m.modules.load("rdma_rxe", ""));
  CHECK(m.modules.live == std::set<std::string>{"ib_core", "ib_uverbs", "rdma_rxe"});
  REQUIRE(m.rdma.add_soft_device("rxe", "rxe0", "vA"));

  CHECK(m.modules.unload("ib_core").error().code == EBUSY);
  REQUIRE(m.modules.unload("rdma_rxe"));
  CHECK(m.rdma.devices.empty());
  CHECK(m.modules.unload("rdma_rxe").error().code == ENOENT);
  CHECK(m.modules.unload("ib_uverbs"));
  CHECK(m.modules.unload("ib_core"));
  CHECK(m.modules.to_load("nosuch").error().code == ENOENT);
  CHECK(m.kernel.commands("modules") == std::vector<std::string>{"modprobe rdma_rxe", "modprobe -r rdma_rxe",
                                                                 "modprobe -r ib_uverbs", "modprobe -r ib_core"});
}
