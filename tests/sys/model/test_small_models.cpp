// The model's sysctls, root qdiscs and nftables (sys/model/settings.h,
// sys/model/nft.h), nvmet's tree (sys/model/nvme.h) and nfsd's filesystem
// (sys/model/nfs.h), the stand-in of plan and tests.

#include <doctest/doctest.h>

#include <cerrno>

#include "sys/model/system.h"

using namespace rxerun;

TEST_CASE("sys.model.sysctl: a key names its /proc/sys file, whichever separator, and a write makes no file") {
  sys::ModelSystem m;
  m.sysctl.values["net.ipv4.conf.vB.rp_filter"] = "1";
  REQUIRE(m.sysctl.write("net/ipv4/conf/vB/rp_filter", "0"));
  CHECK(*m.sysctl.read("net.ipv4.conf.vB.rp_filter") == "0");
  CHECK(m.sysctl.values.size() == 1);
  CHECK(m.sysctl.write("net.ipv4.conf.vC.rp_filter", "0").error().code == ENOENT);
  CHECK(m.sysctl.read("net.ipv4.conf.vC.rp_filter").error().code == ENOENT);

  // A dot inside an interface's name is no separator in the slashed form.
  m.sysctl.values["net/ipv4/conf/eth0.100/rp_filter"] = "2";
  CHECK_FALSE(m.sysctl.find("net.ipv4.conf.eth0.100.rp_filter"));
  CHECK(*m.sysctl.read("net/ipv4/conf/eth0.100/rp_filter") == "2");

  // A new namespace starts with rxerun's own keys and values, then has its own.
  REQUIRE(m.netns.create("lab"));
  auto scope = m.netns.enter("lab");
  CHECK(*m.sysctl.read("net.ipv4.conf.vB.rp_filter") == "0");
  REQUIRE(m.sysctl.write("net.ipv4.conf.vB.rp_filter", "2"));
  CHECK(m.sysctl.values.at("net.ipv4.conf.vB.rp_filter") == "0");
}

TEST_CASE("sys.model.qdisc: netem replaces the kernel's default root, not one somebody added") {
  sys::ModelSystem m;
  REQUIRE(m.qdiscs.add_netem("vA", {.loss_pct = 30}));
  CHECK(*m.qdiscs.root_kind("vA") == "netem");
  CHECK(m.qdiscs.add_netem("vA", {}).error().code == EEXIST);
  CHECK(m.qdiscs.specs.at("vA").loss_pct == 30);

  m.qdiscs.root["vB"] = "noqueue";  // as a host shows its default
  CHECK(m.qdiscs.add_netem("vB", {}));
  m.qdiscs.root["vC"] = "htb";
  CHECK(m.qdiscs.add_netem("vC", {}).error().code == EEXIST);

  // The default cannot be deleted; a netem can, and the default is back.
  CHECK(m.qdiscs.remove_root("vD").error().code == ENOENT);
  REQUIRE(m.qdiscs.remove_root("vA"));
  CHECK_FALSE(*m.qdiscs.root_kind("vA"));
  CHECK(m.qdiscs.remove_root("vA").error().code == ENOENT);
  CHECK(m.kernel.commands("qdiscs") == std::vector<std::string>{"tc qdisc add dev vA root netem loss 30%",
                                                                "tc qdisc add dev vB root netem",
                                                                "tc qdisc del dev vA root"});
}

TEST_CASE("sys.model.nft: handles as the kernel numbers them, and a chain with rules cannot go") {
  sys::ModelSystem m;
  CHECK_FALSE(*m.nft.table("inet", "rxerun-t"));
  CHECK(m.nft.add_base_chain("inet", "rxerun-t", "input").error().code == ENOENT);
  REQUIRE(m.nft.add_table("inet", "rxerun-t"));
  REQUIRE(m.nft.add_base_chain("inet", "rxerun-t", "input"));
  const sys::NftRule rule{.chain = "input", .proto = "udp", .dport = 4791, .verdict = "drop", .comment = "c"};
  CHECK(*m.nft.add_rule("inet", "rxerun-t", rule) == 2);  // the chain took handle 1
  CHECK(m.nft.add_rule("inet", "rxerun-t", sys::NftRule{.chain = "output", .verdict = "drop"}).error().code == ENOENT);
  CHECK(m.nft.delete_chain("inet", "rxerun-t", "input").error().code == EBUSY);
  CHECK(m.nft.delete_rule("inet", "rxerun-t", "input", 3).error().code == ENOENT);
  REQUIRE(m.nft.delete_rule("inet", "rxerun-t", "input", 2));
  REQUIRE(m.nft.delete_chain("inet", "rxerun-t", "input"));
  REQUIRE(m.nft.delete_table("inet", "rxerun-t"));
  CHECK(m.nft.tables.empty());
  CHECK(m.kernel.commands("nft")[4] == "nft 'add rule inet rxerun-t input udp dport 4791 counter drop comment \"c\"'");
}

TEST_CASE("sys.model.nvme: a subsystem a port links cannot go, nor the port while it links one") {
  sys::ModelSystem m;
  m.modules.live = {"configfs", "nvmet", "nvmet_rdma"};
  REQUIRE(m.storage.mount_configfs());
  const std::string nqn = "nqn.2026-01.io.rxerun:model";
  REQUIRE(m.nvme.add_subsystem(nqn));
  REQUIRE(m.nvme.add_port({.id = 1, .trtype = "rdma", .adrfam = "ipv4", .traddr = "10.10.0.1", .trsvcid = "4420"}));
  REQUIRE(m.nvme.link_port(1, nqn));
  CHECK(m.nvme.remove_subsystem(nqn).error().code == EBUSY);
  CHECK(m.nvme.remove_port(1).error().code == ENOTEMPTY);
  REQUIRE(m.nvme.unlink_port(1, nqn));
  REQUIRE(m.nvme.remove_subsystem(nqn));
  REQUIRE(m.nvme.remove_port(1));
  CHECK(m.nvme.subsys_dirs.empty());
  CHECK(m.nvme.port_dirs.empty());
}

TEST_CASE("sys.model.storage: a disk is there while what made it is: a powered null_blk, an NVMe controller") {
  sys::ModelSystem m;
  m.modules.live = {"configfs", "null_blk", "nvmet", "nvmet_rdma", "nvme_fabrics", "nvme_rdma"};
  CHECK(m.storage.add_null_blk("rxerun-nullb0", 16).error().code == ENOENT);  // no configfs, no nullb tree
  REQUIRE(m.storage.mount_configfs());
  REQUIRE(m.storage.add_null_blk("rxerun-nullb0", 16));
  CHECK(*m.storage.block_device("rxerun-nullb0"));
  CHECK_FALSE(*m.storage.block_device("nvme0n1"));

  const std::string nqn = "nqn.2026-01.io.rxerun:model";
  REQUIRE(m.nvme.add_subsystem(nqn));
  REQUIRE(m.nvme.set_allow_any_host(nqn, true));
  REQUIRE(m.nvme.add_namespace(nqn, 1));
  REQUIRE(m.nvme.add_namespace(nqn, 2));
  REQUIRE(m.nvme.set_namespace_device(nqn, 2, "/dev/rxerun-nullb1", false));
  CHECK(m.nvme.enable_namespace(nqn, 2, true).error().code == ENOENT);  // no such disk to open
  REQUIRE(m.nvme.remove_namespace(nqn, 2));
  REQUIRE(m.nvme.set_namespace_device(nqn, 1, "/dev/rxerun-nullb0", false));
  REQUIRE(m.nvme.enable_namespace(nqn, 1, true));
  REQUIRE(m.nvme.add_port({.id = 1, .trtype = "rdma", .adrfam = "ipv4", .traddr = "10.10.0.1", .trsvcid = "4420"}));
  REQUIRE(m.nvme.link_port(1, nqn));
  auto c = m.nvme.connect({.transport = "rdma", .traddr = "10.10.0.1", .trsvcid = "4420", .nqn = nqn}, nullptr);
  REQUIRE(c);
  CHECK(*m.storage.block_device("nvme" + std::to_string(c->instance) + "n1"));
  REQUIRE(m.nvme.delete_controller(c->instance));
  CHECK_FALSE(*m.storage.block_device("nvme" + std::to_string(c->instance) + "n1"));

  m.modules.live.erase("null_blk");
  CHECK(m.storage.null_blks()->empty());  // null_blk's tree went with the module
  CHECK(m.kernel.commands("storage").front() == "mount -t configfs none /sys/kernel/config");
}

TEST_CASE("sys.model.nfs: nfsd runs while a mount of its namespace's filesystem is there, and stops with the last") {
  sys::ModelSystem m;
  for (const char* name : {"sunrpc", "nfsd", "rpcrdma"}) m.modules.live.insert(name);
  for (const char* dir : {"/proc/fs/nfsd", "/run/look"}) {
    m.nfs.dirs.insert(dir);
    REQUIRE(m.nfs.mount("nfsd", dir, "nfsd", ""));
  }
  REQUIRE(m.nfs.add_listener("/proc/fs/nfsd", "rdma", 20049));
  REQUIRE(m.nfs.set_threads("/proc/fs/nfsd", 4));
  CHECK(m.nfs.nfsd("/run/look")->threads == 4);  // one filesystem per namespace, whichever mount
  REQUIRE(m.nfs.unmount("/proc/fs/nfsd"));
  CHECK(m.nfs.nfsd("/run/look")->running());
  REQUIRE(m.nfs.unmount("/run/look"));
  CHECK_FALSE(m.nfs.namespaces.at("").nfsd.running());
}
