#pragma once
// Runs scenario text through the real loader and runner against FakeSystem:
// how step kinds are unit-tested without root. The real-system twin, for the
// privileged tests, is tests/support/real_harness.h; what both do is in
// tests/support/scenario_harness.h.
//
//   rxerun::fakes::Harness h;
//   h.fake.links.add_host_link("", {.name = "eth0", .mtu = 1500});
//   auto r = h.run("steps:\n  - link: {dev: eth0, mtu: 9000}\n");
//   CHECK(r.exit_code == 0);
//   CHECK(h.fake.links.find("", "eth0")->mtu == 1500);  // cleanup restored it

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fakes/fake_kinds.h"
#include "fakes/fake_system.h"
#include "support/scenario_harness.h"

namespace rxerun::fakes {

struct Harness : testing::ScenarioHarness {
  Harness();  // the real kinds (steps::all_kinds())
  explicit Harness(Registry r);

  FakeSystem fake;

 protected:
  sys::System& system() override { return fake.system; }
};

// What the run did to one kernel service ("nvme", "srp", "nfs", ...), in
// words, in order.
std::vector<std::string> service_log(const FakeSystem& f, std::string_view service);
// The same for several services together ({"storage", "nvme"}), in the order done.
std::vector<std::string> service_log(const FakeSystem& f, std::initializer_list<std::string_view> services);
// Where `entry` is in such a log; -1 when absent.
long position(const std::vector<std::string>& log, std::string_view entry);

// The setting of the RDMA traffic kinds' tests (rping, perftest, verbs): two
// namespaces a and b joined by vA (in a) and vB (in b), both up, rxe0 on vA
// and rxe1 on vB, a few packets already counted, the tools on the virtual
// clock.
struct RxePairHarness : Harness {
  RxePairHarness();
};

// The harness with the engine's test kinds (tests/fakes/fake_kinds.h) and
// the world they act on, for tests of the runner and the journal.
struct WorldHarness : Harness {
  explicit WorldHarness(std::unique_ptr<FakeWorld> w = std::make_unique<FakeWorld>())
      : Harness(fake_registry(*w)), world_(std::move(w)), world(*world_) {}
  std::unique_ptr<FakeWorld> world_;
  FakeWorld& world;
};

using testing::step_named;

}  // namespace rxerun::fakes
