// nfsd and nfs_mount on the model: the server started (versions, RDMA
// listener, threads), the export written into the caches and the mount made,
// cleanup taking them apart in reverse (unmount, export withdrawn, nfsd
// stopped, versions as they were, tmpfs unmounted, modules unloaded); a
// namespace whose nfsd runs already left untouched; the kernel's refusals
// of the listener and the export, saying what to do; a mount nobody serves
// as `fail` with the kernel's errno; an unmount whose server no longer
// answers; a module in use at its undo, unloaded after the others; what the
// run did not make left alone (an nfsd restarted with other listeners, a
// client address moved to another domain, another mount on the mount
// point); nfsd per namespace; one item of a list fact named by its index;
// bad input at FILE:LINE:COL; what plan prints.

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"

using namespace rxerun;
using fakes::position;
using fakes::service_log;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

struct NfsHarness : fakes::Harness {
  NfsHarness() {
    fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    fake.links.add_host_link("", {.name = "vB", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
    fake.links.addrs[""]["vA"] = {"10.10.0.1/24"};
    fake.links.addrs[""]["vB"] = {"10.10.0.2/24"};
    for (const char* m : {"rdma_rxe", "ib_uverbs", "ib_core", "rdma_cm", "iw_cm", "ib_cm"}) fake.modules.live.insert(m);
  }
  // The host's own nfsd in rxerun's namespace: 8 threads on TCP, its
  // filesystem on /proc/fs/nfsd.
  void host_nfsd() {
    for (const char* m : {"sunrpc", "lockd", "grace", "auth_rpcgss", "nfsd"}) fake.modules.live.insert(m);
    fake.nfs.dirs.insert("/proc/fs/nfsd");
    REQUIRE(fake.nfs.mount("nfsd", "/proc/fs/nfsd", "nfsd", ""));
    REQUIRE(fake.nfs.add_listener("/proc/fs/nfsd", "tcp", 2049));
    REQUIRE(fake.nfs.set_threads("/proc/fs/nfsd", 8));
    fake.kernel.actions.clear();
  }
};

const std::string kServer =
    "steps:\n"
    "  - name: server\n"
    "    nfsd: {clients: [10.10.0.2]}\n";
const std::string kMount =
    "  - name: client\n"
    "    nfs_mount: {server: 10.10.0.1, mountpoint: /mnt/lab}\n";

}  // namespace

TEST_CASE("nfsd and nfs_mount: served over RDMA, mounted, and taken apart in reverse") {
  NfsHarness h;
  auto r = h.run_keep(kServer + kMount);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "server");
  const std::string dir = s.facts.at("dir");
  const std::string domain = s.facts.at("domain");
  const std::string ctl = "/run/rxerun-nfsd-" + domain.substr(7);  // nfsd's filesystem
  const std::string records = "/run/rxerun-nfs-records-" + domain.substr(7);
  CHECK(dir.starts_with("/run/rxerun-nfs-"));
  CHECK(domain.starts_with("rxerun-"));
  CHECK(dir.substr(16) == domain.substr(7));  // one tag for both
  CHECK(s.facts.at("tmpfs") == true);
  CHECK(s.facts.at("listeners") == nlohmann::json::array({"rdma 20049", "rdma 20049"}));
  CHECK(s.facts.at("threads") == 4);
  CHECK(s.facts.at("versions") == "-2 -3 +4 +4.1 +4.2");
  CHECK(s.facts.at("grace_ended") == true);  // the model is a 6.1 kernel: client records in the step's directory
  CHECK(s.facts.at("options") == "rw,insecure,no_root_squash,sync,no_wdelay,no_subtree_check,fsid=0");
  const auto& c = step_named(r, "client");
  CHECK(c.facts.at("transport") == "rdma");
  CHECK(c.facts.at("version") == "4.2");
  CHECK(c.facts.at("port") == 20049);
  CHECK(c.facts.at("source") == "10.10.0.1:/");
  CHECK(c.facts.at("mountpoint") == "/mnt/lab");

  auto& nfs = h.fake.nfs;
  CHECK(nfs.namespaces.at("").clients.at("10.10.0.2") == domain);
  for (const char* m : {"nfsd", "rpcrdma", "nfsv4", "rpcsec_gss_krb5"}) CHECK_MESSAGE(h.fake.modules.live.count(m), m);
  const Strings log = service_log(h.fake, "nfs");
  // The listener before the threads (which start nfsd), the export once it runs, the mount last.
  CHECK(position(log, "offer NFS versions -2 -3 +4 +4.1 +4.2") < position(log, "let nfsd listen on rdma 20049"));
  CHECK(position(log, "let nfsd listen on rdma 20049") < position(log, "start nfsd with 4 threads"));
  CHECK(position(log, "start nfsd with 4 threads") < position(log, "let 10.10.0.2 into " + domain));
  CHECK(position(log, "export " + dir + " to " + domain + " as its NFSv4 root") == long(log.size()) - 3);
  CHECK(log.back() == "mount 10.10.0.1:/ on /mnt/lab");

  h.fake.kernel.actions.clear();
  auto cl = h.cleanup();
  CHECK(cl.clean());
  CHECK(service_log(h.fake, "nfs") == Strings{
                                          "unmount /mnt/lab",
                                          "remove directory /mnt/lab",
                                          "withdraw the export of " + dir + " to " + domain,
                                          "forget client 10.10.0.2",
                                          "stop nfsd",
                                          "offer NFS versions +3 +4 +4.1 +4.2",
                                          "give nfsd a grace period of 90 s",
                                          "keep nfsd's client records in /var/lib/nfs/v4recovery",
                                          "remove directory " + records,
                                          "unmount " + dir,
                                          "remove directory " + dir,
                                          "unmount " + ctl,
                                          "remove directory " + ctl,
                                      });
  CHECK(nfs.mount_table.empty());
  CHECK(nfs.dirs.empty());
  CHECK(nfs.namespaces.at("").clients.empty());
  for (const char* m : {"nfsd", "rpcrdma", "nfsv4", "sunrpc", "rpcsec_gss_krb5"})
    CHECK_MESSAGE(!h.fake.modules.live.count(m), m);
}

TEST_CASE("nfsd: a namespace whose nfsd runs already is left untouched") {
  NfsHarness h;
  for (const char* m : {"sunrpc", "lockd", "grace", "auth_rpcgss", "nfsd"}) h.fake.modules.live.insert(m);
  h.host_nfsd();
  auto r = h.run(kServer);
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "server").message, "nfsd runs in this network namespace already (8 threads"));
  // Only its look: nfsd's filesystem mounted and unmounted again (the host's mount keeps nfsd).
  const Strings log = service_log(h.fake, "nfs");
  CHECK(std::none_of(log.begin(), log.end(),
                     [](const std::string& s) { return contains(s, "nfsd") && !contains(s, "/run/rxerun-nfsd-"); }));
  CHECK(h.fake.nfs.namespaces.at("").nfsd.threads == 8);
  CHECK(h.fake.nfs.namespaces.at("").nfsd.listeners.size() == 2);
  CHECK(h.fake.nfs.mount_table.size() == 1);
}

TEST_CASE("nfsd: an expectation or a reference names one item of a list fact by its index") {
  NfsHarness h;
  const auto r = h.run(kServer +
                       "    expect: {listeners.1: rdma 20049, clients.0: 10.10.0.2}\n"
                       "  - name: client\n"
                       "    nfs_mount: {server: 10.10.0.1, mountpoint: '/mnt/{{steps.server.clients.0}}'}\n");
  CHECK(r.exit_code == 0);
  const auto& s = step_named(r, "server");
  REQUIRE(s.expectations.size() == 2);
  CHECK(s.expectations[0].verdict == "ok");
  CHECK(s.expectations[0].value == "rdma 20049");
  CHECK(s.expectations[1].verdict == "ok");
  CHECK(step_named(r, "client").facts.at("mountpoint") == "/mnt/10.10.0.2");

  // An item past the end, an index into a fact that is no list: the
  // expectation fails and says why.
  const auto past = h.run(kServer + "    expect: {listeners.2: rdma 20049, dir.0: x}\n");
  CHECK(past.exit_code == 1);
  const auto& failed = step_named(past, "server");
  REQUIRE(failed.expectations.size() == 2);
  CHECK(failed.expectations[0].verdict == "fail");
  CHECK(failed.expectations[0].why == "was not reported ('listeners' has 2 items)");
  CHECK(failed.expectations[1].verdict == "fail");
  CHECK(failed.expectations[1].why == "was not reported ('dir' is no list)");

  // A reference to an item past the end: the step that reads it stops.
  const auto short_list = h.run(kServer +
                                "  - name: client\n"
                                "    nfs_mount: {server: 10.10.0.1, mountpoint: '/mnt/{{steps.server.clients.1}}'}\n");
  CHECK(short_list.exit_code == 3);
  CHECK(step_named(short_list, "client").outcome == Outcome::Error);
  CHECK(step_named(short_list, "client").message ==
        "test.yaml:5:5: step 'server' did not report fact 'clients.1' ('clients' has 1 item)");

  // Only an index after a fact the kind reports.
  CHECK(contains(h.first_diagnostic(kServer + "    expect: {listenerz.0: x}\n"), "unknown fact 'listenerz.0'"));
  CHECK(contains(h.first_diagnostic(kServer + "    expect: {listeners.first: x}\n"), "unknown fact 'listeners.first'"));
  CHECK(contains(h.first_diagnostic(kServer + "    expect: {clients.0.0: x}\n"), "unknown fact 'clients.0.0'"));
}

TEST_CASE("nfsd: the kernel's refusals of the listener and of the export say what to do, and leave nothing") {
  NfsHarness h;
  SUBCASE("the RDMA port is taken") {
    h.fake.kernel.fail("nfs.add_listener", EADDRINUSE);
    auto r = h.run(kServer);
    CHECK(r.exit_code == 3);
    CHECK(contains(step_named(r, "server").message,
                   "the kernel could not listen for RDMA on port 20049: it is taken in this namespace (give another "
                   "port)"));
    CHECK(r.cleanup.clean());
  }
  SUBCASE("a directory on a filesystem without export support") {
    h.fake.nfs.dirs.insert("/srv/fuse");
    h.fake.kernel.fail("nfs.add_export", EINVAL);
    auto r = h.run("steps:\n  - name: server\n    nfsd: {clients: [10.10.0.2], dir: /srv/fuse}\n");
    CHECK(r.exit_code == 3);
    CHECK(contains(step_named(r, "server").message,
                   "the kernel cannot export /srv/fuse (its filesystem has no NFS export support)"));
    CHECK(r.cleanup.clean());
    CHECK(h.fake.nfs.dirs == std::set<std::string>{"/srv/fuse"});
  }
  // Nothing of nfsd's is left: no filesystem mounted, no module loaded.
  CHECK(h.fake.nfs.mount_table.empty());
  CHECK_FALSE(*h.fake.modules.loaded("nfsd"));
}

TEST_CASE("nfs_mount: nobody serves there, and the kernel says so") {
  NfsHarness h;
  auto r = h.run(kServer +
                 "  - name: nobody\n"
                 "    nfs_mount: {server: 10.10.0.1, port: 20050}\n"
                 "    expect: {outcome: fail, errno: ECONNREFUSED}\n");
  CHECK(r.exit_code == 0);
  const auto& n = step_named(r, "nobody");
  CHECK(n.facts.at("errno") == "ECONNREFUSED");
  CHECK(std::any_of(n.hints.begin(), n.hints.end(), [](const std::string& s) { return contains(s, "nobody serves"); }));
  CHECK(h.fake.nfs.mount_table.empty());
  CHECK(h.fake.nfs.dirs.empty());  // the mount point it made went at cleanup
}

TEST_CASE("nfs_mount: no export for the client's domain is EACCES") {
  NfsHarness h;
  auto r = h.run(
      "steps:\n"
      "  - nfsd: {clients: [10.10.0.9]}\n"
      "  - name: stranger\n"
      "    nfs_mount: {server: 10.10.0.1}\n"
      "    expect: {outcome: fail, errno: EACCES}\n");
  CHECK(r.exit_code == 0);
}

TEST_CASE("nfs_mount: an unmount whose server no longer answers shuts the mount's client down, where it can") {
  NfsHarness h;
  h.fake.nfs.unanswered.insert("/mnt/lab");
  auto revert = [](const char* shut) {
    return "  - revert: client\n    expect: {client_shut_down: " + std::string(shut) + "}\n";
  };
  SUBCASE("a kernel with /sys/fs/nfs/DEVICE/shutdown") {
    auto r = h.run(kServer + kMount + revert("true"));
    REQUIRE(r.exit_code == 0);
    const Strings log = service_log(h.fake, "nfs");
    const auto shut = position(log, "shut down the NFS client of /mnt/lab: its server did not answer for 30 s");
    CHECK(shut >= 0);
    CHECK(shut + 1 == position(log, "unmount /mnt/lab"));
    const Strings commands = h.fake.kernel.commands("nfs");
    CHECK(std::any_of(commands.begin(), commands.end(), [](const std::string& c) {
      return c.starts_with("echo 1 > /sys/fs/nfs/0:") && c.ends_with("/shutdown");
    }));
  }
  SUBCASE("6.1, without it: the unmount is waited out") {
    h.fake.nfs.client_shutdown = false;
    auto r = h.run(kServer + kMount + revert("false"));
    REQUIRE(r.exit_code == 0);
    const Strings log = service_log(h.fake, "nfs");
    CHECK(std::none_of(log.begin(), log.end(), [](const std::string& l) { return l.starts_with("shut down"); }));
    CHECK(position(log, "unmount /mnt/lab") >= 0);
  }
  CHECK(h.fake.nfs.mount_table.empty());
  CHECK(h.fake.nfs.dirs.empty());
}

TEST_CASE("nfsd: a module still in use when its undo comes is unloaded after the other undos") {
  // The server in a namespace of the run's, gone by the last try: modules
  // are the whole kernel's, unloaded from rxerun's own namespace then.
  const std::string lab =
      "steps:\n"
      "  - netns: {name: rxs}\n"
      "  - veth: {name: vC, peer: vD}\n"
      "  - name: server\n"
      "    nfsd: {clients: [10.10.0.2]}\n"
      "    netns: rxs\n";
  // How often an undo asks: rpcrdma never free, nfsd's undo and its last
  // try ask as often; it stays, and the run says so.
  int asked = 0;
  {
    NfsHarness always;
    always.fake.kernel.fail("modules.unload", EBUSY, "rpcrdma");
    REQUIRE(always.run(lab).exit_code == 0);
    CHECK(always.fake.modules.live.count("rpcrdma"));
    asked = always.fake.kernel.faults.front().seen / 2;
    REQUIRE(asked > 0);
  }
  // rpcrdma held a little longer (the kernel taking an RDMA connection
  // down): busy at every try of nfsd's undo, free for the last one.
  NfsHarness h;
  h.fake.kernel.fail("modules.unload", EBUSY, "rpcrdma", 1, asked);
  auto r = h.run(lab);
  REQUIRE(r.exit_code == 0);
  CHECK(r.cleanup.clean());
  CHECK_FALSE(h.fake.modules.live.count("rpcrdma"));
  const Strings log = service_log(h.fake, {"links", "modules", "netns"});
  // After the namespace's undo and the veth's (batched, after the others),
  // which follow nfsd's.
  CHECK(position(log, "unload kernel module nfsd") < position(log, "delete network namespace rxs"));
  CHECK(position(log, "delete network namespace rxs") < position(log, "unload kernel module rpcrdma"));
  CHECK(position(log, "delete interface vC") < position(log, "unload kernel module rpcrdma"));
}

TEST_CASE("nfsd and nfs_mount: undo leaves alone what the run did not make") {
  SUBCASE("nfsd restarted with other listeners") {
    NfsHarness h;
    REQUIRE(h.run_keep(kServer).exit_code == 0);
    h.fake.nfs.namespaces[""].nfsd.listeners.push_back("tcp 2049");
    auto c = h.cleanup();
    CHECK_FALSE(c.clean());
    CHECK(h.fake.nfs.namespaces.at("").nfsd.threads == 4);
  }
  SUBCASE("a client address moved to another domain") {
    NfsHarness h;
    REQUIRE(h.run_keep(kServer).exit_code == 0);
    h.fake.nfs.namespaces[""].clients["10.10.0.2"] = "theirs";
    auto c = h.cleanup();
    CHECK(c.clean());
    CHECK(h.fake.nfs.namespaces.at("").clients.at("10.10.0.2") == "theirs");
  }
  SUBCASE("another mount on the mount point") {
    NfsHarness h;
    REQUIRE(h.run_keep(kServer + kMount).exit_code == 0);
    REQUIRE(h.fake.nfs.unmount("/mnt/lab"));
    REQUIRE(h.fake.nfs.mount("10.10.0.1:/", "/mnt/lab", "nfs4", "vers=4.1,proto=rdma,port=20049,addr=10.10.0.1"));
    auto c = h.cleanup();
    CHECK_FALSE(c.clean());
    CHECK(sys::mount_at(h.fake.nfs.mount_table, "/mnt/lab"));
  }
}

TEST_CASE("nfsd: one nfsd per network namespace, the lab's own beside the host's") {
  NfsHarness h;
  h.host_nfsd();
  h.fake.netns.existing.insert("srv");
  auto r = h.run(
      "steps:\n"
      "  - name: server\n"
      "    nfsd: {clients: [10.10.0.2], dir: /srv/lab}\n"
      "    netns: srv\n",
      {});
  // The directory is not there: an error before nfsd starts.
  CHECK(r.exit_code == 3);
  CHECK(contains(step_named(r, "server").message, "no directory /srv/lab to export"));
  h.fake.nfs.dirs.insert("/srv/lab");
  h.fake.kernel.actions.clear();
  r = h.run_keep(
      "steps:\n"
      "  - name: server\n"
      "    nfsd: {clients: [10.10.0.2], dir: /srv/lab, options: [ro, root_squash]}\n"
      "    netns: srv\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "server").facts.at("options") ==
        "ro,insecure,root_squash,sync,no_wdelay,no_subtree_check,fsid=0");
  CHECK(step_named(r, "server").facts.at("tmpfs") == false);
  CHECK(h.fake.nfs.namespaces.at("srv").nfsd.threads == 4);
  std::string shells;
  for (const auto& a : h.fake.kernel.actions) shells += a.shell + "\n";
  CHECK(contains(shells, "nsenter --net=/run/netns/srv sh -c 'mount -t nfsd nfsd /run/rxerun-nfsd-"));
  REQUIRE(h.cleanup().clean());
  CHECK(h.fake.nfs.namespaces.at("").nfsd.threads == 8);  // the host's untouched
  CHECK(h.fake.nfs.namespaces.at("srv").nfsd.threads == 0);
  CHECK(h.fake.nfs.dirs.count("/srv/lab"));  // the user's directory stays
}

TEST_CASE("nfsd and nfs_mount: bad input is refused at FILE:LINE:COL") {
  NfsHarness h;
  CHECK(h.first_diagnostic("steps:\n  - nfsd: {clients: [10.0.0.2], options: [rw, nohide]}\n") ==
        "test.yaml:2:42: 'nohide' is no export option rxerun sets: ro, rw, root_squash, no_root_squash, all_squash, "
        "sync, async, wdelay, no_wdelay, secure, insecure, subtree_check, no_subtree_check");
  CHECK(
      contains(h.diagnostics("steps:\n  - nfsd: {clients: [10.0.0.2], dir: srv}\n"), "'dir' must be an absolute path"));
  CHECK(contains(h.diagnostics("steps:\n  - nfs_mount: {server: 10.0.0.1, options: [proto=tcp]}\n"),
                 "'proto=tcp': proto is a parameter of its own"));
  CHECK(contains(h.diagnostics("steps:\n  - nfs_mount: {server: 10.0.0.1, version: \"3\"}\n"), "test.yaml:2:"));
}

TEST_CASE("nfsd and nfs_mount: plan shows the commands a person would type") {
  NfsHarness h;
  auto p = h.plan_run(kServer + kMount);
  std::string all;
  for (const auto& a : p.actions) all += a.shell + "\n";
  CHECK(contains(all, "mount -t nfsd nfsd /run/rxerun-nfsd-"));
  CHECK(contains(all, "echo '-2 -3 +4 +4.1 +4.2' > /run/rxerun-nfsd-"));
  CHECK(contains(all, "/threads\n"));
  CHECK(contains(all, "/proc/net/rpc/nfsd.export/channel"));
  CHECK(contains(all, "mount -t nfs4 -o vers=4.2,proto=rdma,port=20049,addr=10.10.0.1 10.10.0.1:/ /mnt/lab"));
  CHECK(all.find("umount /mnt/lab") < all.find("echo 0 > /run/rxerun-nfsd-"));
  CHECK(all.find("echo 0 > /run/rxerun-nfsd-") < all.find("umount /run/rxerun-nfsd-"));
}
