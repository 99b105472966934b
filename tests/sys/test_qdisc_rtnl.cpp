// RtnlQdiscs and the netem step on the real kernel, as root, inside a
// throwaway network namespace; `tc` is the independent observer. Where the
// kernel has no netem (the development and CI machines), the step must stop
// before it changes anything; the netem cases themselves run in the lab VM.

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "support/privileged.h"
#include "support/real_harness.h"
#include "support/shell.h"
#include "sys/qdisc_rtnl.h"

using namespace rxerun;
using rxerun::testing::command_output;
using rxerun::testing::RealHarness;
using rxerun::testing::sh;
using rxerun::testing::step_named;
using rxerun::testing::ThrowawayNetns;

namespace {

bool netem_here() {
  sys::RtnlQdiscs q;
  auto a = q.netem_available();
  REQUIRE(a);
  return *a;
}

}  // namespace

TEST_CASE("sys.qdisc: the root qdisc of an interface, and the default one is not removable") {
  ThrowawayNetns ns;
  sh("ip link add vB type veth peer name vA");
  sys::RtnlQdiscs q;
  auto down = q.root_kind("vB");
  REQUIRE(down);
  CHECK_FALSE(down->has_value());  // a link that never came up has none yet
  sh("ip link set vB up");
  auto kind = q.root_kind("vB");
  REQUIRE(kind);
  REQUIRE(kind->has_value());
  CHECK(**kind == "noqueue");
  auto gone = q.remove_root("vB");
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == ENOENT);
  auto nodev = q.root_kind("nope");
  REQUIRE_FALSE(nodev);
  CHECK(nodev.error().code == ENODEV);
}

TEST_CASE("sys.qdisc: netem_available looks without changing the host") {
  ThrowawayNetns ns;
  const auto before = command_output("ip netns list; ls /sys/module | sort");
  const bool available = netem_here();
  CHECK(command_output("ip netns list; ls /sys/module | sort") == before);
  // On this kind of machine the kernel has no sch_netem; the lab VM's has.
  MESSAGE("netem available: " << (available ? "yes" : "no"));
}

TEST_CASE("sys.qdisc: without netem the step stops before any change and names --vm") {
  ThrowawayNetns ns;
  if (netem_here()) rxerun::testing::skip_test("this kernel has netem: the refusal cannot be seen here");
  sh("ip link add vB type veth peer name vA && ip link set vB up");
  RealHarness run;
  auto r = run.run("steps:\n  - {name: n, netem: {dev: vB, loss: 30%}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "n").message.find("rxerun --vm") != std::string::npos);
  CHECK(r.cleanup.undos.empty());
  CHECK(command_output("tc qdisc show dev vB").find("noqueue") != std::string::npos);
}

TEST_CASE("sys.qdisc: netem for real, with statistics, removed by cleanup") {
  ThrowawayNetns ns;
  if (!netem_here()) rxerun::testing::skip_test("this kernel has no netem (CONFIG_NET_SCH_NETEM): runs in the lab VM");
  sh("ip link add vB type veth peer name vA");
  sh("ip addr add 10.9.0.1/24 dev vB && ip link set vB up && ip link set vA up");
  sys::RtnlQdiscs q;
  sys::NetemSpec spec;
  spec.loss_pct = 100;
  spec.delay = Duration{10};
  spec.jitter = Duration{1};
  spec.rate_bytes_per_s = 125000;
  REQUIRE(q.add_netem("vB", spec));
  const auto shown = command_output("tc qdisc show dev vB");
  CAPTURE(shown);
  CHECK(shown.find("netem") != std::string::npos);
  CHECK(shown.find("loss 100%") != std::string::npos);
  CHECK(shown.find("rate 1Mbit") != std::string::npos);
  REQUIRE(q.root_kind("vB")->value() == "netem");
  (void)std::system("ping -c 3 -i 0.2 -W 1 10.9.0.2 >/dev/null 2>&1");
  auto stats = q.root_stats("vB");
  REQUIRE(stats);
  CHECK(stats->drops > 0);
  auto twice = q.add_netem("vB", spec);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == EEXIST);
  REQUIRE(q.remove_root("vB"));
  CHECK(command_output("tc qdisc show dev vB").find("netem") == std::string::npos);

  RealHarness run;
  auto r = run.run(
      "steps:\n"
      "  - {name: n, netem: {dev: vB, loss: 100%}}\n"
      "  - {name: lift, revert: n}\n");
  CHECK(r.exit_code == 0);
  CHECK(command_output("tc qdisc show dev vB").find("netem") == std::string::npos);
}
