// Every undo checks what it reads from the journal with the loader's own
// validators before it acts: an entry another version wrote, or a hand
// edited, that holds a value no scenario could (or lacks one, or has the
// wrong type) fails that undo with a message naming the step and the value,
// touches nothing, and the other entries are still undone.

#include <doctest/doctest.h>

#include <algorithm>

#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using Strings = std::vector<std::string>;

namespace {

using Json = nlohmann::json;

struct Case {
  const char* kind;
  Json args;
  const char* message;  // the undo's error
};

// A good entry beside each bad one: an address to remove from eth0.
struct UndoRevalidationHarness : fakes::Harness {
  UndoRevalidationHarness() {
    fake.links.add_host_link("", {.name = "eth0", .up = true, .mtu = 1500});
    fake.links.addrs[""]["eth0"] = {"10.9.0.1/24"};
    fake.sysctl.values["kernel.hostname"] = "host";
    fake.sysctl.values["net.ipv4.ip_forward"] = "1";
    fake.ethtool.devs["eth0"] = {{"rx-gro", {.active = false}}};
  }
};

Strings changes(fakes::FakeSystem& f) {
  return f.kernel.changes();
}

const Json kRoute = {{"family", "inet"}, {"dst", "10.2.0.0/24"}, {"dev", "eth0"}, {"via", ""}, {"src", ""},
                     {"table", 100},     {"metric", 0},          {"scope", 253},  {"type", 1}};
const Json kRule = {{"family", "inet"}, {"pref", 100}, {"from", ""},  {"to", ""},     {"iif", ""},    {"oif", ""},
                    {"fwmark", 0},      {"fwmask", 0}, {"action", 1}, {"table", 100}, {"protocol", 0}};

Json with(Json j, const std::string& key, Json value) {
  j[key] = std::move(value);
  return j;
}

Json without(Json j, const std::string& key) {
  j.erase(key);
  return j;
}

}  // namespace

TEST_CASE("undo re-validation: a value no scenario could hold is not acted on, the other entries are undone") {
  const std::vector<Case> cases = {
      {"address",
       {{"dev", "eth0 x"}, {"cidr", "10.9.0.1/24"}},
       "journal entry for step bad holds dev: \"eth0 x\", not an interface name (contains whitespace or a control "
       "character): not acting on it"},
      {"address", {{"dev", "eth0"}}, "journal entry for step bad has no cidr: not acting on it"},
      {"address",
       {{"dev", "eth0"}, {"cidr", "10.9.0.1"}},
       "journal entry for step bad holds cidr: \"10.9.0.1\", not an address/prefix (missing '/PREFIX'): not acting "
       "on it"},
      {"address",
       {{"dev", "eth0"}, {"cidr", "10.9.0.1/24"}, {"identity", "eth0"}},
       "journal entry for step bad holds identity: \"eth0\", not an object of indexes and inodes: not acting on it"},
      {"address",
       {{"dev", "eth0"}, {"cidr", "10.9.0.1/24"}, {"identity", {{"ifindex", -3}}}},
       "journal entry for step bad holds identity: {\"ifindex\":-3}, not an object of indexes and inodes: not acting "
       "on it"},
      {"veth",
       {{"name", 5}, {"peer", "vA"}, {"peer_netns", ""}},
       "journal entry for step bad holds name: 5, not an interface name: not acting on it"},
      {"veth",
       {{"name", "vB"}, {"peer", "vA"}, {"peer_netns", "../x"}},
       "journal entry for step bad holds peer_netns: \"../x\", not a network namespace name (contains '/'): not "
       "acting on it"},
      {"netns",
       {{"name", ".."}},
       "journal entry for step bad holds name: \"..\", not a network namespace name ('.' and '..' are not namespace "
       "names): not acting on it"},
      {"sysctl",
       {{"key", "kernel.hostname"}, {"value", "evil"}},
       "journal entry for step bad holds key: \"kernel.hostname\", not a key this kind may write (only keys under "
       "net. can be set ('kernel.hostname' is not one): rxerun changes network settings, which a namespace keeps to "
       "itself): not acting on it"},
      {"sysctl",
       {{"key", "net/../../kernel/hostname"}, {"value", "evil"}},
       "journal entry for step bad holds key: \"net/../../kernel/hostname\", not a key this kind may write "
       "('net/../../kernel/hostname' is not a sysctl key: it has an empty, '.' or '..' part): not acting on it"},
      {"sysctl",
       {{"key", "net.ipv4.ip_forward"}, {"value", 0}},
       "journal entry for step bad holds value: 0, not a string: not acting on it"},
      {"link",
       {{"dev", "eth0"}, {"mtu", "big"}},
       "journal entry for step bad holds mtu: \"big\", not a number from 0 to 4294967295: not acting on it"},
      {"link",
       {{"dev", "eth0"}, {"up", true}, {"wrote", {{"up", "yes"}}}},
       "journal entry for step bad holds wrote.up: \"yes\", not true or false: not acting on it"},
      {"offload",
       {{"dev", "eth0"}, {"restore", {{"rx-gro", "on"}}}, {"names", Json::object()}},
       "journal entry for step bad holds restore.rx-gro: \"on\", not true or false: not acting on it"},
      {"netem", Json::object(), "journal entry for step bad has no dev: not acting on it"},
      {"route", with(kRoute, "dst", "10.2.0.0"),
       "journal entry for step bad holds dst: \"10.2.0.0\", not an address/prefix (missing '/PREFIX'): not acting on "
       "it"},
      {"route", with(kRoute, "via", "gateway"),
       "journal entry for step bad holds via: \"gateway\", not an IPv4 or IPv6 address: not acting on it"},
      {"route", without(kRoute, "metric"), "journal entry for step bad has no metric: not acting on it"},
      {"rule",
       {{"op", "delete"}, {"rule", with(kRule, "table", "main")}},
       "journal entry for step bad holds rule.table: \"main\", not a number from 0 to 4294967295: not acting on it"},
      {"rule",
       {{"op", "flush"}, {"rule", kRule}},
       "journal entry for step bad holds op: \"flush\", not delete or add: not acting on it"},
      {"rxe",
       {{"modules", {"rdma_rxe", "../evil"}}},
       "journal entry for step bad holds modules: [\"rdma_rxe\",\"../evil\"], not a list of kernel module names: not "
       "acting on it"},
      {"rxe",
       {{"name", "rxe0"}, {"netdev", ""}},
       "journal entry for step bad holds netdev: \"\", not an interface name (an interface name cannot be empty): not "
       "acting on it"},
      {"block",
       {{"family", "inet"}, {"table", "filter"}, {"chain", "input"}, {"comment", "rxerun step x"}},
       "journal entry for step bad holds table: \"filter\", not this scenario's table, rxerun-test: not acting on it"},
      {"block",
       {{"family", "inet"}, {"table", "rxerun-test"}, {"chain", "prerouting"}, {"comment", "rxerun step x"}},
       "journal entry for step bad holds chain: \"prerouting\", not input, output or forward: not acting on it"},
      {"block",
       {{"family", "inet"}, {"table", "rxerun-test"}, {"chain", "input"}, {"comment", "x\" ; flush ruleset"}},
       "journal entry for step bad holds comment: \"x\\\" ; flush ruleset\", not a comment this kind writes (rxerun "
       "step NAME): not acting on it"},
      {"nvmet",
       {{"subsystem", "nqn.a/../b"}},
       "journal entry for step bad holds subsystem: \"nqn.a/../b\", not an NQN: not acting on it"},
      {"nvmet",
       {{"file", "lab.img"}},
       "journal entry for step bad holds file: \"lab.img\", not an absolute path: not acting on it"},
      {"nvmet",
       {{"null_blk", "sda"}},
       "journal entry for step bad holds null_blk: \"sda\", not a null_blk device name of rxerun's: not acting on it"},
      {"nvmet",
       {{"port", 70000}, {"transport", "rdma"}, {"address", "10.0.0.1"}, {"service", "4420"}},
       "journal entry for step bad holds port: 70000, not a number from 0 to 65535: not acting on it"},
      {"nvmet",
       {{"configfs_mount", "/"}},
       "journal entry for step bad holds configfs_mount: \"/\", not /sys/kernel/config: not acting on it"},
      {"nvmet",
       {{"modules", {"nvmet", "../evil"}}},
       "journal entry for step bad holds modules: [\"nvmet\",\"../evil\"], not a list of kernel module names: not "
       "acting on it"},
      {"nvmet",
       {{"bogus", 1}},
       "journal entry for step bad holds {\"bogus\":1}, not an nvmet change (port_link, port, namespace, "
       "allowed_host, host, subsystem, null_blk, file, configfs_mount or modules): not acting on it"},
      {"nvme_connect",
       {{"controller", "nqn.x"}, {"transport", "tcp"}, {"address", "10.0.0.1"}, {"service", "4420"}},
       "journal entry for step bad holds transport: \"tcp\", not a transport: rdma: not acting on it"},
      {"nvme_connect",
       {{"controller", "nqn.x"}, {"transport", "rdma"}, {"address", "nowhere"}, {"service", "4420"}},
       "journal entry for step bad holds address: \"nowhere\", not an IPv4 or IPv6 address: not acting on it"},
      {"capture",
       {{"id", 7}, {"file", "x.pcap"}},
       "journal entry for step bad holds id: 7, not a string: not acting on it"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.kind);
    CAPTURE(c.args.dump());
    UndoRevalidationHarness h;
    REQUIRE(h.journal.append(
        {0, "good", "address", "", "remove 10.9.0.1/24 from eth0", {{"dev", "eth0"}, {"cidr", "10.9.0.1/24"}}}));
    REQUIRE(h.journal.append({0, "bad", c.kind, "", "undo something", c.args}));
    auto cleanup = h.cleanup();
    REQUIRE(cleanup.undos.size() == 2);
    const auto& bad = cleanup.undos[0].step == "bad" ? cleanup.undos[0] : cleanup.undos[1];
    const auto& good = cleanup.undos[0].step == "good" ? cleanup.undos[0] : cleanup.undos[1];
    CHECK_FALSE(bad.ok);
    CHECK(bad.error == c.message);
    CHECK(good.ok);
    CHECK(changes(h.fake) == Strings{"ip addr del 10.9.0.1/24 dev eth0"});
    CHECK(h.fake.sysctl.values["kernel.hostname"] == "host");
    REQUIRE(h.journal.pending().size() == 1);  // the bad one stays, for the user to look at
    CHECK(h.journal.pending()[0].step == "bad");
  }
}

TEST_CASE("undo re-validation: a batch of veths with one bad entry deletes the others and names the bad one") {
  fakes::Harness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - {name: p0, veth: {name: b0, peer: a0}}\n"
      "  - {name: p1, veth: {name: b1, peer: a1}}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.journal.append({0, "bad", "veth", "", "delete veth pair", {{"name", "b 2"}, {"peer", "a2"}}}));
  auto c = h.cleanup();
  int failures = 0;
  for (const auto& u : c.undos) {
    if (u.ok) continue;
    ++failures;
    CHECK(u.step == "bad");
    CHECK(u.error ==
          "journal entry for step bad holds name: \"b 2\", not an interface name (contains whitespace or a control "
          "character): not acting on it");
  }
  CHECK(failures == 1);
  CHECK(h.fake.links.links[""].empty());
}
