// `rxerun plan`'s world: the model (sys/model/system.h) in an open world.
// What the plan did not make may be the host's and is no refusal; what
// contradicts what the plan made is refused as the run would be.

#include <doctest/doctest.h>

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>

#include "sys/model/system.h"

using namespace rxerun;

namespace {

using Strings = std::vector<std::string>;

Strings shells(sys::ModelKernel& k) {
  Strings out;
  for (const auto& a : k.take()) out.push_back(a.shell);
  return out;
}

struct Plan : sys::ModelSystem {
  Plan() { sys::make_plan_world(*this); }
};

}  // namespace

TEST_CASE("sys.plan: an interface the plan did not make is the host's, unseen: acted on and remembered") {
  Plan p;
  auto& sys = p.system;
  CHECK_FALSE(*sys.links.get("eth0"));
  REQUIRE(sys.links.add_address("eth0", "10.9.0.1/24"));
  REQUIRE(sys.links.set_up("eth0", true));
  REQUIRE(sys.links.remove_address("eth0", "10.9.0.7/24"));  // maybe the host's: shown all the same
  CHECK(*sys.links.addresses("eth0") == Strings{"10.9.0.1/24"});
  CHECK(shells(p.kernel) ==
        Strings{"ip addr add 10.9.0.1/24 dev eth0", "ip link set eth0 up", "ip addr del 10.9.0.7/24 dev eth0"});
  CHECK(sys.links.list()->empty());

  // An rxe device over it stays: the plan cannot see the host's go.
  REQUIRE(sys.modules.load("rdma_rxe", ""));
  REQUIRE(sys.rdma.add_soft_device("rxe", "rxe0", "eth0"));
  auto table = sys.rdma.gids("rxe0", 1);
  REQUIRE(table);
  REQUIRE(table->size() == 2);
  CHECK((*table)[1].gid == "::ffff:10.9.0.1");
}

TEST_CASE("sys.plan: what contradicts the plan's own work is refused, and not shown") {
  Plan p;
  auto& sys = p.system;
  REQUIRE(sys.links.add_veth({.name = "vA", .peer = "vB"}));
  CHECK(sys.links.add_veth({.name = "vA", .peer = "vC"}).error().code == EEXIST);
  REQUIRE(sys.links.add_address("vA", "10.10.0.1/24"));
  CHECK(sys.links.add_address("vA", "10.10.0.1/24").error().code == EEXIST);
  REQUIRE(sys.modules.load("rdma_rxe", ""));
  CHECK(sys.rdma.add_soft_device("rxe", "rxe0", "vA"));
  CHECK(sys.rdma.add_soft_device("rxe", "rxe1", "vA").error().code == EEXIST);
  sys::Route route{.family = AF_INET, .dst = "10.20.0.0/24", .dev = "vA", .scope = RT_SCOPE_LINK};
  REQUIRE(sys.routes.add_route(route));
  route.dev = "vB";
  CHECK(sys.routes.add_route(route).error().code == EEXIST);
  CHECK(sys.routes.remove_route(route));  // not the plan's: maybe the host's
  CHECK(shells(p.kernel) == Strings{"ip link add vA type veth peer name vB", "ip addr add 10.10.0.1/24 dev vA",
                                    "modprobe rdma_rxe", "rdma link add rxe0 type rxe netdev vA",
                                    "ip route add 10.20.0.0/24 dev vA", "ip route del 10.20.0.0/24 dev vB"});
}

TEST_CASE("sys.plan: a namespace comes with its loopback, a veth's other end stays for its own delete") {
  Plan p;
  auto& sys = p.system;
  REQUIRE(sys.netns.create("lab"));
  CHECK(sys.netns.create("lab").error().code == EEXIST);
  REQUIRE(sys.links.add_veth({.name = "vA", .peer = "vB", .peer_netns = "lab"}));
  {
    auto scope = sys.netns.enter("lab");
    REQUIRE(scope);
    CHECK(*sys.links.get("lo"));
    REQUIRE(sys.links.remove({"vB"}));
  }
  // The kernel would take vA along; the plan keeps it for its own delete, so
  // that cleanup's preview lists the delete of every marked interface.
  CHECK(*sys.links.get("vA"));
  REQUIRE(sys.netns.remove("lab"));
  CHECK_FALSE(*sys.netns.exists("lab"));
  REQUIRE(sys.netns.remove("lab"));  // the host's, maybe: shown all the same
}
