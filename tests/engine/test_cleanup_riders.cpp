// Cleanup leaves out undos that a removal of the run's own takes care of:
// an address, a link state, an offload or a sysctl on a veth the run made
// goes with the veth; whatever lives in a namespace the run made goes with
// the namespace. Observed with the real step kinds on the fake system.

#include <doctest/doctest.h>

#include <algorithm>

#include "fakes/harness.h"

using namespace rxerun;

using Strings = std::vector<std::string>;

namespace {

// The sysctl writes, as `sysctl -w` takes them: KEY=VALUE.
Strings writes(fakes::FakeSystem& f) {
  Strings out;
  for (const auto& c : f.kernel.commands("sysctl")) out.push_back(c.substr(c.rfind("sysctl -w ") + 10));
  return out;
}

bool logged(const std::vector<std::string>& log, const std::string& prefix) {
  return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

const UndoReport* undo_of(const CleanupReport& c, const std::string& step) {
  for (const auto& u : c.undos)
    if (u.step == step) return &u;
  return nullptr;
}

}  // namespace

TEST_CASE("cleanup: changes on a veth the run made go with the veth, in one journal write") {
  fakes::Harness h;
  h.fake.sysctl.values["net.ipv4.conf.vA.rp_filter"] = "2";
  auto r = h.run(R"(
steps:
  - veth: {name: vA, peer: vB}
    name: pair
  - address: {dev: vA, cidr: 10.1.0.1/24}
    name: addr
  - link: {dev: vA, up: true}
    name: up
  - sysctl: {key: net.ipv4.conf.vA.rp_filter, value: 0}
    name: rpf
)");
  CHECK(r.exit_code == 0);
  CHECK(r.cleanup.clean());
  CHECK(r.cleanup.undos.size() == 4);
  // Not undone one by one: no address removal, no link down, no sysctl write back.
  CHECK_FALSE(logged(h.fake.kernel.commands("links"), "ip addr del"));
  CHECK_FALSE(logged(h.fake.kernel.commands("links"), "ip link set vA down"));
  CHECK(writes(h.fake) == std::vector<std::string>{"net.ipv4.conf.vA.rp_filter=0"});
  CHECK(h.fake.links.links[""].count("vA") == 0);
  for (const char* step : {"addr", "up", "rpf"}) {
    const UndoReport* u = undo_of(r.cleanup, step);
    REQUIRE(u);
    CHECK(u->ok);
    CHECK(u->covered_by == "delete veth pair vA/vB");
  }
  CHECK(undo_of(r.cleanup, "pair")->covered_by.empty());
  CHECK(h.journal.pending().empty());
}

TEST_CASE("cleanup: a change on an interface the run did not make is undone on its own") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .kind = "", .up = false, .mtu = 1500});
  auto r = h.run(R"(
steps:
  - veth: {name: vA, peer: vB}
  - address: {dev: eth0, cidr: 10.1.0.1/24}
    name: addr
  - link: {dev: eth0, up: true}
)");
  CHECK(r.cleanup.clean());
  CHECK(logged(h.fake.kernel.commands("links"), "ip addr del 10.1.0.1/24 dev eth0"));
  CHECK(logged(h.fake.kernel.commands("links"), "ip link set eth0 down"));
  CHECK(undo_of(r.cleanup, "addr")->covered_by.empty());
}

TEST_CASE("cleanup: what lives in a namespace the run made goes with the namespace") {
  fakes::Harness h;
  h.fake.sysctl.values["net.ipv4.ip_forward"] = "0";
  auto r = h.run(R"(
steps:
  - netns: {name: lab}
    name: ns
  - veth: {name: vA, peer: vB}
    netns: lab
    name: pair
  - address: {dev: vA, cidr: 10.1.0.1/24}
    netns: lab
    name: addr
  - sysctl: {key: net.ipv4.ip_forward, value: 1}
    netns: lab
    name: fwd
)");
  CHECK(r.exit_code == 0);
  CHECK(r.cleanup.clean());
  CHECK_FALSE(logged(h.fake.kernel.commands("links"), "ip netns exec lab ip addr del"));
  CHECK(h.fake.netns.existing.count("lab") == 0);
  for (const char* step : {"pair", "addr", "fwd"}) {
    REQUIRE(undo_of(r.cleanup, step));
    CHECK(undo_of(r.cleanup, step)->covered_by == "delete network namespace lab");
  }
}

TEST_CASE("cleanup: when the owner cannot be removed, what rides on it is undone on its own") {
  fakes::Harness h;
  h.fake.sysctl.values["net.ipv4.conf.vA.rp_filter"] = "2";
  auto kept = h.run_keep(
      "steps:\n  - veth: {name: vA, peer: vB}\n    name: pair\n"
      "  - sysctl: {key: net.ipv4.conf.vA.rp_filter, value: 0}\n    name: rpf\n");
  REQUIRE(kept.exit_code == 0);
  // Somebody re-marked the veth while the lab was kept: its undo refuses to delete it.
  h.fake.links.find("", "vA")->alias = "somebody else's";
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());
  const UndoReport* pair = undo_of(c, "pair");
  const UndoReport* rpf = undo_of(c, "rpf");
  REQUIRE(pair);
  REQUIRE(rpf);
  CHECK_FALSE(pair->ok);
  CHECK(rpf->ok);
  CHECK(rpf->covered_by.empty());
  CHECK(h.fake.sysctl.values["net.ipv4.conf.vA.rp_filter"] == "2");  // restored on its own
  CHECK(h.journal.pending().size() == 1);                            // only the veth is left
}
