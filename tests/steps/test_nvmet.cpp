// nvmet: the target on the fake configfs: each piece journalled and taken
// apart in the order the kernel needs (link, port, namespace, hosts,
// subsystem, backing, mount, modules), a second cleanup with nothing to do,
// what it did not make left alone (a namesake subsystem, a file that was
// there, a port someone else offers more on), a subsystem of that NQN or
// a port of the id given before the run as a clear error, the kernel's
// refusals translated, bad input at FILE:LINE:COL, and what plan prints.

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

const std::string kNqn = "nqn.2026-01.io.rxerun:lab";

std::string target(const std::string& ns, const std::string& extra = "") {
  return "steps:\n"
         "  - name: target\n"
         "    nvmet:\n"
         "      nqn: " +
         kNqn +
         "\n"
         "      namespace: " +
         ns +
         "\n"
         "      port: {address: 10.10.0.1}\n" +
         extra;
}

const std::string kNullBlk = target("{null_blk: {size: 64MiB}}");
const std::string kFile = target("{file: {path: /run/lab.img, size: 32MiB}}");

std::vector<std::string> summaries(const CleanupReport& c) {
  std::vector<std::string> out;
  for (const auto& u : c.undos) out.push_back(u.summary);
  return out;
}

// The first diagnostic, without the newline that ends each.
}  // namespace

TEST_CASE("nvmet: builds the target on null_blk, and cleanup takes it apart in reverse, then has nothing to do") {
  fakes::Harness h;
  auto r = h.run_keep(kNullBlk);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "target");
  CHECK(s.facts.at("nqn") == kNqn);
  CHECK(s.facts.at("nsid") == 1);
  CHECK(s.facts.at("port_id") == 1);
  CHECK(s.facts.at("port_created") == true);
  CHECK(s.facts.at("device") == "/dev/rxerun-nullb0");
  CHECK(s.facts.at("size") == 64 * 1024 * 1024);
  CHECK(s.facts.at("buffered_io") == false);
  auto& nvme = h.fake.nvme;
  CHECK(h.fake.storage.configfs_mount_id.has_value());  // mounted by the step
  REQUIRE(nvme.subsys_dirs.count(kNqn));
  CHECK(nvme.subsys_dirs.at(kNqn).allow_any_host);
  CHECK(nvme.subsys_dirs.at(kNqn).namespaces.at(1).enabled);
  CHECK(nvme.subsys_dirs.at(kNqn).namespaces.at(1).device_path == "/dev/rxerun-nullb0");
  CHECK(nvme.port_dirs.at(1).adrfam == "ipv4");
  CHECK(nvme.port_dirs.at(1).subsystems == Strings{kNqn});
  CHECK(h.fake.storage.nullb_dirs.at("rxerun-nullb0").size_mib == 64);
  CHECK(h.fake.modules.live.count("nvmet_rdma"));
  CHECK(h.fake.modules.live.count("null_blk"));

  // Each piece was journalled before it was made: the mount first (after
  // configfs itself), the link last.
  const Strings log = service_log(h.fake, {"storage", "nvme"});
  CHECK(log.front() == "mount configfs on /sys/kernel/config");
  CHECK(log.back() == "offer " + kNqn + " on port 1 (the port listens)");
  CHECK(position(log, "create null_blk device rxerun-nullb0 of 64 MiB, memory-backed") <
        position(log, "create NVMe target subsystem " + kNqn));
  CHECK(position(log, "enable namespace 1 of " + kNqn) < position(log, "create NVMe target port 1"));

  h.fake.kernel.actions.clear();
  auto c = h.cleanup();
  CHECK(c.clean());
  // The module records' words are those of steps/common/modules: checked by what they name.
  const auto undone = summaries(c);
  REQUIRE(undone.size() == 9);
  CHECK(Strings(undone.begin(), undone.begin() + 5) == Strings{
                                                           "withdraw " + kNqn + " from port 1",
                                                           "remove NVMe target port 1",
                                                           "disable and remove namespace 1 of " + kNqn,
                                                           "remove NVMe target subsystem " + kNqn,
                                                           "remove null_blk device rxerun-nullb0",
                                                       });
  CHECK(contains(undone[5], "null_blk"));
  CHECK(contains(undone[6], "nvmet_rdma"));
  CHECK(undone[7] == "unmount configfs from /sys/kernel/config (mounted by this run)");
  CHECK(contains(undone[8], "configfs"));
  CHECK(service_log(h.fake, {"storage", "nvme"}) == Strings{
                                                        "withdraw " + kNqn + " from port 1",
                                                        "remove NVMe target port 1",
                                                        "disable namespace 1 of " + kNqn,
                                                        "remove namespace 1 of " + kNqn,
                                                        "remove NVMe target subsystem " + kNqn,
                                                        "remove null_blk device rxerun-nullb0",
                                                        "unmount configfs from /sys/kernel/config",
                                                    });
  CHECK(nvme.subsys_dirs.empty());
  CHECK(nvme.port_dirs.empty());
  CHECK(h.fake.storage.nullb_dirs.empty());
  CHECK_FALSE(h.fake.storage.configfs_mount_id.has_value());
  CHECK(h.fake.modules.live.empty());
  CHECK(h.cleanup().undos.empty());  // idempotent: nothing left to do
}

TEST_CASE("nvmet: a file backing is created with its size, and deleted at cleanup only by device and inode") {
  SUBCASE("made by the run: deleted") {
    fakes::Harness h;
    auto r = h.run(kFile);
    REQUIRE(r.exit_code == 0);
    CHECK(step_named(r, "target").facts.at("file_created") == true);
    CHECK(step_named(r, "target").facts.at("device") == "/run/lab.img");
    CHECK(std::ranges::count(service_log(h.fake, {"storage", "nvme"}),
                             "create /run/lab.img (33554432 bytes, sparse)") == 1);
    CHECK(r.cleanup.clean());
    CHECK(h.fake.storage.files.empty());
  }
  SUBCASE("there before the run: served as it is and left") {
    fakes::Harness h;
    h.fake.storage.files["/run/lab.img"] = {.dev = 2049, .ino = 77, .size = 1 << 20};
    auto r = h.run(kFile);
    REQUIRE(r.exit_code == 0);
    const auto& s = step_named(r, "target");
    CHECK(s.facts.at("file_created") == false);
    CHECK(s.facts.at("size") == 1 << 20);
    CHECK(contains(join(s.hints, "\n"), "was there already with 1048576 bytes"));
    CHECK(r.cleanup.clean());
    CHECK(h.fake.storage.files.count("/run/lab.img"));
  }
  SUBCASE("replaced by another file under its name since: left alone and reported") {
    fakes::Harness h;
    auto r = h.run_keep(kFile);
    REQUIRE(r.exit_code == 0);
    h.fake.storage.files["/run/lab.img"].ino = 999999;  // deleted and made again by someone
    auto c = h.cleanup();
    CHECK_FALSE(c.clean());
    auto it = std::find_if(c.undos.begin(), c.undos.end(), [](const UndoReport& u) { return !u.ok; });
    REQUIRE(it != c.undos.end());
    CHECK(contains(it->error, "/run/lab.img is another file than the one this run created"));
    CHECK(h.fake.storage.files.count("/run/lab.img"));
  }
}

TEST_CASE("nvmet: a file system without O_DIRECT makes the namespace buffered, overlayfs is refused") {
  SUBCASE("EINVAL at enable: buffered_io") {
    fakes::Harness h;
    h.fake.kernel.fail("nvme.enable_namespace", EINVAL, kNqn, 1, 1);
    auto r = h.run(kFile);
    REQUIRE(r.exit_code == 0);
    CHECK(step_named(r, "target").facts.at("buffered_io") == true);
    CHECK(position(service_log(h.fake, {"storage", "nvme"}), "read and write it through the page cache") >= 0);
    CHECK(r.cleanup.clean());
  }
  SUBCASE("overlayfs") {
    fakes::Harness h;
    h.fake.storage.file_systems["/tmp/"] = "overlayfs";
    auto r = h.run(target("{file: {path: /tmp/lab.img, size: 32MiB}}"));
    CHECK(r.exit_code == 3);
    CHECK(contains(step_named(r, "target").message, "/tmp/lab.img is on overlayfs"));
    CHECK(h.fake.storage.files.empty());
    CHECK(r.cleanup.clean());
  }
}

TEST_CASE("nvmet: a subsystem of that NQN before the run is a clear error, and nothing is changed") {
  fakes::Harness h;
  for (const auto& [name, deps] : h.fake.modules.known) h.fake.modules.live.insert(name);
  REQUIRE(h.fake.storage.mount_configfs());
  REQUIRE(h.fake.nvme.add_subsystem(kNqn));
  h.fake.kernel.actions.clear();
  auto r = h.run(kNullBlk);
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "target").message, "NVMe target subsystem " + kNqn + " exists already"));
  CHECK(h.fake.kernel.changes().empty());
  CHECK(r.cleanup.undos.empty());
  CHECK(h.fake.nvme.subsys_dirs.count(kNqn));
}

TEST_CASE("nvmet: a namesake subsystem made since is left alone at cleanup") {
  fakes::Harness h;
  auto r = h.run_keep(kNullBlk);
  REQUIRE(r.exit_code == 0);
  // Someone removes the run's target and makes another one under its NQN.
  auto& nvme = h.fake.nvme;
  REQUIRE(nvme.unlink_port(1, kNqn));
  REQUIRE(nvme.remove_port(1));
  REQUIRE(nvme.enable_namespace(kNqn, 1, false));
  REQUIRE(nvme.remove_namespace(kNqn, 1));
  REQUIRE(nvme.remove_subsystem(kNqn));
  REQUIRE(nvme.add_subsystem(kNqn));
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());
  CHECK(nvme.subsys_dirs.count(kNqn));
  bool reported = false;
  for (const auto& u : c.undos)
    reported = reported || contains(u.error, "subsystem " + kNqn + " is another one than this run made");
  CHECK(reported);
}

TEST_CASE("nvmet: hosts are made and allowed, and only those the run made are removed") {
  fakes::Harness h;
  for (const auto& [name, deps] : h.fake.modules.known) h.fake.modules.live.insert(name);
  REQUIRE(h.fake.storage.mount_configfs());
  REQUIRE(h.fake.nvme.add_host("nqn.host:old"));
  auto r = h.run_keep(target("{null_blk: {size: 64MiB}}", "      hosts: [nqn.host:old, nqn.host:new]\n"));
  REQUIRE(r.exit_code == 0);
  const auto& sub = h.fake.nvme.subsys_dirs.at(kNqn);
  CHECK_FALSE(sub.allow_any_host);
  CHECK(sub.allowed_hosts == std::set<std::string>{"nqn.host:old", "nqn.host:new"});
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.fake.nvme.host_dirs == std::set<std::string>{"nqn.host:old"});
  CHECK(position(service_log(h.fake, {"storage", "nvme"}), "stop allowing host nqn.host:new in " + kNqn) <
        position(service_log(h.fake, {"storage", "nvme"}), "remove NVMe target host nqn.host:new"));
  CHECK(position(service_log(h.fake, {"storage", "nvme"}), "remove NVMe target host nqn.host:new") <
        position(service_log(h.fake, {"storage", "nvme"}), "remove NVMe target subsystem " + kNqn));
}

TEST_CASE("nvmet: a port with that address is shared, and stays at cleanup") {
  fakes::Harness h;
  for (const auto& [name, deps] : h.fake.modules.known) h.fake.modules.live.insert(name);
  auto& nvme = h.fake.nvme;
  REQUIRE(h.fake.storage.mount_configfs());
  REQUIRE(nvme.add_subsystem("nqn.other"));
  REQUIRE(nvme.add_port({.id = 7, .trtype = "rdma", .adrfam = "ipv4", .traddr = "10.10.0.1", .trsvcid = "4420"}));
  REQUIRE(nvme.link_port(7, "nqn.other"));
  auto r = h.run(kNullBlk);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "target").facts.at("port_id") == 7);
  CHECK(step_named(r, "target").facts.at("port_created") == false);
  CHECK(r.cleanup.clean());
  REQUIRE(nvme.port_dirs.count(7));
  CHECK(nvme.port_dirs.at(7).subsystems == Strings{"nqn.other"});
  CHECK(h.fake.modules.live.count("nvmet"));  // the other subsystem still needs it
}

TEST_CASE("nvmet: the kernel's refusals of the port are translated, and cleanup removes what was made") {
  SUBCASE("no RDMA device holds the address") {
    fakes::Harness h;
    h.fake.kernel.fail("nvme.link_port", EADDRNOTAVAIL);
    auto r = h.run(kNullBlk);
    CHECK(r.exit_code == 3);
    const auto& s = step_named(r, "target");
    CHECK(contains(s.message, "no RDMA device holds that address (EADDRNOTAVAIL)"));
    CHECK(contains(join(s.hints, "\n"), "add an rxe (or siw) device"));
    CHECK(r.cleanup.clean());
    CHECK(h.fake.nvme.subsys_dirs.empty());
    CHECK(h.fake.nvme.port_dirs.empty());
    CHECK(h.fake.storage.nullb_dirs.empty());
  }
  SUBCASE("another listener") {
    fakes::Harness h;
    h.fake.kernel.fail("nvme.link_port", EADDRINUSE);
    auto r = h.run(kNullBlk);
    CHECK(r.exit_code == 3);
    CHECK(contains(step_named(r, "target").message, "(EADDRINUSE)"));
    CHECK(r.cleanup.clean());
  }
}

TEST_CASE("nvmet: an IPv6 address gives the port adrfam ipv6") {
  fakes::Harness h;
  auto r = h.run_keep(
      "steps:\n  - nvmet: {nqn: nqn.x, namespace: {null_blk: {size: 1MiB}}, port: {address: 'fd00::1', service: "
      "4421}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(h.fake.nvme.port_dirs.at(1).adrfam == "ipv6");
  CHECK(h.fake.nvme.port_dirs.at(1).trsvcid == "4421");
}

TEST_CASE("nvmet: a port id given that another port has is an error, and the other port stays") {
  fakes::Harness h;
  for (const auto& [name, deps] : h.fake.modules.known) h.fake.modules.live.insert(name);
  REQUIRE(h.fake.storage.mount_configfs());
  REQUIRE(h.fake.nvme.add_port({.id = 3, .trtype = "tcp", .adrfam = "ipv4", .traddr = "192.0.2.1", .trsvcid = "4420"}));
  auto r = h.run("steps:\n  - name: target\n    nvmet:\n      nqn: " + kNqn +
                 "\n      namespace: {null_blk: {size: 64MiB}}\n      port: {address: 10.10.0.1, id: 3}\n");
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "target").message,
                 "NVMe target port 3 exists already: choose another id, or leave it out"));
  CHECK(r.cleanup.clean());
  CHECK(h.fake.nvme.port_dirs.at(3).traddr == "192.0.2.1");
  CHECK(h.fake.nvme.subsys_dirs.empty());
}

TEST_CASE("nvmet: in a network namespace it is an error before anything changes") {
  fakes::Harness h;
  h.fake.netns.existing.insert("lab");
  auto r = h.run(target("{null_blk: {size: 64MiB}}", "    netns: lab\n"));
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "target").message, "initial network namespace only"));
  CHECK(h.fake.kernel.changes().empty());
  CHECK(h.fake.modules.live.empty());
}

TEST_CASE("nvmet: bad input is refused at FILE:LINE:COL") {
  fakes::Harness h;
  CHECK(h.first_diagnostic(target("{null_blk: {size: 64MB}}")) ==
        "test.yaml:5:36: 'namespace.null_blk.size' must be a size in bytes or with a binary unit (B, KiB, MiB, GiB, "
        "TiB), got '64MB': decimal units are ambiguous, write MiB or GiB");
  CHECK(h.first_diagnostic(target("{null_blk: {size: lots}}")) ==
        "test.yaml:5:36: 'namespace.null_blk.size' must be a size in bytes or with a binary unit (4096, 64KiB, "
        "64MiB, 1GiB), got 'lots'");
  CHECK(h.first_diagnostic(target("{null_blk: {size: 1536KiB}}")) ==
        "test.yaml:5:36: 'namespace.null_blk.size' must be a whole number of MiB (null_blk sizes its devices in MiB), "
        "got 1536KiB");
  CHECK(h.first_diagnostic(target("{null_blk: {size: 1024}}")) ==
        "test.yaml:5:36: 'namespace.null_blk.size' must be at least 4KiB, got 1KiB");
  CHECK(h.first_diagnostic(target("{null_blk: {size: 1MiB}, file: {path: /run/x, size: 1MiB}}")) ==
        "test.yaml:5:18: 'namespace' takes one backing: file: {path, size} or null_blk: {size}");
  CHECK(h.first_diagnostic(target("{file: {path: lab.img, size: 1MiB}}")) ==
        "test.yaml:5:32: 'namespace.file.path' must be an absolute path (the kernel opens it)");
  CHECK(contains(h.diagnostics("steps:\n  - nvmet: {nqn: 'a b', namespace: {null_blk: {size: 1MiB}}, port: "
                               "{address: 10.0.0.1}}\n"),
                 "test.yaml:2:18: 'nqn' is not a valid NQN: contains whitespace"));
  CHECK(contains(h.diagnostics("steps:\n  - nvmet: {nqn: x, namespace: {null_blk: {size: 1MiB}}, port: {address: "
                               "10.0.0.1, transport: tcp}}\n"),
                 "'port.transport' must be one of rdma, got 'tcp'"));
}

TEST_CASE("nvmet: plan shows the configfs commands a person would type, and their undo in reverse") {
  fakes::Harness h;
  auto p = h.plan_run(kNullBlk);
  std::vector<std::string> shells;
  for (const auto& a : p.actions) shells.push_back(a.shell);
  const std::string all = join(shells, "\n");
  CHECK(contains(all, "mkdir /sys/kernel/config/nvmet/subsystems/" + kNqn));
  CHECK(contains(all, "echo 1 > /sys/kernel/config/nvmet/subsystems/" + kNqn + "/namespaces/1/enable"));
  CHECK(contains(all, "ln -s /sys/kernel/config/nvmet/subsystems/" + kNqn +
                          " /sys/kernel/config/nvmet/ports/1/"
                          "subsystems/" +
                          kNqn));
  CHECK(all.find("rm /sys/kernel/config/nvmet/ports/1/subsystems/") <
        all.find("rmdir /sys/kernel/config/nvmet/subsystems/" + kNqn + "\n"));
}
