// srpt and srp_login on the model: the target built in LIO's configfs tree
// and taken apart in the order the kernel needs (target port with its ACLs,
// LUN and TPG, the RDMA/CM port, the fabric, the backstore, the backing,
// the mount, the modules), the login waited for and logged out, the
// kernel's refusals of a login as `fail` with its words, what the run did
// not make left alone (a target port before the run, an RDMA/CM port or
// fabric someone else's target uses, a namesake backstore, another login
// under the host number), an interface without an address, bad input at
// FILE:LINE:COL, and what plan prints.

#include <doctest/doctest.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"

using namespace rxerun;
using fakes::position;
using fakes::service_log;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

// The lab of every test: vA (10.10.0.1) and vB (10.10.0.2) up in rxerun's
// namespace, rxe0 over vA and rxe1 over vB, rdma_rxe loaded (by an earlier
// rxe step, in a real lab).
struct SrpHarness : fakes::Harness {
  SrpHarness() {
    fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    fake.links.add_host_link("", {.name = "vB", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    fake.links.addrs[""]["vA"] = {"10.10.0.1/24"};
    fake.links.addrs[""]["vB"] = {"10.10.0.2/24"};
    fake.rdma.devices.push_back({.index = 1, .name = "rxe0", .netdev = "vA"});
    fake.rdma.devices.push_back({.index = 2, .name = "rxe1", .netdev = "vB"});
    for (const char* m : {"rdma_rxe", "ib_uverbs", "ib_core"}) fake.modules.live.insert(m);
  }
  // Every module loaded and configfs mounted, as a host that serves SRP already.
  void serving() {
    for (const auto& [name, deps] : fake.modules.known) fake.modules.live.insert(name);
    REQUIRE(fake.storage.mount_configfs());
    REQUIRE(fake.srp.add_srpt_fabric());
    fake.kernel.actions.clear();
  }
};

std::string lab(const std::string& steps) {
  return "steps:\n" + steps;
}

const std::string kTarget =
    "  - name: target\n"
    "    srpt: {device: rxe0, backing: {null_blk: {size: 64MiB}}}\n";
const std::string kLogin =
    "  - name: initiator\n"
    "    srp_login: {device: rxe1, address: 10.10.0.1}\n";

// The model's rxe GID is fe80::1: the target port's GUID name.
const std::string kPort = "0000:0000:0000:0001";

}  // namespace

TEST_CASE("srpt and srp_login: the target is built, the disk shows, and cleanup takes it all apart in reverse") {
  SrpHarness h;
  h.fake.srp.disks_after = 2;  // the disk shows after the login, as the kernel scans
  auto r = h.run_keep(lab(kTarget + kLogin));
  REQUIRE(r.exit_code == 0);
  const auto& t = step_named(r, "target");
  CHECK(t.facts.at("target") == kPort);
  const std::string tpg_name = t.facts.at("tpg");
  CHECK(tpg_name == t.facts.at("serial"));  // the step's own name: "rxerun-" and its tag
  CHECK(tpg_name.starts_with("rxerun-"));
  CHECK(t.facts.at("backstore") == "iblock_0/rxerun");
  CHECK(t.facts.at("device") == "/dev/rxerun-nullb0");
  CHECK(t.facts.at("rdma_cm_port") == 5555);
  CHECK(t.facts.at("acls") == nlohmann::json::array({"10.10.0.1"}));
  CHECK(t.facts.at("service_guid") == sys::ModelSrp::kServiceGuid);
  const auto& i = step_named(r, "initiator");
  CHECK(i.facts.at("disk") == "/dev/sdb");
  CHECK(i.facts.at("size") == 64 * 1024 * 1024);
  CHECK(i.facts.at("host") == "host2");
  CHECK(i.facts.at("remote_port") == "port-2:1");
  CHECK(i.facts.at("source") == "10.10.0.2");

  auto& srp = h.fake.srp;
  REQUIRE(srp.targets.count(kPort));
  const auto& tpg = srp.targets.at(kPort).tpgs.at(0);
  CHECK(tpg.enabled);
  CHECK(tpg.luns.at(0).backstore == "iblock_0/rxerun");
  CHECK(srp.backstore_dirs.at("iblock_0/rxerun").path == "/dev/rxerun-nullb0");
  CHECK(srp.cm_port == 5555);
  for (const char* m : {"ib_srpt", "ib_srp", "sd_mod", "target_core_iblock", "target_core_user", "null_blk"})
    CHECK_MESSAGE(h.fake.modules.live.count(m), m);
  // The backstore before the target port that exports it, the TPG enabled last.
  const Strings log = service_log(h.fake, "srp");
  CHECK(position(log, "create LIO iblock backstore iblock_0/rxerun on /dev/rxerun-nullb0") <
        position(log, "create SRP target port " + kPort));
  CHECK(position(log, "enable TPG " + tpg_name + " of " + kPort) ==
        position(log, "log in to the SRP target at 10.10.0.1 port 5555") - 1);

  h.fake.kernel.actions.clear();
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(service_log(h.fake, "srp") == Strings{
                                          "log out of SRP remote port port-2:1",
                                          "disable TPG " + tpg_name + " of " + kPort,
                                          "stop letting initiator 10.10.0.1 log in to " + kPort,
                                          "remove LUN 0 of " + kPort,
                                          "remove TPG " + tpg_name + " of " + kPort,
                                          "remove SRP target port " + kPort,
                                          "stop listening on RDMA/CM",
                                          "remove the ib_srpt fabric",
                                          "remove LIO backstore iblock_0/rxerun",
                                      });
  CHECK(srp.targets.empty());
  CHECK(srp.backstore_dirs.empty());
  CHECK(srp.login_hosts.empty());
  CHECK_FALSE(srp.fabric);
  CHECK(h.fake.storage.nullb_dirs.empty());
  CHECK_FALSE(h.fake.storage.configfs_mount_id.has_value());
  for (const char* m : {"ib_srpt", "ib_srp", "sd_mod", "target_core_mod", "target_core_user", "null_blk", "configfs"})
    CHECK_MESSAGE(!h.fake.modules.live.count(m), m);
  CHECK(h.cleanup().undos.empty());  // idempotent: nothing left to do
}

TEST_CASE("srpt: a file backing is a fileio backstore, created with its size and deleted at cleanup") {
  SrpHarness h;
  auto r =
      h.run(lab("  - name: target\n"
                "    srpt: {device: rxe0, backing: {file: {path: /run/srp.img, size: 32MiB}}}\n" +
                kLogin));
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "target").facts.at("backstore") == "fileio_0/rxerun");
  CHECK(step_named(r, "target").facts.at("file_created") == true);
  CHECK(step_named(r, "initiator").facts.at("size") == 32 * 1024 * 1024);
  CHECK(r.cleanup.clean());
  CHECK(h.fake.storage.files.empty());
  CHECK(h.fake.srp.backstore_dirs.empty());
}

TEST_CASE("srp_login: the kernel's refusals are `fail` with its errno and words, and leave nothing") {
  SUBCASE("nobody listens on that RDMA/CM port") {
    SrpHarness h;
    auto r = h.run(lab(kTarget + "  - name: initiator\n"
                                 "    srp_login: {device: rxe1, address: 10.10.0.1, rdma_cm_port: 5556}\n"
                                 "    expect: {outcome: fail, errno: ECONNRESET}\n"));
    CHECK(r.exit_code == 0);
    const auto& s = step_named(r, "initiator");
    CHECK(contains(s.message, "the kernel refused the login to the SRP target at 10.10.0.1:5556"));
    CHECK(contains(join(s.hints, "\n"), "kernel: ib_srp: nobody listens on RDMA/CM port 5556"));
    CHECK(r.cleanup.clean());
    CHECK(h.fake.srp.login_hosts.empty());
  }
  SUBCASE("another target identifier") {
    SrpHarness h;
    auto r = h.run(lab(kTarget + "  - name: initiator\n"
                                 "    srp_login: {device: rxe1, address: 10.10.0.1, target_id: '0x1234'}\n"));
    CHECK(r.exit_code == 1);
    CHECK(contains(join(step_named(r, "initiator").hints, "\n"), "invalid target port identifier"));
  }
  SUBCASE("logged in to that target already") {
    SrpHarness h;
    auto r = h.run(lab(kTarget + kLogin +
                       "  - name: again\n"
                       "    srp_login: {device: rxe1, address: 10.10.0.1}\n"
                       "    expect: {outcome: fail, errno: EEXIST}\n"));
    CHECK(r.exit_code == 0);
    CHECK(r.cleanup.clean());
    CHECK(h.fake.srp.login_hosts.empty());
  }
}

TEST_CASE("srpt and srp_login over IPv6: the ACL in ib_srpt's full form, the source in brackets") {
  SrpHarness h;
  h.fake.links.addrs[""]["vA"] = {"fd00:74::1/64"};
  h.fake.links.addrs[""]["vB"] = {"fd00:74::2/64"};
  auto r = h.run(lab(kTarget + "  - name: initiator\n"
                               "    srp_login: {device: rxe1, address: 'fd00:74::1'}\n"
                               "    expect: {source: 'fd00:74::2'}\n"));
  CHECK(r.exit_code == 0);
  // ib_srpt names the login by its own end's address, written in full.
  CHECK(step_named(r, "target").facts["acls"] == nlohmann::json::array({"fd00:0074:0000:0000:0000:0000:0000:0001"}));
  CHECK(contains(join(h.fake.kernel.commands("srp"), "\n"), "dest=[fd00:74::1]:5555,src=[fd00:74::2]"));
  CHECK(r.cleanup.clean());
  CHECK(sys::srpt_login_name("10.0.0.1") == "10.0.0.1");
  CHECK(sys::srpt_login_name("::1") == "0000:0000:0000:0000:0000:0000:0000:0001");
}

TEST_CASE("srpt: with a siw device in another namespace the kernel cannot listen, and the error says why") {
  const std::string target =
      "  - name: target\n"
      "    srpt: {device: siw0, backing: {null_blk: {size: 64MiB}}}\n";
  auto siw_lab = [](SrpHarness& h, const std::string& netns_b) {
    h.fake.modules.live.insert("siw");
    if (!netns_b.empty()) {  // vB moved there, as a veth's peer
      h.fake.netns.existing.insert(netns_b);
      h.fake.links.add_host_link(netns_b, {.name = "vB", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    }
    h.fake.rdma.devices = {{.index = 1, .name = "siw0", .netdev = "vA", .type = sys::kSiwType},
                           {.index = 2, .name = "siw1", .netns = netns_b, .netdev = "vB", .type = sys::kSiwType}};
  };
  SrpHarness h;
  siw_lab(h, "nsb");
  auto r = h.run(lab(target));
  CHECK(r.exit_code == 3);
  const std::string message = step_named(r, "target").message;
  CHECK(contains(message, "could not listen for SRP logins on RDMA/CM port 5555"));
  CHECK(contains(message, "a siw device is in another network namespace"));
  CHECK(position(service_log(h.fake, "srp"), "listen for SRP logins on RDMA/CM port 5555") == -1);
  CHECK(r.cleanup.clean());
  CHECK(h.fake.srp.targets.empty());
  // Both in one namespace, as on the forced wire: it listens.
  SrpHarness one;
  siw_lab(one, "");
  CHECK(one.run(lab(target)).exit_code == 0);
}

TEST_CASE("srpt: a target port of that name before the run is a clear error, and nothing is changed") {
  SrpHarness h;
  h.serving();
  auto& srp = h.fake.srp;
  REQUIRE(srp.add_srpt_target(kPort));
  h.fake.kernel.actions.clear();
  auto t = h.run(lab(kTarget));
  CHECK(t.exit_code == 3);
  CHECK(contains(step_named(t, "target").message, "SRP target port " + kPort + " (of rxe0) exists already"));
  CHECK(h.fake.kernel.changes().empty());
  CHECK(srp.targets.count(kPort));
}

TEST_CASE("srpt: an RDMA/CM port and a fabric another target uses stay at cleanup, and another port is an error") {
  SrpHarness h;
  h.serving();
  auto& srp = h.fake.srp;
  REQUIRE(srp.add_srpt_target("0xfe800000000000000000000000000001"));  // the GID name: someone else's
  SUBCASE("the same port: shared, and left") {
    REQUIRE(srp.set_rdma_cm_port(5555));
    auto r = h.run(lab(kTarget));
    REQUIRE(r.exit_code == 0);
    CHECK(r.cleanup.clean());
    CHECK(srp.fabric);
    CHECK(srp.cm_port == 5555);
    CHECK(srp.targets.count("0xfe800000000000000000000000000001"));
    CHECK_FALSE(srp.targets.count(kPort));
  }
  SUBCASE("another port") {
    REQUIRE(srp.set_rdma_cm_port(7000));
    auto r = h.run(lab(kTarget));
    CHECK(r.exit_code == 3);
    CHECK(contains(step_named(r, "target").message, "listens for RDMA/CM logins on port 7000 already"));
    CHECK(srp.cm_port == 7000);
  }
  SUBCASE("set by this run, kept while the other target is there, and said at a revert") {
    auto r = h.run(lab(kTarget + "  - {name: lift, revert: target}\n"));
    REQUIRE(r.exit_code == 0);
    const std::string said = step_named(r, "lift").facts.dump();
    CHECK(contains(said, "RDMA/CM port 5555 (0xfe800000000000000000000000000001 still serves on it)"));
    CHECK(r.cleanup.clean());
    CHECK(srp.cm_port == 5555);
    CHECK(srp.fabric);
  }
}

TEST_CASE("srpt and srp_login: what is another one than the run made is left alone at cleanup") {
  SUBCASE("a namesake backstore") {
    SrpHarness h;
    auto r = h.run_keep(lab(kTarget));
    REQUIRE(r.exit_code == 0);
    h.fake.srp.backstore_dirs.at("iblock_0/rxerun").serial = "someone-else";
    auto c = h.cleanup();
    CHECK_FALSE(c.clean());
    bool reported = false;
    for (const auto& u : c.undos) reported = reported || contains(u.error, "is another one than this run made");
    CHECK(reported);
    CHECK(h.fake.srp.backstore_dirs.count("iblock_0/rxerun"));
  }
  SUBCASE("an empty HBA of someone else's: the backstore goes into the next one, and the empty one stays") {
    SrpHarness h;
    h.serving();
    h.fake.srp.empty_hbas.insert("iblock_0");
    auto r = h.run(lab(kTarget));
    REQUIRE(r.exit_code == 0);
    CHECK(step_named(r, "target").facts.at("backstore") == "iblock_1/rxerun");
    CHECK(r.cleanup.clean());
    CHECK(*h.fake.srp.hbas() == Strings{"iblock_0"});
  }
  SUBCASE("another TPG in the run's target port: the port stays, with it") {
    SrpHarness h;
    auto r = h.run_keep(lab(kTarget));
    REQUIRE(r.exit_code == 0);
    REQUIRE(h.fake.srp.add_tpg(kPort, "tpg_1"));
    auto c = h.cleanup();
    CHECK(c.clean());
    REQUIRE(h.fake.srp.targets.count(kPort));
    REQUIRE(h.fake.srp.targets.at(kPort).tpgs.size() == 1);
    CHECK(h.fake.srp.targets.at(kPort).tpgs.front().name == "tpg_1");
  }
  SUBCASE("another login under the host number") {
    SrpHarness h;
    auto r = h.run_keep(lab(kTarget + kLogin));
    REQUIRE(r.exit_code == 0);
    h.fake.srp.login_hosts.at(2).device = "rxe0";
    auto c = h.cleanup();
    CHECK_FALSE(c.clean());
    CHECK(h.fake.srp.login_hosts.count(2));
  }
}

TEST_CASE("srpt and srp_login: an interface without an address is an error that says what to give") {
  SrpHarness h;
  SUBCASE("the target's") {
    h.fake.links.addrs[""]["vA"].clear();
    auto r = h.run(lab(kTarget));
    CHECK(r.exit_code == 3);
    CHECK(contains(step_named(r, "target").message, "vA (under rxe0) has no address: RDMA/CM logins need one"));
    CHECK(r.cleanup.clean());
  }
  SUBCASE("the initiator's, where no source is given") {
    h.fake.links.addrs[""]["vB"].clear();
    auto r = h.run(lab(kTarget + kLogin));
    CHECK(r.exit_code == 3);
    CHECK(contains(step_named(r, "initiator").message, "vB (under rxe1) has no address to log in from: give source"));
    CHECK(r.cleanup.clean());
  }
  CHECK(h.fake.srp.targets.empty());
  CHECK(h.fake.srp.login_hosts.empty());
}

TEST_CASE("srpt: in a network namespace it is an error before anything changes") {
  SrpHarness h;
  h.fake.netns.existing.insert("lab");
  auto r =
      h.run(lab("  - name: target\n"
                "    srpt: {device: rxe0, backing: {null_blk: {size: 64MiB}}}\n"
                "    netns: lab\n"));
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "target").message, "initial network namespace only"));
  CHECK(h.fake.kernel.changes().empty());
}

TEST_CASE("srpt and srp_login: bad input is refused at FILE:LINE:COL") {
  SrpHarness h;
  CHECK(h.first_diagnostic("steps:\n  - srpt: {device: rxe0, backing: {null_blk: {size: 1536KiB}}}\n") ==
        "test.yaml:2:53: 'backing.null_blk.size' must be a whole number of MiB (null_blk sizes its devices in MiB), "
        "got 1536KiB");
  CHECK(h.first_diagnostic("steps:\n  - srpt: {device: rxe0, backing: {}}\n") ==
        "test.yaml:2:35: 'backing' takes one backing: file: {path, size} or null_blk: {size}");
  CHECK(h.first_diagnostic("steps:\n  - srp_login: {device: rxe1, address: 10.0.0.1, target_id: nope}\n") ==
        "test.yaml:2:61: 'target_id' must be a GUID in hex, as ib_srpt's srpt_service_guid reads: "
        "0x505400fffe123401");
  CHECK(contains(h.diagnostics("steps:\n  - srp_login: {device: rxe1, address: 10.0.0.1, rdma_cm_port: 0}\n"),
                 "test.yaml:2:64: 'rdma_cm_port' must be >= 1, got 0"));
}

TEST_CASE("srpt and srp_login: plan shows the configfs and sysfs commands a person would type") {
  SrpHarness h;
  // A plan's world is open and starts empty: the lab makes its devices.
  auto p =
      h.plan_run(lab("  - veth: {name: vA, peer: vB}\n"
                     "  - address: {dev: vA, cidr: 10.10.0.1/24}\n"
                     "  - address: {dev: vB, cidr: 10.10.0.2/24}\n"
                     "  - rxe: {name: rxe0, netdev: vA}\n"
                     "  - rxe: {name: rxe1, netdev: vB}\n" +
                     kTarget + kLogin));
  std::vector<std::string> shells;
  for (const auto& a : p.actions) shells.push_back(a.shell);
  const std::string all = join(shells, "\n");
  CHECK(contains(all, "mkdir -p /sys/kernel/config/target/core/iblock_0/rxerun"));
  CHECK(contains(all, "echo udev_path=/dev/rxerun-nullb0 > /sys/kernel/config/target/core/iblock_0/rxerun/control"));
  CHECK(contains(all, "echo 5555 > /sys/kernel/config/target/srpt/discovery_auth/rdma_cm_port"));
  CHECK(contains(all, "ln -s /sys/kernel/config/target/core/iblock_0/rxerun"));
  CHECK(contains(all, "/sys/class/infiniband_srp/srp-rxe1-1/add_target"));
  CHECK(all.find("echo 1 > /sys/class/srp_remote_ports/port-2:1/delete") <
        all.find("rmdir /sys/kernel/config/target/srpt\n"));
  CHECK(p.actions.size() > 30);
}
