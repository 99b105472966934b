// netns: the step's logic against the fake Netns and Links: create, the
// mark on the namespace's loopback, adoption, refusal of a namespace that is
// not rxerun's, --force, and an undo that takes rxerun's interfaces first.

#include <doctest/doctest.h>

#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

const std::string kMark = "rxerun:test";

std::size_t index_of(const std::vector<std::string>& log, const std::string& entry) {
  return static_cast<std::size_t>(std::find(log.begin(), log.end(), entry) - log.begin());
}

}  // namespace

TEST_CASE("netns: creates the namespace, marks its loopback, and cleanup deletes it") {
  fakes::Harness h;
  auto r = h.run_keep("steps:\n  - {name: ns, netns: {name: lab}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "ns").facts.at("changed") == true);
  CHECK(h.fake.netns.existing.count("lab") == 1);
  REQUIRE(h.fake.links.find("lab", "lo") != nullptr);
  CHECK(h.fake.links.find("lab", "lo")->alias == kMark);
  CHECK(h.fake.links.find("lab", "lo")->up);

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "delete network namespace lab");
  CHECK(h.fake.netns.existing.count("lab") == 0);
  CHECK(h.cleanup().undos.empty());
  CHECK(h.fake.kernel.netns.empty());  // back in rxerun's own namespace
}

TEST_CASE("netns: a second step for the same namespace adopts it and reports nothing changed") {
  fakes::Harness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: a, netns: {name: lab}}\n"
      "  - {name: b, netns: {name: lab}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("changed") == false);
  CHECK(r.cleanup.clean());
  CHECK(h.fake.netns.existing.empty());
  CHECK(std::ranges::count(h.fake.kernel.commands("netns"), "ip netns add lab") == 1);
}

TEST_CASE("netns: an existing namespace that is not rxerun's stops the run and survives") {
  fakes::Harness h;
  h.fake.netns.existing.insert("lab");
  h.fake.links.add_host_link("lab", {.name = "lo", .alias = "", .up = true, .mtu = 65536});
  auto r = h.run("steps:\n  - {name: ns, netns: {name: lab}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "ns").message ==
        "network namespace lab exists; rxerun will not take over what it did not create (delete it with `ip netns "
        "del lab`, choose another name, or run with --force to replace it)");
  CHECK(h.fake.netns.existing.count("lab") == 1);
  CHECK(r.cleanup.undos.empty());
}

TEST_CASE("netns: with --force an existing namespace is replaced by rxerun's") {
  fakes::Harness h;
  h.fake.netns.existing.insert("lab");
  RunOptions o;
  o.force = true;
  auto r = h.run_keep("steps:\n  - {name: ns, netns: {name: lab}}\n", o);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "ns").facts.at("changed") == true);
  CHECK(index_of(h.fake.kernel.commands("netns"), "ip netns del lab") <
        index_of(h.fake.kernel.commands("netns"), "ip netns add lab"));
  CHECK(h.fake.links.find("lab", "lo")->alias == kMark);
  CHECK(h.cleanup().clean());
  CHECK(h.fake.netns.existing.empty());
}

TEST_CASE("netns: undo leaves a namespace whose loopback no longer carries the mark") {
  fakes::Harness h;
  auto r = h.run_keep("steps:\n  - {name: ns, netns: {name: lab}}\n");
  REQUIRE(r.exit_code == 0);
  h.fake.links.find("lab", "lo")->alias = "someone else's now";
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].error.find("does not carry rxerun's mark") != std::string::npos);
  CHECK(h.fake.netns.existing.count("lab") == 1);
}

TEST_CASE("netns: undo of a namespace that is gone already succeeds") {
  fakes::Harness h;
  auto r = h.run_keep("steps:\n  - {name: ns, netns: {name: lab}}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.netns.remove("lab"));
  CHECK(h.cleanup().clean());
}

TEST_CASE("netns: undo deletes rxerun's interfaces inside first, so a peer outside goes at once") {
  fakes::Harness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - netns: {name: lab}\n"
      "  - veth: {name: vB, peer: vA, peer_netns: lab}\n"
      "  - veth: {name: vC, peer: vD}\n"
      "    netns: lab\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.links.find("", "vB") != nullptr);
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.fake.links.links[""].empty());
  CHECK(h.fake.netns.existing.empty());
  // The namespace's undo (run before the batched veth undos) took vA, and
  // vB outside with it; the veth undo then found vB gone.
  // vD went with its peer vC.
  const auto links = h.fake.kernel.commands("links");
  REQUIRE(links.size() >= 2);
  CHECK(Strings(links.end() - 2, links.end()) ==
        Strings{"ip netns exec lab ip link del vA", "ip netns exec lab ip link del vC"});
}

TEST_CASE("netns: plan shows ip netns add and the mark") {
  const std::string text = fakes::Harness().plan("steps:\n  - netns: {name: lab}\n");
  CAPTURE(text);
  CHECK(text.find("ip netns add lab") != std::string::npos);
  CHECK(text.find("ip netns exec lab ip link set lo alias rxerun:test") != std::string::npos);
  CHECK(text.find("ip netns del lab") != std::string::npos);
}
