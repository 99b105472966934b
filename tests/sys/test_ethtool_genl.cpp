// GenlEthtool and the offload step on a real veth, as root, inside a
// throwaway network namespace; `ethtool -k` is the independent observer.

#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "support/privileged.h"
#include "support/real_harness.h"
#include "support/shell.h"
#include "sys/ethtool_genl.h"

using namespace rxerun;
using rxerun::testing::command_output;
using rxerun::testing::RealHarness;
using rxerun::testing::step_named;
using rxerun::testing::ThrowawayNetns;

namespace {

// A veth pair made the way a person would, as a fixture; the namespace takes it along.
void make_veth() {
  REQUIRE(std::system("ip link add vA type veth peer name vB") == 0);
  REQUIRE(std::system("ip link set vA up && ip link set vB up") == 0);
}

struct Observed {
  bool on = false;
  bool fixed = false;
};

// `ethtool -k DEV`: "name: on [fixed]" per line, tab-indented group members included.
std::map<std::string, Observed> ethtool_k(const std::string& dev) {
  std::map<std::string, Observed> out;
  std::istringstream in(command_output("ethtool -k " + dev));
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos || line.rfind("Features for", 0) == 0) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(" \t"));
    const std::string rest = line.substr(colon + 2);
    out[name] = {rest.rfind("on", 0) == 0, rest.find("[fixed]") != std::string::npos};
  }
  return out;
}

// What ethtool prints under its long name when a group has one member.
const std::map<std::string, std::string> kLongNames = {
    {"rx-gro", "generic-receive-offload"},   {"tx-generic-segmentation", "generic-segmentation-offload"},
    {"rx-lro", "large-receive-offload"},     {"rx-checksum", "rx-checksumming"},
    {"rx-vlan-hw-parse", "rx-vlan-offload"}, {"tx-vlan-hw-insert", "tx-vlan-offload"},
    {"rx-ntuple-filter", "ntuple-filters"},  {"rx-hashing", "receive-hashing"},
};

Observed observed(const std::map<std::string, Observed>& k, const std::string& feature) {
  if (auto it = k.find(feature); it != k.end()) return it->second;
  if (auto l = kLongNames.find(feature); l != kLongNames.end())
    if (auto it = k.find(l->second); it != k.end()) return it->second;
  FAIL("ethtool -k does not show " << feature);
  return {};
}

// A generic netlink message of the ethtool family, built as the kernel does.
struct Message {
  std::unique_ptr<nl_msg, void (*)(nl_msg*)> msg{nlmsg_alloc(), nlmsg_free};
  explicit Message(std::uint8_t cmd) {
    REQUIRE(msg);
    REQUIRE(genlmsg_put(msg.get(), 0, 1, 42, 0, 0, cmd, ETHTOOL_GENL_VERSION));
    nlattr* hdr = nla_nest_start(msg.get(), ETHTOOL_A_FEATURES_HEADER | NLA_F_NESTED);
    REQUIRE(nla_put_string(msg.get(), ETHTOOL_A_HEADER_DEV_NAME, "vB") == 0);
    nla_nest_end(msg.get(), hdr);
  }
  // A compact bitset: SIZE bits, VALUE and MASK words (no MASK: NOMASK).
  void compact(int attr, std::uint32_t size, std::vector<std::uint32_t> value, std::vector<std::uint32_t> mask) {
    nlattr* set = nla_nest_start(msg.get(), attr | NLA_F_NESTED);
    REQUIRE(nla_put_u32(msg.get(), ETHTOOL_A_BITSET_SIZE, size) == 0);
    if (mask.empty()) REQUIRE(nla_put_flag(msg.get(), ETHTOOL_A_BITSET_NOMASK) == 0);
    REQUIRE(nla_put(msg.get(), ETHTOOL_A_BITSET_VALUE, static_cast<int>(value.size() * 4), value.data()) == 0);
    if (!mask.empty())
      REQUIRE(nla_put(msg.get(), ETHTOOL_A_BITSET_MASK, static_cast<int>(mask.size() * 4), mask.data()) == 0);
    nla_nest_end(msg.get(), set);
  }
  // A verbose bitset (no NOMASK): bits by name or by index, with their values.
  void verbose(int attr, const std::vector<std::pair<std::string, bool>>& by_name,
               const std::vector<std::pair<std::uint32_t, bool>>& by_index) {
    nlattr* set = nla_nest_start(msg.get(), attr | NLA_F_NESTED);
    nlattr* bits = nla_nest_start(msg.get(), ETHTOOL_A_BITSET_BITS | NLA_F_NESTED);
    for (const auto& [name, on] : by_name) {
      nlattr* bit = nla_nest_start(msg.get(), ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
      REQUIRE(nla_put_string(msg.get(), ETHTOOL_A_BITSET_BIT_NAME, name.c_str()) == 0);
      if (on) REQUIRE(nla_put_flag(msg.get(), ETHTOOL_A_BITSET_BIT_VALUE) == 0);
      nla_nest_end(msg.get(), bit);
    }
    for (const auto& [index, on] : by_index) {
      nlattr* bit = nla_nest_start(msg.get(), ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
      REQUIRE(nla_put_u32(msg.get(), ETHTOOL_A_BITSET_BIT_INDEX, index) == 0);
      if (on) REQUIRE(nla_put_flag(msg.get(), ETHTOOL_A_BITSET_BIT_VALUE) == 0);
      nla_nest_end(msg.get(), bit);
    }
    nla_nest_end(msg.get(), bits);
    nla_nest_end(msg.get(), set);
  }
  nlmsghdr* hdr() { return nlmsg_hdr(msg.get()); }
};

// Bit 33 makes the bitsets two words long, as the kernel's are.
std::vector<std::string> feature_table() {
  std::vector<std::string> names(34);
  names[0] = "tx-scatter-gather";
  names[1] = "tx-checksum-ip-generic";
  names[2] = "";  // a bit the kernel has no name for
  names[16] = "tx-tcp-segmentation";
  names[20] = "rx-gro";
  names[33] = "rx-gro-list";
  return names;
}

using Bits = std::map<std::string, bool>;

}  // namespace

TEST_CASE("sys.ethtool_genl: a FEATURES_SET reply: refused and changed features, compact") {
  Message m(ETHTOOL_MSG_FEATURES_SET_REPLY);
  // Asked for rx-gro on and rx-gro-list on; rx-gro-list stayed off.
  m.compact(ETHTOOL_A_FEATURES_WANTED, 34, {0, 1u << 1}, {0, 1u << 1});
  // Changed: tx-checksum-ip-generic and, with it, tx-tcp-segmentation off;
  // rx-gro on. Bit 2, nameless, changed too and is left out.
  m.compact(ETHTOOL_A_FEATURES_ACTIVE, 34, {1u << 20, 0}, {(1u << 1) | (1u << 2) | (1u << 16) | (1u << 20), 0});
  auto r = sys::parse_features_set_reply(m.hdr(), feature_table());
  REQUIRE(r);
  CHECK(r->refused == Bits{{"rx-gro-list", true}});
  CHECK(r->changed == Bits{{"tx-checksum-ip-generic", false}, {"tx-tcp-segmentation", false}, {"rx-gro", true}});
}

TEST_CASE("sys.ethtool_genl: a FEATURES_SET reply: empty, verbose, and not a reply") {
  {
    // Everything as asked, nothing changed: both bitsets empty.
    Message m(ETHTOOL_MSG_FEATURES_SET_REPLY);
    m.compact(ETHTOOL_A_FEATURES_WANTED, 34, {0, 0}, {0, 0});
    m.compact(ETHTOOL_A_FEATURES_ACTIVE, 34, {0, 0}, {0, 0});
    auto r = sys::parse_features_set_reply(m.hdr(), feature_table());
    REQUIRE(r);
    CHECK(r->refused.empty());
    CHECK(r->changed.empty());
  }
  {
    // Without ETHTOOL_FLAG_COMPACT_BITSETS: one nest per bit, by name or index.
    Message m(ETHTOOL_MSG_FEATURES_SET_REPLY);
    m.verbose(ETHTOOL_A_FEATURES_WANTED, {}, {});
    m.verbose(ETHTOOL_A_FEATURES_ACTIVE, {{"rx-gro", false}, {"tx-new-feature", true}}, {{16, true}});
    auto r = sys::parse_features_set_reply(m.hdr(), feature_table());
    REQUIRE(r);
    CHECK(r->refused.empty());
    CHECK(r->changed == Bits{{"rx-gro", false}, {"tx-new-feature", true}, {"tx-tcp-segmentation", true}});
  }
  {
    // A bitset with NOMASK lists the bits that are set.
    Message m(ETHTOOL_MSG_FEATURES_SET_REPLY);
    m.compact(ETHTOOL_A_FEATURES_ACTIVE, 34, {1u << 0, 1u << 1}, {});
    auto r = sys::parse_features_set_reply(m.hdr(), feature_table());
    REQUIRE(r);
    CHECK(r->changed == Bits{{"tx-scatter-gather", true}, {"rx-gro-list", true}});
  }
  Message get(ETHTOOL_MSG_FEATURES_GET_REPLY);
  CHECK_FALSE(sys::parse_features_set_reply(get.hdr(), feature_table()));
  // Too short to hold a generic netlink header.
  nlmsghdr bare{.nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = 42, .nlmsg_flags = 0, .nlmsg_seq = 1, .nlmsg_pid = 0};
  CHECK_FALSE(sys::parse_features_set_reply(&bare, feature_table()));
}

TEST_CASE("sys.ethtool_genl: features agree with ethtool -k") {
  ThrowawayNetns ns;
  make_veth();
  sys::GenlEthtool ethtool;
  auto features = ethtool.features("vB");
  REQUIRE_MESSAGE(features, features.error().message);
  const auto k = ethtool_k("vB");
  int compared = 0;
  for (const char* name :
       {"rx-gro", "tx-generic-segmentation", "tx-tcp-segmentation", "tx-tcp6-segmentation", "tx-scatter-gather",
        "rx-lro", "tx-checksum-fcoe-crc", "rx-gro-hw", "rx-gro-list", "tx-vlan-stag-hw-insert", "rx-checksum"}) {
    CAPTURE(name);
    REQUIRE(features->count(name));
    const Observed o = observed(k, name);
    CHECK(features->at(name).active == o.on);
    CHECK(features->at(name).fixed == o.fixed);
    ++compared;
  }
  // Every feature ethtool prints under its kernel name agrees too.
  for (const auto& [name, o] : k) {
    auto it = features->find(name);
    if (it == features->end()) continue;
    CAPTURE(name);
    CHECK(it->second.active == o.on);
    CHECK(it->second.fixed == o.fixed);
    ++compared;
  }
  CHECK(compared > 20);
}

TEST_CASE("sys.ethtool_genl: set_features changes only the named features") {
  ThrowawayNetns ns;
  make_veth();
  sys::GenlEthtool ethtool;
  const auto before = ethtool_k("vB");
  REQUIRE(observed(before, "tx-generic-segmentation").on);

  auto r = ethtool.set_features("vB", {{"tx-generic-segmentation", false}, {"tx-tcp-segmentation", false}});
  REQUIRE_MESSAGE(r, r.error().message);
  auto mid = ethtool_k("vB");
  CHECK(!observed(mid, "tx-generic-segmentation").on);
  CHECK(!mid.at("tx-tcp-segmentation").on);
  CHECK(observed(mid, "tx-scatter-gather").on == observed(before, "tx-scatter-gather").on);
  CHECK(observed(mid, "rx-gro").on == observed(before, "rx-gro").on);

  r = ethtool.set_features("vB", {{"tx-generic-segmentation", true}, {"tx-tcp-segmentation", true}});
  REQUIRE_MESSAGE(r, r.error().message);
  auto after = ethtool_k("vB");
  for (const auto& [name, o] : before) {
    CAPTURE(name);
    CHECK(after.at(name).on == o.on);
  }
}

TEST_CASE("sys.ethtool_genl: set_features returns what changed, also features that followed") {
  ThrowawayNetns ns;
  make_veth();
  sys::GenlEthtool ethtool;
  auto before = ethtool.features("vB");
  REQUIRE(before);
  REQUIRE(before->at("tx-scatter-gather").active);
  REQUIRE(before->at("tx-tcp-segmentation").active);
  // Without scatter-gather the kernel drops TSO as well (netdev_fix_features).
  auto changed = ethtool.set_features("vB", {{"tx-scatter-gather", false}});
  REQUIRE_MESSAGE(changed, changed.error().message);
  auto now = ethtool.features("vB");
  REQUIRE(now);
  std::map<std::string, bool> expected;
  for (const auto& [name, f] : *now)
    if (f.active != before->at(name).active) expected[name] = f.active;
  CHECK(*changed == expected);
  CHECK(changed->at("tx-scatter-gather") == false);
  CHECK(changed->at("tx-tcp-segmentation") == false);

  // Nothing to change: nothing changed.
  auto same = ethtool.set_features("vB", {{"tx-scatter-gather", false}});
  REQUIRE(same);
  CHECK(same->empty());
}

TEST_CASE("sys.ethtool_genl: the offload step reports features that followed another") {
  ThrowawayNetns ns;
  make_veth();
  const std::string before = command_output("ethtool -k vB");
  RealHarness rr;
  // tx-tcp-segmentation is on already, so the step leaves it out of its
  // request; the kernel turns it off with scatter-gather (no SG, no TSO).
  auto r = rr.run_keep("steps:\n  - {name: s, offload: {dev: vB, sg: off, tx-tcp-segmentation: on}}\n");
  const auto& s = step_named(r, "s");
  CHECK_MESSAGE(r.exit_code == 0, s.message);
  CHECK(s.facts.at("sg.after") == "off");
  CHECK(s.facts.at("tx-tcp-segmentation.before") == "on");
  const auto k = ethtool_k("vB");
  CHECK(!k.at("tx-tcp-segmentation").on);
  CHECK(s.facts.at("tx-tcp-segmentation.after") == "off");
  CHECK(rr.cleanup().clean());
  CHECK(command_output("ethtool -k vB") == before);
}

TEST_CASE("sys.ethtool_genl: a fixed feature is reported as not changed") {
  ThrowawayNetns ns;
  make_veth();
  sys::GenlEthtool ethtool;
  auto features = ethtool.features("vB");
  REQUIRE(features);
  REQUIRE(features->at("tx-checksum-fcoe-crc").fixed);
  REQUIRE(!features->at("tx-checksum-fcoe-crc").active);
  auto r = ethtool.set_features("vB", {{"tx-checksum-fcoe-crc", true}});
  REQUIRE(!r);
  CHECK(r.error().message.find("tx-checksum-fcoe-crc on") != std::string::npos);
  CHECK(r.error().message.find("vB") != std::string::npos);
}

TEST_CASE("sys.ethtool_genl: errors name the interface and carry the kernel's words") {
  ThrowawayNetns ns;
  make_veth();
  sys::GenlEthtool ethtool;
  auto missing = ethtool.features("nosuch0");
  REQUIRE(!missing);
  CHECK(missing.error().code == ENODEV);
  CHECK(missing.error().message.find("no interface nosuch0") != std::string::npos);

  auto unknown = ethtool.set_features("vB", {{"no-such-feature", false}});
  REQUIRE(!unknown);
  CHECK(unknown.error().code == EOPNOTSUPP);
  CHECK(unknown.error().message.find("no-such-feature off on vB") != std::string::npos);
  CHECK(unknown.error().message.find("not found") != std::string::npos);  // extended ACK: "bit name not found"
}

TEST_CASE("sys.ethtool_genl: the offload step turns gro gso tso off, is idempotent, and cleanup restores") {
  ThrowawayNetns ns;
  make_veth();
  REQUIRE(std::system("ethtool -K vB gro on") == 0);  // a veth starts with gro off on recent kernels
  const std::string before = command_output("ethtool -k vB");
  RealHarness rr;
  auto r = rr.run_keep(
      "steps:\n"
      "  - {name: off, offload: {dev: vB, gro: off, gso: off, tso: off}}\n"
      "  - {name: again, offload: {dev: vB, gro: off, gso: off, tso: off}}\n");
  const auto& off = step_named(r, "off");
  CHECK_MESSAGE(r.exit_code == 0, off.message);
  CHECK(off.facts.at("gro.before") == "on");
  CHECK(off.facts.at("gro.after") == "off");
  CHECK(off.facts.at("gso.after") == "off");
  CHECK(off.facts.at("tso.after") == "off");
  CHECK(off.facts.at("changed") == true);
  CHECK(step_named(r, "again").facts.at("changed") == false);

  auto k = ethtool_k("vB");
  CHECK(!observed(k, "rx-gro").on);
  CHECK(!observed(k, "tx-generic-segmentation").on);
  CHECK(!k.at("tx-tcp-segmentation").on);
  CHECK(!k.at("tx-tcp6-segmentation").on);
  CHECK(!k.at("tcp-segmentation-offload").on);
  REQUIRE(rr.journal.pending().size() == 1);

  auto c = rr.cleanup();
  CHECK(c.clean());
  CHECK(rr.journal.pending().empty());
  CHECK(command_output("ethtool -k vB") == before);  // no residue
  CHECK(rr.cleanup().undos.empty());
}

TEST_CASE("sys.ethtool_genl: the offload step restores the values found, not defaults") {
  ThrowawayNetns ns;
  make_veth();
  REQUIRE(std::system("ethtool -K vB gro off") == 0);
  const std::string before = command_output("ethtool -k vB");
  RealHarness rr;
  auto r = rr.run("steps:\n  - {name: on, offload: {dev: vB, gro: on, gso: off}}\n");
  CHECK_MESSAGE(r.exit_code == 0, step_named(r, "on").message);
  CHECK(step_named(r, "on").facts.at("gro.before") == "off");
  CHECK(step_named(r, "on").facts.at("gro.after") == "on");
  CHECK(r.cleanup.clean());
  CHECK(command_output("ethtool -k vB") == before);
}

TEST_CASE("sys.ethtool_genl: the offload step refuses a fixed feature and names it") {
  ThrowawayNetns ns;
  make_veth();
  const std::string before = command_output("ethtool -k vB");
  RealHarness rr;
  auto r = rr.run("steps:\n  - {name: s, offload: {dev: vB, gro: off, rx-gro-hw: on}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "s").message.find("rx-gro-hw is fixed") != std::string::npos);
  CHECK(command_output("ethtool -k vB") == before);
}
