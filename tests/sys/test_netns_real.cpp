// RealNetns and the netns step on the real kernel, as root. Named
// namespaces live in /run/netns, which every process sees: each case uses a
// name of its own (unique_netns_name) and removes it, also on failure; the
// links it makes live in a throwaway namespace. `ip netns` is the observer.

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/privileged.h"
#include "support/real_harness.h"
#include "support/shell.h"
#include "sys/netns.h"

using namespace rxerun;
using rxerun::testing::command_output;
using rxerun::testing::RealHarness;
using rxerun::testing::step_named;
using rxerun::testing::ThrowawayNetns;
using rxerun::testing::unique_netns_name;

namespace {

bool listed(const std::string& name) {
  return command_output("ip netns list | awk '{print $1}' | grep -x " + name) == name;
}

// Removes the namespaces at the end of a case, whatever happened in it.
struct NamespaceGuard {
  std::vector<std::string> names;
  ~NamespaceGuard() {
    for (const auto& n : names)
      if (std::system(("ip netns del " + n + " 2>/dev/null").c_str()) != 0) {
      }
  }
};

}  // namespace

TEST_CASE("sys.netns: create, exists, enter and remove, as ip netns sees them") {
  ThrowawayNetns throwaway;
  const std::string name = unique_netns_name("real");
  NamespaceGuard guard{{name}};
  sys::RealNetns netns;
  REQUIRE_FALSE(*netns.exists(name));
  REQUIRE(netns.create(name));
  CHECK(*netns.exists(name));
  CHECK(listed(name));
  CHECK(command_output("ip -n " + name + " link show lo").find(",UP") != std::string::npos);
  CHECK(command_output("findmnt -n -o PROPAGATION /run/netns").find("shared") != std::string::npos);

  auto twice = netns.create(name);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == EEXIST);

  {
    auto scope = netns.enter(name);
    REQUIRE(scope);
    // Inside: only lo, no interface of the throwaway namespace.
    CHECK(command_output("ip -o link show | wc -l") == "1");
  }
  REQUIRE(netns.remove(name));
  CHECK_FALSE(listed(name));
  CHECK_FALSE(*netns.exists(name));
  auto again = netns.remove(name);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == ENOENT);
  auto bad = netns.create("a/b");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == EINVAL);
}

TEST_CASE("sys.netns: the netns step for real, and its undo leaves nothing") {
  ThrowawayNetns throwaway;
  const std::string name = unique_netns_name("step");
  NamespaceGuard guard{{name}};
  RealHarness run;
  auto r = run.run_keep("steps:\n  - {name: ns, netns: {name: " + name + "}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(listed(name));
  CHECK(command_output("ip -n " + name + " link show lo").find("alias rxerun:test") != std::string::npos);
  auto c = run.cleanup();
  CHECK(c.clean());
  CHECK_FALSE(listed(name));
  CHECK(run.cleanup().undos.empty());
}

TEST_CASE("sys.netns: an existing namespace rxerun did not make is an error and survives") {
  ThrowawayNetns throwaway;
  const std::string name = unique_netns_name("theirs");
  NamespaceGuard guard{{name}};
  REQUIRE(std::system(("ip netns add " + name).c_str()) == 0);
  RealHarness run;
  auto r = run.run("steps:\n  - {name: ns, netns: {name: " + name + "}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "ns").message.find("rxerun will not take over what it did not create") != std::string::npos);
  CHECK(listed(name));
}

TEST_CASE("sys.netns: two namespaces joined by a veth, addressed and up, undone without residue") {
  ThrowawayNetns throwaway;
  const std::string a = unique_netns_name("pa");
  const std::string b = unique_netns_name("pb");
  NamespaceGuard guard{{a, b}};
  RealHarness run;
  auto r = run.run_keep(
      "steps:\n"
      "  - netns: {name: " +
      a +
      "}\n"
      "  - netns: {name: " +
      b +
      "}\n"
      "  - veth: {name: vA, peer: vB, peer_netns: " +
      b +
      ", mtu: 1400}\n"
      "    netns: " +
      a +
      "\n"
      "  - address: {dev: vA, cidr: 10.77.0.1/24}\n"
      "    netns: " +
      a +
      "\n"
      "  - address: {dev: vB, cidr: 10.77.0.2/24}\n"
      "    netns: " +
      b +
      "\n"
      "  - link: {dev: vA, up: true}\n"
      "    netns: " +
      a +
      "\n"
      "  - {name: upB, link: {dev: vB, up: true}, netns: " +
      b + "}\n");
  for (const auto& s : r.steps) CAPTURE(s.name + ": " + s.message);
  REQUIRE(r.exit_code == 0);
  CHECK(command_output("ip -n " + a + " -o addr show dev vA").find("10.77.0.1/24") != std::string::npos);
  CHECK(command_output("ip -n " + b + " link show vB").find("mtu 1400") != std::string::npos);
  // The kernel's own ping, as an observer only.
  CHECK(std::system(("ip netns exec " + a + " ping -c 1 -W 2 10.77.0.2 >/dev/null 2>&1").c_str()) == 0);

  auto c = run.cleanup();
  for (const auto& u : c.undos) CAPTURE(u.summary + ": " + u.error);
  CHECK(c.clean());
  CHECK_FALSE(listed(a));
  CHECK_FALSE(listed(b));
  CHECK(command_output("ip -o link show | grep -c -v ' lo:'") == "0");
}
