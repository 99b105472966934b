// Identity, not names: every kind's undo acts only on the object the run
// changed. An interface deleted and made again under its name between a
// --keep run and cleanup (a namespace likewise) is a namesake: left alone
// with its addresses, state, alias and settings, reported as residue with
// what was recorded and what is there now, and left alone again by a second
// cleanup. Observed with the real kinds on the fake system.

#include <doctest/doctest.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

const std::string kMark = "rxerun:test";

const UndoReport* undo_of(const CleanupReport& c, const std::string& step) {
  for (const auto& u : c.undos)
    if (u.step == step) return &u;
  return nullptr;
}

int failed(const CleanupReport& c) {
  return static_cast<int>(std::count_if(c.undos.begin(), c.undos.end(), [](const UndoReport& u) { return !u.ok; }));
}

// Every change made to the model, to see that a cleanup changed nothing.
Strings changes(fakes::FakeSystem& f) {
  return f.kernel.changes();
}

// As `ip link del NAME; ip link add NAME ...; ip addr add ...; ip link set
// NAME up alias ALIAS` by somebody else: an interface under the old name
// with a new index, its own address, state and alias.
void replace_link(fakes::FakeSystem& f, const std::string& netns, const std::string& name, const std::string& alias,
                  const std::string& cidr = "192.0.2.9/24") {
  f.links.delete_link(netns, name);
  f.links.add_host_link(netns,
                        {.name = name, .kind = "veth", .alias = alias, .up = true, .carrier = true, .mtu = 1400});
  f.links.addrs[netns][name] = {cidr};
}

// The foreign interface is as its maker left it.
void untouched(fakes::FakeSystem& f, const std::string& netns, const std::string& name, const std::string& alias,
               const std::string& cidr = "192.0.2.9/24") {
  const auto* l = f.links.find(netns, name);
  REQUIRE(l);
  CHECK(l->alias == alias);
  CHECK(l->up);
  CHECK(l->mtu == 1400);
  CHECK(f.links.addrs[netns][name] == Strings{cidr});
}

// The second cleanup finds the same and changes nothing either.
void second_cleanup_changes_nothing(fakes::Harness& h, int expected_failures) {
  const Strings before = changes(h.fake);
  auto again = h.cleanup();
  CHECK(failed(again) == expected_failures);
  CHECK(changes(h.fake) == before);
}

}  // namespace

TEST_CASE("identity: a veth replaced by a namesake is left alone with its address, state and alias") {
  for (const std::string& alias : Strings{"somebody's", kMark}) {  // also one that copied rxerun's mark
    CAPTURE(alias);
    fakes::Harness h;
    auto r = h.run_keep("steps:\n  - {name: pair, veth: {name: vB, peer: vA}}\n");
    REQUIRE(r.exit_code == 0);
    const int ours = h.fake.links.find("", "vB")->ifindex;
    replace_link(h.fake, "", "vB", alias);
    const int theirs = h.fake.links.find("", "vB")->ifindex;
    h.fake.kernel.actions.clear();

    auto c = h.cleanup();
    CHECK_FALSE(c.clean());
    REQUIRE(c.undos.size() == 1);
    const std::string& e = c.undos[0].error;
    CAPTURE(e);
    CHECK(contains(e, "vB is another interface than the one this run changed"));
    CHECK(contains(e, "the journal recorded index " + std::to_string(ours) + " in netns inode 4026531840"));
    CHECK(contains(e, "vB now has index " + std::to_string(theirs) + " in netns inode 4026531840"));
    CHECK(contains(e, "left alone"));
    untouched(h.fake, "", "vB", alias);
    CHECK(h.fake.kernel.commands("links").empty());
    CHECK(h.journal.pending().size() == 1);  // residue: it stays for the next cleanup
    second_cleanup_changes_nothing(h, 1);
  }
}

TEST_CASE("identity: the journal holds both ends of a veth, from the run and from an adopting step") {
  fakes::Harness h;
  h.fake.netns.existing.insert("lab");
  auto r = h.run_keep(
      "steps:\n"
      "  - {name: a, veth: {name: vB, peer: vA, peer_netns: lab}}\n"
      "  - {name: b, veth: {name: vB, peer: vA, peer_netns: lab}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "b").facts.at("changed") == false);  // adopted
  REQUIRE(h.journal.pending().size() == 2);
  const nlohmann::json expected = {{"ifindex", h.fake.links.find("", "vB")->ifindex},
                                   {"netns_inode", *h.fake.netns.inode("")},
                                   {"peer_ifindex", h.fake.links.find("lab", "vA")->ifindex},
                                   {"peer_netns_inode", *h.fake.netns.inode("lab")}};
  for (const auto& e : h.journal.pending()) CHECK(e.identity == expected);

  replace_link(h.fake, "", "vB", kMark);
  auto c = h.cleanup();
  CHECK(failed(c) == 2);  // neither entry deletes the namesake
  for (const auto& u : c.undos) CHECK(contains(u.error, "vB is another interface"));
  untouched(h.fake, "", "vB", kMark);
}

TEST_CASE("identity: a batch of veths deletes the run's own and leaves the namesake among them") {
  fakes::Harness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - {name: p0, veth: {name: b0, peer: a0}}\n"
      "  - {name: p1, veth: {name: b1, peer: a1}}\n"
      "  - {name: p2, veth: {name: b2, peer: a2}}\n");
  REQUIRE(r.exit_code == 0);
  replace_link(h.fake, "", "b1", kMark);
  auto c = h.cleanup();
  CHECK(failed(c) == 1);
  REQUIRE(undo_of(c, "p1"));
  CHECK(contains(undo_of(c, "p1")->error, "b1 is another interface than the one this run changed"));
  CHECK(h.fake.links.find("", "b0") == nullptr);
  CHECK(h.fake.links.find("", "b2") == nullptr);
  untouched(h.fake, "", "b1", kMark);
  second_cleanup_changes_nothing(h, 1);
}

TEST_CASE("identity: what rode on a replaced veth is undone one by one and leaves the namesake alone") {
  fakes::Harness h;
  h.fake.sysctl.values["net.ipv4.conf.vA.rp_filter"] = "2";
  auto r = h.run_keep(R"(
steps:
  - {name: pair, veth: {name: vA, peer: vB}}
  - {name: addr, address: {dev: vA, cidr: 10.1.0.1/24}}
  - {name: up, link: {dev: vA, up: true, mtu: 9000}}
  - {name: rpf, sysctl: {key: net.ipv4.conf.vA.rp_filter, value: 0}}
  - {name: lossy, netem: {dev: vA, loss: 5%}}
)");
  REQUIRE(r.exit_code == 0);
  // Somebody deletes the pair and makes a namesake, with the run's address
  // even, and sets its rp_filter; the run's netem went with the old vA.
  replace_link(h.fake, "", "vA", "somebody's", "10.1.0.1/24");
  h.fake.sysctl.values["net.ipv4.conf.vA.rp_filter"] = "0";
  h.fake.qdiscs.root["vA"] = "netem";  // theirs now
  const Strings before = changes(h.fake);

  auto c = h.cleanup();
  CHECK(c.undos.size() == 5);
  CHECK(failed(c) == 5);  // every entry reported, none covered by the veth's
  for (const char* step : {"pair", "addr", "up", "rpf", "lossy"}) {
    const UndoReport* u = undo_of(c, step);
    REQUIRE(u);
    CAPTURE(step);
    CHECK(u->covered_by.empty());
    CHECK(contains(u->error, "vA is another interface than the one this run changed"));
  }
  untouched(h.fake, "", "vA", "somebody's", "10.1.0.1/24");
  CHECK(h.fake.sysctl.values["net.ipv4.conf.vA.rp_filter"] == "0");
  CHECK(h.fake.qdiscs.root["vA"] == "netem");
  CHECK(changes(h.fake) == before);
  CHECK(h.journal.pending().size() == 5);
  second_cleanup_changes_nothing(h, 5);
}

TEST_CASE("identity: changes on a host interface made again under its name are left alone") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .up = false, .mtu = 1500});
  h.fake.sysctl.values["net.ipv6.conf.eth0.disable_ipv6"] = "1";
  h.fake.ethtool.devs["eth0"] = {{"rx-gro", {.active = true}}};
  auto r = h.run_keep(R"(
steps:
  - {name: addr, address: {dev: eth0, cidr: 10.1.0.1/24}}
  - {name: up, link: {dev: eth0, up: true, mtu: 9000}}
  - {name: v6, sysctl: {key: net.ipv6.conf.eth0.disable_ipv6, value: 0}}
  - {name: gro, offload: {dev: eth0, gro: off}}
  - {name: lossy, netem: {dev: eth0, delay: 10ms}}
  - {name: rt, route: {dst: 10.2.0.0/24, dev: eth0, table: 100}}
)");
  REQUIRE(r.exit_code == 0);
  replace_link(h.fake, "", "eth0", "", "10.1.0.1/24");
  const Strings before = changes(h.fake);
  auto c = h.cleanup();
  CHECK(c.undos.size() == 6);
  CHECK(failed(c) == 6);
  for (const auto& u : c.undos) {
    CAPTURE(u.step);
    CHECK(contains(u.error, "eth0 is another interface than the one this run changed"));
  }
  untouched(h.fake, "", "eth0", "", "10.1.0.1/24");
  CHECK(h.fake.sysctl.values["net.ipv6.conf.eth0.disable_ipv6"] == "0");
  CHECK(h.fake.ethtool.devs["eth0"]["rx-gro"].active == false);
  CHECK(h.fake.qdiscs.root["eth0"] == "netem");
  CHECK(h.fake.routes.table.size() == 1);
  CHECK(changes(h.fake) == before);
  second_cleanup_changes_nothing(h, 6);

  // Once the namesake is gone, so is what the run changed: the next cleanup is clean.
  h.fake.links.links[""].erase("eth0");
  auto last = h.cleanup();
  CHECK(last.clean());
  CHECK(h.journal.pending().empty());
}

TEST_CASE("identity: the same interface, still the run's, is restored as before") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .up = false, .mtu = 1500});
  auto r = h.run_keep(R"(
steps:
  - {name: addr, address: {dev: eth0, cidr: 10.1.0.1/24}}
  - {name: up, link: {dev: eth0, up: true, mtu: 9000}}
)");
  REQUIRE(r.exit_code == 0);
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.fake.links.find("", "eth0")->mtu == 1500);
  CHECK_FALSE(h.fake.links.find("", "eth0")->up);
  CHECK(h.fake.links.addrs[""]["eth0"].empty());
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("identity: a namespace deleted and made again under its name is left alone, marked or not") {
  for (const std::string& lo_alias : Strings{"", kMark}) {
    CAPTURE(lo_alias);
    fakes::Harness h;
    h.fake.sysctl.values["net.ipv4.ip_forward"] = "0";
    auto r = h.run_keep(R"(
steps:
  - {name: ns, netns: {name: lab}}
  - {name: pair, veth: {name: vA, peer: vB}, netns: lab}
  - {name: addr, address: {dev: vA, cidr: 10.1.0.1/24}, netns: lab}
  - {name: fwd, sysctl: {key: net.ipv4.ip_forward, value: 1}, netns: lab}
  - {name: drop, block: {proto: udp, port: 4791}, netns: lab}
  - {name: r100, rule: {pref: 100, table: 100}, netns: lab}
)");
    REQUIRE(r.exit_code == 0);
    const std::uint64_t ours = *h.fake.netns.inode("lab");
    h.fake.netns.recreate("lab");
    h.fake.links.find("lab", "lo")->alias = lo_alias;
    h.fake.links.add_host_link("lab", {.name = "vA", .kind = "veth", .alias = "theirs", .up = true, .mtu = 1400});
    h.fake.links.addrs["lab"]["vA"] = {"192.0.2.9/24"};
    const std::uint64_t theirs = *h.fake.netns.inode("lab");
    const Strings before = changes(h.fake);

    auto c = h.cleanup();
    CHECK(c.undos.size() == 6);
    const UndoReport* ns = undo_of(c, "ns");
    REQUIRE(ns);
    CAPTURE(ns->error);
    CHECK(contains(ns->error,
                   "network namespace lab is another one than the one this run made: the journal recorded "
                   "inode " +
                       std::to_string(ours) + ", /run/netns/lab is now inode " + std::to_string(theirs)));
    // What the run made in it went with the old namespace; what it changed
    // of the namespace itself is not done to the new one.
    for (const char* step : {"pair", "addr", "fwd", "drop", "r100"}) {
      CAPTURE(step);
      REQUIRE(undo_of(c, step));
    }
    CHECK(contains(undo_of(c, "addr")->error, "vA is another interface than the one this run changed"));
    for (const char* step : {"fwd", "drop", "r100"})
      CHECK(contains(undo_of(c, step)->error, "network namespace lab is another one than the one this run changed"));
    CHECK(h.fake.netns.existing.count("lab") == 1);
    CHECK(h.fake.links.find("lab", "vA")->alias == "theirs");
    CHECK(h.fake.links.addrs["lab"]["vA"] == Strings{"192.0.2.9/24"});
    CHECK(changes(h.fake) == before);
  }
}

TEST_CASE("identity: an rxe device made again under its name, over a namesake of its netdev, is left alone") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  for (const auto& [name, deps] : h.fake.modules.known) h.fake.modules.live.insert(name);
  auto r = h.run_keep("steps:\n  - {name: dev, rxe: {name: rxe0, netdev: vA}}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.journal.pending().size() == 1);
  const auto& id = h.journal.pending()[0].identity;
  CHECK(id.at("index") == h.fake.rdma.find("rxe0")->index);
  CHECK(id.at("netdev_ifindex") == h.fake.links.find("", "vA")->ifindex);

  // Somebody deletes vA (rxe0 goes with it), makes vA again and rxe0 over it.
  h.fake.rdma.devices.clear();
  replace_link(h.fake, "", "vA", "");
  REQUIRE(h.fake.rdma.add_soft_device("rxe", "rxe0", "vA"));
  h.fake.kernel.actions.clear();
  auto c = h.cleanup();
  REQUIRE(c.undos.size() == 1);
  CAPTURE(c.undos[0].error);
  CHECK(contains(c.undos[0].error, "rxe device rxe0 is another one than the one this run added"));
  CHECK(contains(c.undos[0].error, "the journal recorded RDMA device index 1 over netdev index"));
  CHECK(contains(c.undos[0].error, "rxe0 is now RDMA device index 2"));
  CHECK(h.fake.rdma.find("rxe0") != nullptr);
  CHECK(h.fake.kernel.commands("rdma").empty());
  second_cleanup_changes_nothing(h, 1);
}

TEST_CASE("identity: the run's own rxe device is deleted by its recorded index") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  for (const auto& [name, deps] : h.fake.modules.known) h.fake.modules.live.insert(name);
  auto r = h.run("steps:\n  - {name: dev, rxe: {name: rxe0, netdev: vA}}\n");
  CHECK(r.exit_code == 0);
  CHECK(r.cleanup.clean());
  CHECK(h.fake.rdma.devices.empty());
}

TEST_CASE("identity: a route on an interface made again under its name stays, with the namesake") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .up = true, .mtu = 1500});
  auto r = h.run_keep("steps:\n  - {name: rt, route: {dst: 10.2.0.0/24, dev: eth0, table: 100}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(h.journal.pending()[0].args.at("identity").at("ifindex") == h.fake.links.find("", "eth0")->ifindex);
  replace_link(h.fake, "", "eth0", "");
  auto c = h.cleanup();
  CHECK(failed(c) == 1);
  CHECK(contains(c.undos[0].error, "eth0 is another interface"));
  CHECK(h.fake.routes.table.size() == 1);
}

TEST_CASE("identity: a change recorded before identities were (an older journal) acts by name, as before") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .up = true, .mtu = 9000});
  h.fake.links.addrs[""]["eth0"] = {"10.1.0.1/24"};
  REQUIRE(h.journal.append(
      {0, "addr", "address", "", "remove 10.1.0.1/24 from eth0", {{"dev", "eth0"}, {"cidr", "10.1.0.1/24"}}}));
  REQUIRE(
      h.journal.append({0, "mtu", "link", "", "set the MTU of eth0 back to 1500", {{"dev", "eth0"}, {"mtu", 1500}}}));
  REQUIRE(h.journal.append(
      {0, "pair", "veth", "", "delete veth pair vB/vA", {{"name", "vB"}, {"peer", "vA"}, {"peer_netns", ""}}}));
  h.fake.links.add_host_link("", {.name = "vB", .kind = "veth", .alias = kMark, .mtu = 1500});
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.fake.links.addrs[""]["eth0"].empty());
  CHECK(h.fake.links.find("", "eth0")->mtu == 1500);
  CHECK(h.fake.links.find("", "vB") == nullptr);
}
