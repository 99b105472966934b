// RtnlLinks and the veth, address and link steps on the real kernel, as
// root, each case inside its own throwaway network namespace; `ip` is the
// independent observer.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "support/privileged.h"
#include "support/real_harness.h"
#include "support/shell.h"
#include "sys/links_rtnl.h"
#include "sys/netns.h"

using namespace rxerun;
using rxerun::testing::command_output;
using rxerun::testing::RealHarness;
using rxerun::testing::sh;
using rxerun::testing::step_named;
using rxerun::testing::ThrowawayNetns;
using Strings = std::vector<std::string>;

namespace {

// The interfaces here, as `ip` lists them, one name a line, lo left out.
std::string link_names() {
  return command_output("ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -vx lo | sort | tr '\\n' ' '");
}

}  // namespace

TEST_CASE("sys.links: a veth pair with the alias on both ends and the MTU on both") {
  ThrowawayNetns ns;
  sys::RtnlLinks links;
  REQUIRE(links.add_veth({.name = "vB", .peer = "vA", .mtu = 9000, .alias = "rxerun:t"}));
  auto b = links.get("vB");
  REQUIRE(b);
  REQUIRE(b->has_value());
  CHECK((*b)->kind == "veth");
  CHECK((*b)->alias == "rxerun:t");
  CHECK((*b)->mtu == 9000);
  CHECK_FALSE((*b)->up);
  CHECK((*b)->ifindex > 0);
  CHECK(command_output("ip link show vA").find("mtu 9000") != std::string::npos);
  CHECK(command_output("ip link show vA").find("alias rxerun:t") != std::string::npos);
  CHECK(command_output("ip link show vB").find("alias rxerun:t") != std::string::npos);

  auto again = links.add_veth({.name = "vB", .peer = "vX", .alias = "rxerun:t"});
  REQUIRE_FALSE(again);
  CHECK(again.error().code == EEXIST);

  auto none = links.get("nope");
  REQUIRE(none);
  CHECK_FALSE(none->has_value());
  REQUIRE(links.remove({"vB"}));
  CHECK(link_names().empty());
  REQUIRE(links.remove({"vB", "gone"}));  // absent names are skipped
}

TEST_CASE("sys.links: state, MTU and alias changes, and the kernel's own error text") {
  ThrowawayNetns ns;
  sys::RtnlLinks links;
  REQUIRE(links.add_veth({.name = "vB", .peer = "vA"}));
  REQUIRE(links.set_up("vB", true));
  REQUIRE(links.set_up("vA", true));
  REQUIRE(links.set_mtu("vB", 4000));
  REQUIRE(links.set_alias("vB", "hello"));
  auto b = links.get("vB");
  REQUIRE(b);
  CHECK((*b)->up);
  CHECK((*b)->mtu == 4000);
  CHECK((*b)->alias == "hello");
  CHECK(command_output("ip link show vB").find("state UP") != std::string::npos);
  REQUIRE(links.set_alias("vB", ""));
  CHECK((*links.get("vB"))->alias.empty());
  REQUIRE(links.set_up("vB", false));
  CHECK_FALSE((*links.get("vB"))->up);

  auto tiny = links.set_mtu("vB", 10);
  REQUIRE_FALSE(tiny);
  CHECK(tiny.error().code == EINVAL);
  CHECK(tiny.error().message.find("cannot set the MTU of vB to 10") != std::string::npos);
  CAPTURE(tiny.error().message);
  CHECK(tiny.error().message.find("minimum") != std::string::npos);  // the kernel's extended ACK

  auto missing = links.set_up("nope", true);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ENODEV);
  REQUIRE(links.remove({"vB"}));
}

TEST_CASE("sys.links: reads without an ACK and libnl's requests share one socket in any order") {
  ThrowawayNetns ns;
  sys::RtnlLinks links;
  REQUIRE(links.add_veth({.name = "vB", .peer = "vA"}));
  for (int i = 0; i < 20; ++i) {
    CAPTURE(i);
    auto b = links.get("vB");
    REQUIRE(b);
    REQUIRE(b->has_value());
    CHECK((*b)->up == (i % 2 == 1));
    CHECK_FALSE(links.get("nope")->has_value());
    REQUIRE(links.set_up("vB", i % 2 == 0));  // libnl: waits for its ACK
    REQUIRE(links.addresses("vB"));           // a dump
  }
  // A refusal by the kernel carries its words and leaves the socket usable.
  auto bad = links.get(std::string(40, 'x'));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ERANGE);  // longer than IFNAMSIZ
  CAPTURE(bad.error().message);
  CHECK(bad.error().message.find("cannot read interface xxxx") == 0);
  auto b = links.get("vB");
  REQUIRE(b);
  CHECK(b->has_value());
  REQUIRE(links.set_mtu("vB", 1400));
  CHECK((*links.get("vB"))->mtu == 1400);
  REQUIRE(links.remove({"vB"}));
}

TEST_CASE("sys.links: an address goes by the index the listing gave, or by name when that one is gone") {
  ThrowawayNetns ns;
  sys::RtnlLinks links;
  REQUIRE(links.add_veth({.name = "vB", .peer = "vA"}));
  int index = 0;
  REQUIRE(links.addresses("vB", &index));
  CHECK(index == (*links.get("vB"))->ifindex);
  REQUIRE(links.add_address("vB", "10.10.0.2/24", index));
  CHECK(command_output("ip -o -4 addr show dev vB").find("10.10.0.2/24") != std::string::npos);

  // vB made again gets a new index: the old one leads nowhere, the name still does.
  REQUIRE(links.remove({"vB"}));
  REQUIRE(links.add_veth({.name = "vB", .peer = "vA"}));
  REQUIRE((*links.get("vB"))->ifindex != index);
  REQUIRE(links.add_address("vB", "10.10.0.3/24", index));
  CHECK(command_output("ip -o -4 addr show dev vB").find("10.10.0.3/24") != std::string::npos);
  auto gone = links.add_address("vX", "10.10.0.4/24", index);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == ENODEV);
  REQUIRE(links.remove({"vB"}));
}

TEST_CASE("sys.links: IPv4 and IPv6 addresses, with the error codes the interface promises") {
  ThrowawayNetns ns;
  sys::RtnlLinks links;
  REQUIRE(links.add_veth({.name = "vB", .peer = "vA"}));
  REQUIRE(links.add_address("vB", "10.10.0.2/24"));
  REQUIRE(links.add_address("vB", "fd00::2/64"));
  REQUIRE(links.add_address("vB", "10.10.1.2/32"));
  auto list = links.addresses("vB");
  REQUIRE(list);
  CHECK(std::find(list->begin(), list->end(), "10.10.0.2/24") != list->end());
  CHECK(std::find(list->begin(), list->end(), "fd00::2/64") != list->end());
  CHECK(std::find(list->begin(), list->end(), "10.10.1.2/32") != list->end());
  CHECK(command_output("ip -o addr show dev vB").find("inet 10.10.0.2/24") != std::string::npos);

  auto twice = links.add_address("vB", "10.10.0.2/24");
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == EEXIST);

  REQUIRE(links.remove_address("vB", "10.10.0.2/24"));
  REQUIRE(links.remove_address("vB", "fd00::2/64"));
  auto absent = links.remove_address("vB", "10.10.0.2/24");
  REQUIRE_FALSE(absent);
  CHECK(absent.error().code == EADDRNOTAVAIL);
  auto absent6 = links.remove_address("vB", "fd00::2/64");
  REQUIRE_FALSE(absent6);
  CHECK(absent6.error().code == EADDRNOTAVAIL);
  auto nodev = links.remove_address("nope", "10.10.0.2/24");
  REQUIRE_FALSE(nodev);
  CHECK(nodev.error().code == ENODEV);
  CHECK(command_output("ip -o -4 addr show dev vB").find("10.10.0.2") == std::string::npos);
  REQUIRE(links.remove({"vB"}));
}

TEST_CASE("sys.links: removing 64 pairs at once deletes them all and nothing else") {
  ThrowawayNetns ns;
  sys::RtnlLinks links;
  sh("ip link add keep0 type veth peer name keep1");
  sh("ip link set keep0 group 7");
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i) {
    REQUIRE(links.add_veth({.name = "b" + std::to_string(i), .peer = "a" + std::to_string(i), .alias = "rxerun:t"}));
    names.push_back("b" + std::to_string(i));
  }
  auto all = links.list();
  REQUIRE(all);
  CHECK(all->size() == 131);  // lo, keep0/1, 64 pairs
  REQUIRE(links.remove(names));
  CHECK(link_names() == "keep0 keep1 ");
  CHECK(command_output("ip -d link show keep0").find("group 7") != std::string::npos);
  CHECK(command_output("ip -d link show keep1").find("group default") != std::string::npos);
}

TEST_CASE("sys.links: a veth's peer goes into a named namespace, marked there too") {
  ThrowawayNetns ns;
  const std::string name = rxerun::testing::unique_netns_name("links");
  sys::RealNetns netns;
  REQUIRE(netns.create(name));
  sys::RtnlLinks links;
  auto added = links.add_veth({.name = "vB", .peer = "vA", .peer_netns = name, .mtu = 1400, .alias = "rxerun:t"});
  CHECK(added);
  CHECK(command_output("ip -n " + name + " link show vA").find("alias rxerun:t") != std::string::npos);
  CHECK(command_output("ip -n " + name + " link show vA").find("mtu 1400") != std::string::npos);
  CHECK(command_output("ip link show vA").find("does not exist") != std::string::npos);
  REQUIRE(links.remove({"vB"}));
  CHECK(command_output("ip -n " + name + " -o link show").find("vA") == std::string::npos);
  REQUIRE(netns.remove(name));

  auto nowhere = links.add_veth({.name = "vB", .peer = "vA", .peer_netns = name});
  REQUIRE_FALSE(nowhere);
  CHECK(nowhere.error().code == ENOENT);
  CHECK(link_names().empty());
}

TEST_CASE("sys.links: veth, address and link steps for real, undone without residue") {
  ThrowawayNetns ns;
  RealHarness run;
  auto r = run.run_keep(
      "steps:\n"
      "  - {name: pair, veth: {name: vB, peer: vA, mtu: 1400}}\n"
      "  - {name: addr, address: {dev: vB, cidr: 10.10.0.2/24}}\n"
      "  - {name: addr6, address: {dev: vA, cidr: 'fd00::1/64'}}\n"
      "  - {name: upB, link: {dev: vB, up: true, mtu: 1300}}\n"
      "  - {name: upA, link: {dev: vA, up: true}, expect: {up: true, carrier: true}}\n"
      "  - {name: again, veth: {name: vB, peer: vA}}\n");
  for (const auto& s : r.steps) CAPTURE(s.name + ": " + s.message);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "pair").facts.at("changed") == true);
  CHECK(step_named(r, "again").facts.at("changed") == false);
  CHECK(step_named(r, "upB").facts.at("mtu") == 1300);
  CHECK(command_output("ip -o addr show dev vB").find("10.10.0.2/24") != std::string::npos);
  CHECK(command_output("ip link show vB").find("alias rxerun:test") != std::string::npos);

  auto c = run.cleanup();
  for (const auto& u : c.undos) CAPTURE(u.summary + ": " + u.error);
  CHECK(c.clean());
  CHECK(link_names().empty());
  CHECK(run.cleanup().undos.empty());
}

TEST_CASE("sys.links: the link step restores the state and MTU it found") {
  ThrowawayNetns ns;
  sh("ip link add vB mtu 1450 type veth peer name vA");
  RealHarness run;
  auto r = run.run("steps:\n  - link: {dev: vB, up: true, mtu: 9000}\n");
  CHECK(r.exit_code == 0);
  const auto shown = command_output("ip link show vB");
  CHECK(shown.find("mtu 1450") != std::string::npos);
  CHECK(shown.find("state DOWN") != std::string::npos);
  CHECK(shown.find(",UP") == std::string::npos);
}

TEST_CASE("sys.links: an existing interface without the mark is an error and survives") {
  ThrowawayNetns ns;
  sh("ip link add vB type veth peer name vA");
  RealHarness run;
  auto r = run.run("steps:\n  - {name: pair, veth: {name: vB, peer: vZ}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "pair").message.find("interface vB exists and does not carry rxerun's mark") !=
        std::string::npos);
  CHECK(link_names() == "vA vB ");

  RunOptions force;
  force.force = true;
  auto forced = run.run("steps:\n  - {name: pair, veth: {name: vB, peer: vZ}}\n", force);
  CHECK(forced.exit_code == 0);
  CHECK(step_named(forced, "pair").facts.at("replaced") == true);
  CHECK(link_names().empty());  // ours replaced theirs, and cleanup took ours
}

TEST_CASE("sys.links: cleanup deletes 64 veths in a batch, and an unmarked veth survives") {
  ThrowawayNetns ns;
  sh("ip link add host0 type veth peer name host1");
  RealHarness run;
  std::string yaml = "steps:\n";
  for (int i = 0; i < 64; ++i)
    yaml += "  - veth: {name: b" + std::to_string(i) + ", peer: a" + std::to_string(i) + "}\n";
  auto r = run.run_keep(yaml);
  REQUIRE(r.exit_code == 0);
  CHECK(run.real.system().links.list()->size() == 131);
  auto c = run.cleanup();
  CHECK(c.clean());
  CHECK(c.undos.size() == 64);
  CHECK(link_names() == "host0 host1 ");
}

TEST_CASE("sys.links: preclean removes marked leftovers of a crashed run, and nothing else") {
  ThrowawayNetns ns;
  sh("ip link add old0 type veth peer name old1");
  sh("ip link set old0 alias rxerun:test");
  sh("ip link set old1 alias rxerun:test");
  sh("ip link add their0 type veth peer name their1");
  sh("ip link set their0 alias rxerun:another");
  RealHarness run;
  auto r = run.run("steps:\n  - veth: {name: vB, peer: vA}\n");
  CHECK(r.exit_code == 0);
  CHECK(link_names() == "their0 their1 ");
}
