// counters: values, deltas since an earlier counters step and across a
// window, of rxe devices and netdevs; and CounterWindow, which every traffic
// step uses to report DEV.COUNTER deltas of the namespaces it ran in.

#include <doctest/doctest.h>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/common/traffic.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;

namespace {

struct CountersHarness : fakes::Harness {
  CountersHarness() { setup(); }
  explicit CountersHarness(Registry r) : fakes::Harness(std::move(r)) { setup(); }
  void setup() {
    fake.netns.existing.insert("lab");
    fake.links.add_host_link("", {.name = "lo", .up = true, .carrier = true, .mtu = 65536});
    fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    fake.links.add_host_link("lab", {.name = "lo", .up = true, .carrier = true, .mtu = 65536});
    fake.links.add_host_link("lab", {.name = "vB", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    for (const auto& [name, deps] : fake.modules.known) fake.modules.live.insert(name);
    fake.rdma.devices.push_back({.index = 1, .name = "rxe0", .netns = "", .netdev = "vA"});
    fake.rdma.devices.push_back({.index = 2, .name = "rxe1", .netns = "lab", .netdev = "vB"});
    fake.rdma.device_counters["rxe0"] = {{"sent_pkts", 10}, {"rcvd_pkts", 7}};
    fake.rdma.device_counters["rxe1"] = {{"sent_pkts", 3}, {"rcvd_pkts", 4}};
    fake.links.stats[""]["vA"] = {{"tx_packets", 100}};
  }
};

}  // namespace

TEST_CASE("counters: plain, the values now of the devices named") {
  CountersHarness h;
  auto r = h.run("steps:\n  - {name: c, counters: {devs: [rxe0, vA]}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& f = step_named(r, "c").facts;
  CHECK(f.at("rxe0.sent_pkts") == 10);
  CHECK(f.at("vA.tx_packets") == 100);
  CHECK(f.at("vA.rx_packets") == 0);  // zeros included
  CHECK_FALSE(f.contains("rxe1.sent_pkts"));
  CHECK_FALSE(f.contains("lo.rx_packets"));
  CHECK(r.cleanup.undos.empty());
}

TEST_CASE("counters: since an earlier counters step, the deltas, what moved and what did not") {
  CountersHarness h;
  int waited = 0;
  h.fake.clock.on_wait = [&] {
    if (++waited == 1) {
      h.fake.rdma.device_counters["rxe0"]["sent_pkts"] += 65;
      h.fake.links.stats[""]["vA"]["tx_packets"] += 65;
    }
  };
  auto r = h.run(
      "steps:\n  - {name: before, counters: {}}\n  - sleep: {duration: 1s}\n"
      "  - name: after\n    counters: {devs: [rxe0, rxe1, vA], since: before}\n"
      "    expect: {rxe0.sent_pkts: 65, rxe1.sent_pkts: 0, vA.tx_packets: \"> 0\"}\n");
  CHECK(r.exit_code == 0);
  const auto& f = step_named(r, "after").facts;
  CHECK(f.at("rxe0.rcvd_pkts") == 0);
  CHECK(f.size() == 4 + 4);  // two counters per rxe device here, the fake's four statistics of vA
}

TEST_CASE("counters: a window measures across a wait, an unknown device is an error") {
  CountersHarness h;
  h.fake.clock.on_wait = [&] { h.fake.rdma.device_counters["rxe1"]["rcvd_pkts"] += 2; };
  auto r = h.run("steps:\n  - {name: w, counters: {devs: [rxe1], window: 2s}, expect: {rxe1.rcvd_pkts: 2}}\n");
  CHECK(r.exit_code == 0);
  CHECK(h.fake.clock.waits == std::vector<Duration>{Duration{2000}});

  auto bad = h.run("steps:\n  - {name: c, counters: {devs: [rxe0, vZ]}}\n");
  CHECK(bad.exit_code == 3);
  CHECK(step_named(bad, "c").message == "no RDMA device or netdev vZ: No such device");
}

TEST_CASE("counters: since and window together, a since naming no earlier step, and bad items are refused at load") {
  CountersHarness h;
  CHECK(contains(h.diagnostics("steps:\n  - {name: a, counters: {}}\n  - counters: {since: a, window: 1s}\n"),
                 "not both"));
  CHECK(contains(h.diagnostics("steps:\n  - counters: {since: nothere}\n"), "nothere"));
  CHECK(contains(h.diagnostics("steps:\n  - counters: {devs: [\"bad name\"]}\n"), "devs.0"));
  CHECK(contains(h.diagnostics("steps:\n  - counters: {devs: rxe0}\n"), "must be a list"));
}

// A kind that runs "traffic" between the root namespace and lab, as rping does.
Kind traffic_kind(fakes::FakeSystem** fake) {
  KindSpec spec;
  spec.name = "traffic";
  spec.dynamic_facts = true;
  return Kind{spec,
              [fake](const Params&, StepContext& ctx) {
                auto w = steps::CounterWindow::open(ctx, {std::nullopt, std::string("lab")});
                if (!w) return StepResult::error(w.error());
                (*fake)->rdma.device_counters["rxe1"]["sent_pkts"] += 33;
                (*fake)->links.stats["lab"]["vB"]["tx_packets"] += 33;
                StepResult res = StepResult::ok();
                if (auto c = w->close(ctx, res.facts); !c) return StepResult::error(c.error());
                return res;
              },
              {}};
}

TEST_CASE("CounterWindow: deltas of every rxe device and of every netdev in each namespace, zeros included") {
  fakes::FakeSystem* fake = nullptr;
  CountersHarness h(Registry({traffic_kind(&fake)}));
  fake = &h.fake;
  auto r = h.run("steps:\n  - {name: t, traffic: {}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& f = step_named(r, "t").facts;
  CHECK(f.at("rxe1.sent_pkts") == 33);
  CHECK(f.at("rxe0.sent_pkts") == 0);
  CHECK(f.at("vB.tx_packets") == 33);
  CHECK(f.at("vA.tx_packets") == 0);
  CHECK(f.at("lo.rx_packets") == 0);      // the step's own namespace keeps the plain name
  CHECK(f.at("lab/lo.rx_packets") == 0);  // the other's lo is named with its namespace
  CHECK(h.fake.kernel.netns.empty());     // back where it started
}
