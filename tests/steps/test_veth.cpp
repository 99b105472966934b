// veth: the step's logic against the model's Links and Netns: the mark on both
// ends, adoption of this scenario's own pair, refusal of what is not
// rxerun's, batch deletion and preclean.

#include <doctest/doctest.h>

#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

const std::string kMark = "rxerun:test";

}  // namespace

TEST_CASE("veth: creates the pair with the mark on both ends, the peer in its namespace, and cleanup deletes it") {
  fakes::Harness h;
  h.fake.netns.existing.insert("lab");
  auto r = h.run_keep("steps:\n  - {name: pair, veth: {name: vB, peer: vA, peer_netns: lab, mtu: 9000}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "pair");
  CHECK(s.facts.at("changed") == true);
  CHECK(s.facts.at("mtu") == 9000);
  CHECK(s.facts.at("replaced") == false);
  auto* b = h.fake.links.find("", "vB");
  auto* a = h.fake.links.find("lab", "vA");
  REQUIRE(b);
  REQUIRE(a);
  CHECK(b->alias == kMark);
  CHECK(a->alias == kMark);
  CHECK(a->mtu == 9000);
  CHECK(h.fake.links.find("", "vA") == nullptr);

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "delete veth pair vB/vA");
  CHECK(h.fake.links.find("", "vB") == nullptr);
  CHECK(h.fake.links.find("lab", "vA") == nullptr);  // the peer went with it
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("veth: a second step for the same pair adopts it and reports nothing changed") {
  fakes::Harness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: a, veth: {name: vB, peer: vA}}\n"
      "  - {name: b, veth: {name: vB, peer: vA}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("changed") == false);
  CHECK(r.cleanup.clean());
  // One pair made, one pair deleted; the second undo found it gone.
  const auto made = h.fake.kernel.commands("links");
  CHECK(std::count_if(made.begin(), made.end(), [](const std::string& e) { return e.starts_with("ip link add"); }) ==
        1);
  CHECK(h.fake.links.links[""].empty());
}

TEST_CASE("veth: an existing interface without the mark stops the step and survives") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "vB", .kind = "veth", .alias = "", .mtu = 1500});
  auto r = h.run("steps:\n  - {name: pair, veth: {name: vB, peer: vA}}\n");
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "pair");
  CHECK(s.message.find("interface vB exists and does not carry rxerun's mark") != std::string::npos);
  CHECK(s.message.find("--force") != std::string::npos);
  CHECK(h.fake.links.find("", "vB") != nullptr);
  CHECK(h.fake.kernel.commands("links").empty());  // nothing deleted, nothing made
  CHECK(r.cleanup.undos.empty());
}

TEST_CASE("veth: an unmarked interface under the peer's name in the peer's namespace stops the step too") {
  fakes::Harness h;
  h.fake.netns.existing.insert("lab");
  h.fake.links.add_host_link("lab", {.name = "vA", .kind = "dummy", .alias = "mine", .mtu = 1500});
  auto r = h.run("steps:\n  - {name: pair, veth: {name: vB, peer: vA, peer_netns: lab}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "pair").message.find("vA (netns lab)") != std::string::npos);
  CHECK(step_named(r, "pair").message.find("'mine'") != std::string::npos);
  CHECK(h.fake.links.find("lab", "vA")->alias == "mine");
  CHECK(h.fake.kernel.commands("links").empty());
}

TEST_CASE("veth: with --force an unmarked interface is replaced by rxerun's pair") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "vB", .kind = "veth", .alias = "someone's", .mtu = 1500});
  RunOptions o;
  o.force = true;
  auto r = h.run_keep("steps:\n  - {name: pair, veth: {name: vB, peer: vA}}\n", o);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "pair").facts.at("replaced") == true);
  CHECK(h.fake.links.find("", "vB")->alias == kMark);
  CHECK(h.fake.kernel.commands("links") == Strings{"ip link del vB", "ip link add vB type veth peer name vA",
                                                   "ip link set vB alias rxerun:test",
                                                   "ip link set vA alias rxerun:test"});
}

TEST_CASE("veth: this scenario's own pair that does not match is deleted and made anew") {
  fakes::Harness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - {name: a, veth: {name: vB, peer: vA}}\n"
      "  - {name: b, veth: {name: vB, peer: vA, mtu: 9000}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "b").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("replaced") == false);
  CHECK(h.fake.links.find("", "vB")->mtu == 9000);
  CHECK(h.fake.links.find("", "vA")->mtu == 9000);
  const Strings pair = {"ip link add vB type veth peer name vA", "ip link set vB alias rxerun:test",
                        "ip link set vA alias rxerun:test"};
  Strings twice = pair;
  twice.push_back("ip link del vB");
  twice.push_back("ip link add vB mtu 9000 type veth peer name vA");
  twice.insert(twice.end(), pair.begin() + 1, pair.end());
  CHECK(h.fake.kernel.commands("links") == twice);
  CHECK(h.cleanup().clean());
  CHECK(h.fake.links.links[""].empty());
}

TEST_CASE("veth: undo leaves an interface whose alias is not the mark, and says so") {
  fakes::Harness h;
  auto r = h.run_keep("steps:\n  - {name: pair, veth: {name: vB, peer: vA}}\n");
  REQUIRE(r.exit_code == 0);
  h.fake.links.find("", "vB")->alias = "taken over";
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].error.find("vB does not carry rxerun's mark") != std::string::npos);
  CHECK(h.fake.links.find("", "vB") != nullptr);
}

TEST_CASE("veth: cleanup deletes many pairs in one call, and only rxerun's") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .kind = "", .alias = "", .mtu = 1500});
  std::string yaml = "steps:\n";
  for (int i = 0; i < 64; ++i)
    yaml += "  - veth: {name: b" + std::to_string(i) + ", peer: a" + std::to_string(i) + "}\n";
  auto r = h.run_keep(yaml);
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.links.links[""].size() == 129);
  h.fake.links.remove_calls = 0;
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(c.undos.size() == 64);
  CHECK(h.fake.links.remove_calls == 1);
  REQUIRE(h.fake.links.links[""].size() == 1);
  CHECK(h.fake.links.find("", "eth0") != nullptr);
}

TEST_CASE("veth: a batch with one interface that lost its mark deletes the others and names that one") {
  fakes::Harness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - veth: {name: b0, peer: a0}\n"
      "  - veth: {name: b1, peer: a1}\n"
      "  - veth: {name: b2, peer: a2}\n");
  REQUIRE(r.exit_code == 0);
  h.fake.links.find("", "b1")->alias = "";
  h.fake.links.find("", "a1")->alias = "";
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());
  int failed = 0;
  for (const auto& u : c.undos)
    if (!u.ok) {
      ++failed;
      CHECK(u.error.find("b1") != std::string::npos);
    }
  CHECK(failed == 1);
  CHECK(h.fake.links.find("", "b0") == nullptr);
  CHECK(h.fake.links.find("", "b2") == nullptr);
  CHECK(h.fake.links.find("", "b1") != nullptr);
}

TEST_CASE("veth: preclean deletes marked veths the journal does not know, and nothing else") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "old0", .kind = "veth", .alias = kMark, .mtu = 1500});
  h.fake.links.add_host_link("", {.name = "old1", .kind = "veth", .alias = kMark, .mtu = 1500});
  h.fake.links.add_host_link("", {.name = "other", .kind = "veth", .alias = "rxerun:another", .mtu = 1500});
  h.fake.links.add_host_link("", {.name = "lo", .kind = "", .alias = kMark, .mtu = 65536});
  auto r = h.run("steps:\n  - {name: pair, veth: {name: vB, peer: vA}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.links.find("", "old0") == nullptr);
  CHECK(h.fake.links.find("", "old1") == nullptr);
  CHECK(h.fake.links.find("", "other") != nullptr);
  CHECK(h.fake.links.find("", "lo") != nullptr);  // marked, but not a veth: not this kind's
  bool reported = false;
  for (const auto& u : r.preclean.undos)
    if (u.summary.find("deleted interface old0") != std::string::npos) reported = true;
  CHECK(reported);
}

TEST_CASE("veth: the peer's namespace must exist") {
  fakes::Harness h;
  auto r = h.run("steps:\n  - {name: pair, veth: {name: vB, peer: vA, peer_netns: nowhere}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "pair").message.find("network namespace nowhere does not exist") != std::string::npos);
  CHECK(h.fake.kernel.commands("links").empty());
}

TEST_CASE("veth: plan shows the ip commands, the mark included") {
  auto text = fakes::Harness().plan(
      "steps:\n"
      "  - netns: {name: lab}\n"
      "  - veth: {name: vB, peer: vA, peer_netns: lab, mtu: 9000}\n");
  CAPTURE(text);
  CHECK(text.find("ip link add vB mtu 9000 type veth peer name vA netns lab") != std::string::npos);
  CHECK(text.find("ip link set vB alias rxerun:") != std::string::npos);
  CHECK(text.find("ip -n lab link set vA alias rxerun:") != std::string::npos);
}

TEST_CASE("veth: plan marks a peer in another namespace with one command, from inside a namespace too") {
  auto text = fakes::Harness().plan(
      "steps:\n"
      "  - netns: {name: a}\n"
      "  - netns: {name: b}\n"
      "  - veth: {name: vA, peer: vB, peer_netns: b}\n"
      "    netns: a\n");
  CAPTURE(text);
  CHECK(text.find("ip netns exec a ip link add vA type veth peer name vB netns b") != std::string::npos);
  CHECK(text.find("ip netns exec a ip link set vA alias rxerun:test") != std::string::npos);
  // `ip -n b` names the peer's namespace itself: it is not wrapped in the step's.
  CHECK(text.find("\n       ip -n b link set vB alias rxerun:test ") != std::string::npos);
  CHECK(text.find("ip netns exec a ip -n") == std::string::npos);
}
