// siw: a soft-iWARP device against the fake Rdma. It shares its life with
// rxe (steps/common/soft_device.h): the module loaded and unloaded only by
// the run that loaded it, the device deleted by index, names global across
// both types. What differs: its own module and one device per netdev per
// type, no UDP socket to wait for, and a kernel without siw named.

#include <doctest/doctest.h>

#include "base/strings.h"
#include "fakes/harness.h"

using namespace rxerun;
using fakes::step_named;

using Strings = std::vector<std::string>;

namespace {

struct SiwHarness : fakes::Harness {
  SiwHarness() {
    fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    fake.links.add_host_link("", {.name = "vB", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  }
};

const std::string kSiwStep = "steps:\n  - {name: dev, siw: {name: siw0, netdev: vA}}\n";

}  // namespace

TEST_CASE("siw: loads siw, adds the device, and cleanup deletes it and unloads what it loaded") {
  SiwHarness h;
  auto r = h.run_keep(kSiwStep);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "dev");
  CHECK(s.facts.at("changed") == true);
  CHECK(s.facts.at("module_loaded") == true);
  REQUIRE(h.fake.rdma.find("siw0"));
  CHECK(h.fake.rdma.find("siw0")->type == "siw");
  CHECK(h.fake.modules.live.count("siw") == 1);
  CHECK(h.fake.modules.live.count("rdma_rxe") == 0);

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 2);
  CHECK(c.undos[0].summary == "delete siw device siw0");
  CHECK(c.undos[1].summary ==
        "unload siw, rdma_ucm and 5 modules they needed (loaded by this run) once no siw device is left");
  CHECK(h.fake.rdma.devices.empty());
  CHECK(h.fake.modules.live.empty());
}

TEST_CASE("siw: an rxe and a siw device may share a netdev, not a name") {
  SiwHarness h;
  auto both = h.run(
      "steps:\n"
      "  - {name: r, rxe: {name: rxe0, netdev: vA}}\n"
      "  - {name: s, siw: {name: siw0, netdev: vA}}\n");
  CHECK(both.exit_code == 0);
  CHECK(both.cleanup.clean());

  auto clash = h.run(
      "steps:\n"
      "  - {name: r, rxe: {name: dev0, netdev: vA}}\n"
      "  - {name: s, siw: {name: dev0, netdev: vA}}\n");
  CHECK(clash.exit_code == 3);
  CHECK(step_named(clash, "s").message ==
        "RDMA device name dev0 is taken (names are global across namespaces): it names the rxe device on vA; "
        "choose another name");
  CHECK(clash.cleanup.clean());
  CHECK(h.fake.rdma.devices.empty());
}

TEST_CASE("siw: its modules stay while another siw device is left, whatever rxe devices there are") {
  SiwHarness h;
  REQUIRE(h.run_keep(kSiwStep).exit_code == 0);
  h.fake.rdma.devices.push_back({.index = 9, .name = "theirs", .netns = "", .netdev = "vB", .type = "siw"});
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.fake.rdma.find("siw0") == nullptr);
  CHECK(h.fake.modules.live.count("siw") == 1);
}

TEST_CASE("siw: a kernel without siw is an error that names the missing option") {
  SiwHarness h;
  h.fake.modules.known.erase("siw");
  auto r = h.run(kSiwStep);
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "dev").message, "siw is not available in this kernel (CONFIG_RDMA_SIW is not set"));
  CHECK(contains(step_named(r, "dev").message, "rxerun vm status"));
  CHECK(r.cleanup.undos.empty());
  CHECK(h.fake.kernel.commands({"modules", "rdma"}).empty());
}

TEST_CASE("siw: undo leaves alone an rxe device that took the name since") {
  SiwHarness h;
  REQUIRE(h.run_keep(kSiwStep).exit_code == 0);
  const unsigned index = h.fake.rdma.find("siw0")->index;
  REQUIRE(h.fake.rdma.remove_device(index));
  h.fake.rdma.devices.push_back({.index = index, .name = "siw0", .netns = "", .netdev = "vA", .type = "rxe"});
  h.fake.modules.live.insert("rdma_rxe");
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());
  CHECK(contains(c.undos[0].error, "siw device siw0 is another one than the one this run added"));
  CHECK(h.fake.rdma.find("siw0"));
}

TEST_CASE("siw: plan shows the rdma link commands") {
  fakes::Harness h;
  const std::string text = h.plan("steps:\n  - siw: {name: siw0, netdev: vA}\n");
  CAPTURE(text);
  CHECK(contains(text, "rdma link add siw0 type siw netdev vA"));
  CHECK(contains(text, "rdma link delete siw0"));
}

TEST_CASE("siw: perftest without rdma_cm is refused, and counters says siw keeps none") {
  SiwHarness h;
  auto bw = h.run(
      "steps:\n"
      "  - siw: {name: siw0, netdev: vA}\n"
      "  - {name: bw, perftest: {test: write_bw, server: {dev: siw0}, client: {dev: siw0, to: 10.0.0.1}}}\n");
  CHECK(bw.exit_code == 3);
  CHECK(step_named(bw, "bw").message == "siw0 is a siw device: iWARP connects only through rdma_cm; set rdma_cm: true");
  CHECK(bw.cleanup.clean());

  auto c = h.run(
      "steps:\n"
      "  - siw: {name: siw0, netdev: vA}\n"
      "  - {name: c, counters: {devs: [siw0, vA]}}\n");
  REQUIRE(c.exit_code == 0);
  const auto& s = step_named(c, "c");
  REQUIRE(s.hints.size() == 1);
  CHECK(contains(s.hints[0], "siw0 is a siw device: soft-iWARP keeps no counters"));
  CHECK(s.facts.contains("vA.tx_packets"));
}
