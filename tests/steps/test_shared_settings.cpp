// Shared settings: an undo of a sysctl, a link setting or an offload puts
// the value found back only while the setting still holds the value the run
// wrote. Changed since by somebody else, it is left, and the undo fails
// naming the setting, the value now, the value written and the value found.
// Two labs that set one key, cleaned up in either order, end with the value
// found before both.

#include <doctest/doctest.h>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using Strings = std::vector<std::string>;

namespace {

// The sysctl writes, as `sysctl -w` takes them: KEY=VALUE.
Strings writes(fakes::FakeSystem& f) {
  Strings out;
  for (const auto& c : f.kernel.commands("sysctl")) out.push_back(c.substr(c.rfind("sysctl -w ") + 10));
  return out;
}

const std::string kKey = "net.ipv4.conf.vB.rp_filter";

// One fake host, and a journal per lab: what two scenarios run one after
// the other with --keep share.
struct TwoLabs : fakes::Harness {
  Journal journal_b = Journal::in_memory();

  TwoLabs() {
    fake.links.add_host_link("", {.name = "vB", .kind = "veth", .up = true, .mtu = 1500});
    fake.sysctl.values[kKey] = "2";
  }
  RunReport run_b(const std::string& yaml) {
    RunOptions o;
    o.keep = true;
    Runner runner(registry, fake.system, journal_b, reporter, o);
    return runner.run(load(yaml));
  }
  CleanupReport cleanup_b() {
    Runner runner(registry, fake.system, journal_b, reporter);
    return runner.cleanup("b", "cleanup");
  }
};

const std::string kLabA = "name: a\nsteps:\n  - {name: rpf, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}}\n";
const std::string kLabB = "name: b\nsteps:\n  - {name: rpf, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 1}}\n";

}  // namespace

TEST_CASE("shared settings: a sysctl somebody changed since is left, and the conflict named") {
  fakes::Harness h;
  h.fake.sysctl.values[kKey] = "2";
  REQUIRE(h.run_keep("steps:\n  - {name: rpf, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}}\n").exit_code == 0);
  h.fake.sysctl.values[kKey] = "1";  // somebody else's value
  h.fake.kernel.actions.clear();
  auto c = h.cleanup();
  REQUIRE(c.undos.size() == 1);
  CHECK_FALSE(c.undos[0].ok);
  CHECK(c.undos[0].error ==
        "net.ipv4.conf.vB.rp_filter is 1 now, not the 0 this run wrote (it was 2 before the run): changed by "
        "somebody else since, so left as it is");
  CHECK(h.fake.sysctl.values[kKey] == "1");
  CHECK(writes(h.fake).empty());
  // Still residue the next time, and still nothing written.
  CHECK_FALSE(h.cleanup().clean());
  CHECK(writes(h.fake).empty());
}

TEST_CASE("shared settings: a sysctl already back at the value found is success (an undo cut short after its write)") {
  fakes::Harness h;
  h.fake.sysctl.values[kKey] = "2";
  REQUIRE(h.run_keep("steps:\n  - {name: rpf, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}}\n").exit_code == 0);
  h.fake.sysctl.values[kKey] = "2";
  h.fake.kernel.actions.clear();
  CHECK(h.cleanup().clean());
  CHECK(writes(h.fake).empty());
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("shared settings: the value written is compared as the kernel reads it back") {
  fakes::Harness h;
  h.fake.sysctl.values[kKey] = "2";
  h.fake.sysctl.values["net.ipv4.tcp_rmem"] = "4096\t131072\t6291456";
  REQUIRE(h.run_keep(R"(
steps:
  - {name: rpf, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: "01"}}
  - {name: rmem, sysctl: {key: net.ipv4.tcp_rmem, value: "4096 87380 6291456"}}
)")
              .exit_code == 0);
  // The kernel's spelling of what was written: "1", tabs.
  h.fake.sysctl.values[kKey] = "1";
  h.fake.sysctl.values["net.ipv4.tcp_rmem"] = "4096\t87380\t6291456";
  CHECK(h.cleanup().clean());
  CHECK(h.fake.sysctl.values[kKey] == "2");
  CHECK(h.fake.sysctl.values["net.ipv4.tcp_rmem"] == "4096\t131072\t6291456");
}

TEST_CASE("shared settings: two labs set one rp_filter, cleaned up in either order, the value found comes back") {
  SUBCASE("a, then b") {
    TwoLabs h;
    REQUIRE(h.run_keep(kLabA).exit_code == 0);  // 2 -> 0
    REQUIRE(h.run_b(kLabB).exit_code == 0);     // 0 -> 1
    auto a = h.cleanup("a");
    REQUIRE(a.undos.size() == 1);
    CHECK(contains(a.undos[0].error, "is 1 now, not the 0 this run wrote (it was 2 before the run)"));
    CHECK(h.fake.sysctl.values[kKey] == "1");  // b's lab still has its value
    CHECK(h.cleanup_b().clean());              // back to what b found: a's 0
    CHECK(h.fake.sysctl.values[kKey] == "0");
    CHECK(h.cleanup("a").clean());  // a's entry stayed: now it puts back 2
    CHECK(h.fake.sysctl.values[kKey] == "2");
  }
  SUBCASE("b, then a") {
    TwoLabs h;
    REQUIRE(h.run_keep(kLabA).exit_code == 0);
    REQUIRE(h.run_b(kLabB).exit_code == 0);
    CHECK(h.cleanup_b().clean());
    CHECK(h.fake.sysctl.values[kKey] == "0");
    CHECK(h.cleanup("a").clean());
    CHECK(h.fake.sysctl.values[kKey] == "2");
  }
}

TEST_CASE("shared settings: an MTU changed since is left, the state the run set is still put back") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .up = false, .mtu = 1500});
  REQUIRE(h.run_keep("steps:\n  - {name: l, link: {dev: eth0, up: true, mtu: 9000}}\n").exit_code == 0);
  h.fake.links.find("", "eth0")->mtu = 1400;
  h.fake.kernel.actions.clear();
  auto c = h.cleanup();
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].error ==
        "the MTU of eth0 is 1400 now, not the 9000 this run set (it was 1500 before the run): changed by somebody "
        "else since, so left as it is");
  CHECK(h.fake.links.find("", "eth0")->mtu == 1400);
  CHECK_FALSE(h.fake.links.find("", "eth0")->up);
  CHECK(h.fake.kernel.commands("links") == Strings{"ip link set eth0 down"});
  h.fake.kernel.actions.clear();
  CHECK_FALSE(h.cleanup().clean());
  CHECK(h.fake.kernel.commands("links").empty());
}

TEST_CASE("shared settings: an entry without the value written (an older journal) restores as before") {
  fakes::Harness h;
  h.fake.sysctl.values[kKey] = "1";
  h.fake.links.add_host_link("", {.name = "eth0", .up = true, .mtu = 1400});
  REQUIRE(h.journal.append(
      {0, "rpf", "sysctl", "", "set net.ipv4.conf.vB.rp_filter back to 2", {{"key", kKey}, {"value", "2"}}}));
  REQUIRE(h.journal.append({0, "l", "link", "", "set the MTU of eth0 back to 1500", {{"dev", "eth0"}, {"mtu", 1500}}}));
  CHECK(h.cleanup().clean());
  CHECK(h.fake.sysctl.values[kKey] == "2");
  CHECK(h.fake.links.find("", "eth0")->mtu == 1500);
}

TEST_CASE("shared settings: an offload feature put back by somebody else already is success, nothing written") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .up = true, .mtu = 1500});
  h.fake.ethtool.devs["eth0"] = {{"rx-gro", {.active = true}}, {"tx-generic-segmentation", {.active = true}}};
  REQUIRE(h.run_keep("steps:\n  - {name: o, offload: {dev: eth0, gro: off, gso: off}}\n").exit_code == 0);
  CHECK(h.journal.pending()[0].args.at("wrote") ==
        nlohmann::json{{"rx-gro", false}, {"tx-generic-segmentation", false}});
  h.fake.ethtool.devs["eth0"]["rx-gro"].active = true;
  h.fake.kernel.actions.clear();
  CHECK(h.cleanup().clean());
  CHECK(h.fake.kernel.commands("ethtool") == Strings{"ethtool -K eth0 tx-generic-segmentation on"});
  CHECK(h.cleanup().undos.empty());
}
