// Journal records (docs/cleanup.md, steps/common/journal_record.h): every
// entry a built-in kind journals names its record in "op", and holds what
// the format before "op" held. A journal written in that format is still
// undone after an upgrade, each record told by its keys: the lines below
// are what that format wrote for the labs (run on these fakes), and their
// cleanup must do exactly what the cleanup of the labs' own journal does.
// An "op" a kind does not write is refused, never guessed.

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/strings.h"
#include "engine/journal.h"
#include "engine/runner.h"
#include "fakes/harness.h"

using namespace rxerun;
using Strings = std::vector<std::string>;
namespace fs = std::filesystem;

namespace {

using Json = nlohmann::json;

// The labs whose journals are compared: together they journal every record
// of every built-in kind.
struct Lab {
  const char* name;
  void (*setup)(fakes::FakeSystem& fake);
  const char* yaml;
};

const Lab kLabs[] = {
    {"links",
     [](fakes::FakeSystem& fake) {
       fake.sysctl.values["net.ipv4.conf.vA.rp_filter"] = "2";
       fake.ethtool.devs["vA"] = {{"rx-gro", {.active = true}}, {"tx-generic-segmentation", {.active = true}}};
     },
     "steps:\n"
     "  - {name: ns, netns: {name: lab}}\n"
     "  - {name: pair, veth: {name: vA, peer: vB, peer_netns: lab}}\n"
     "  - {name: addr, address: {dev: vA, cidr: 10.10.0.1/24}}\n"
     "  - {name: up, link: {dev: vA, up: true, mtu: 9000}}\n"
     "  - {name: rpf, sysctl: {key: net.ipv4.conf.vA.rp_filter, value: 0}}\n"
     "  - {name: lossy, netem: {dev: vA, loss: 10%}}\n"
     "  - {name: forced, route: {dst: 10.10.0.2/32, dev: vA, src: 10.10.0.1, table: 100}}\n"
     "  - {name: off, offload: {dev: vA, gro: off, gso: off}}\n"},
    {"rules", [](fakes::FakeSystem&) {},
     "steps:\n"
     "  - {name: r100, rule: {pref: 100, iif: lo, to: 10.10.0.2/32, table: 100}}\n"
     "  - {name: local-1000, rule: {pref: 1000, table: local}}\n"
     "  - {name: no-local-0, rule: {pref: 0, table: local, action: delete}}\n"
     "  - {name: no-roce, block: {proto: udp, port: 4791}}\n"},
    {"rdma",
     [](fakes::FakeSystem& fake) {
       fake.links.add_host_link("", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
       fake.links.add_host_link("", {.name = "vB", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
       fake.modules.known["null_blk"] = {"configfs"};
       fake.modules.known["configfs"] = {};
       fake.modules.known_parameters["null_blk"] = {{"nr_devices", "1"}, {"queue_mode", "2"}};
     },
     "steps:\n"
     "  - {name: dev, rxe: {name: rxe0, netdev: vA}}\n"
     "  - {name: iw, siw: {name: siw0, netdev: vB}}\n"
     "  - {name: mod, module: {name: null_blk, params: {nr_devices: 0}}}\n"},
    {"nvme", [](fakes::FakeSystem&) {},
     "steps:\n"
     "  - name: target\n"
     "    nvmet:\n"
     "      nqn: nqn.2026-01.io.rxerun:lab\n"
     "      namespace: {null_blk: {size: 64MiB}}\n"
     "      port: {address: 10.10.0.1}\n"
     "      hosts: [nqn.2026-01.io.rxerun:host]\n"
     "  - name: files\n"
     "    nvmet:\n"
     "      nqn: nqn.2026-01.io.rxerun:files\n"
     "      namespace: {file: {path: /run/lab.img, size: 32MiB}}\n"
     "      port: {address: 10.10.0.1, service: 4421}\n"
     "  - name: host\n"
     "    nvme_connect: {address: 10.10.0.1, nqn: nqn.2026-01.io.rxerun:lab, hostnqn: nqn.2026-01.io.rxerun:host}\n"},
    {"programs", [](fakes::FakeSystem& fake) { fake.tools.clock = &fake.clock; },
     "steps:\n"
     "  - {name: srv, exec: {argv: [server, -p, '4000'], background: true, undo: [rm, -f, /tmp/lab-x]}}\n"
     "  - {name: wire, capture: {dev: vB, file: w.pcap}}\n"},
};

// The journal lines of each lab, as the format before "op" wrote them (the
// "is" lines are what StepContext::identify() recorded).
const std::map<std::string, Strings> kOldLines = {
    {"links",
     {R"j({"args":{"name":"lab"},"do":1,"kind":"netns","makes":["netns:lab"],"netns":"","step":"ns","summary":"delete network namespace lab"})j",
      R"j({"identity":{"netns_inode":4026532000},"is":1})j",
      R"j({"args":{"name":"vA","peer":"vB","peer_netns":"lab"},"do":2,"kind":"veth","makes":["link:/vA","link:lab/vB"],"netns":"","on":["netns:lab"],"step":"pair","summary":"delete veth pair vA/vB"})j",
      R"j({"identity":{"ifindex":100,"netns_inode":4026531840,"peer_ifindex":101,"peer_netns_inode":4026532000},"is":2})j",
      R"j({"args":{"cidr":"10.10.0.1/24","dev":"vA","identity":{"ifindex":100,"netns_inode":4026531840}},"do":3,"kind":"address","netns":"","on":["link:/vA"],"step":"addr","summary":"remove 10.10.0.1/24 from vA"})j",
      R"j({"args":{"dev":"vA","identity":{"ifindex":100,"netns_inode":4026531840},"mtu":1500,"up":false,"wrote":{"mtu":9000,"up":true}},"do":4,"kind":"link","netns":"","on":["link:/vA"],"step":"up","summary":"set the MTU of vA back to 1500 and bring it down again"})j",
      R"j({"args":{"identity":{"ifindex":100,"netns_inode":4026531840},"key":"net.ipv4.conf.vA.rp_filter","value":"2","wrote":"0"},"do":5,"kind":"sysctl","netns":"","on":["link:/vA"],"step":"rpf","summary":"set net.ipv4.conf.vA.rp_filter back to 2"})j",
      R"j({"args":{"dev":"vA","identity":{"ifindex":100,"netns_inode":4026531840}},"do":6,"kind":"netem","netns":"","on":["link:/vA"],"step":"lossy","summary":"remove netem from vA"})j",
      R"j({"args":{"dev":"vA","dst":"10.10.0.2/32","family":"inet","identity":{"ifindex":100,"netns_inode":4026531840},"metric":0,"scope":253,"src":"10.10.0.1","table":100,"type":1,"via":""},"do":7,"kind":"route","netns":"","on":["link:/vA"],"step":"forced","summary":"delete route 10.10.0.2/32 dev vA src 10.10.0.1 table 100"})j",
      R"j({"args":{"dev":"vA","identity":{"ifindex":100,"netns_inode":4026531840},"names":{"gro":["rx-gro"],"gso":["tx-generic-segmentation"]},"restore":{"rx-gro":true,"tx-generic-segmentation":true},"wrote":{"rx-gro":false,"tx-generic-segmentation":false}},"do":8,"kind":"offload","netns":"","on":["link:/vA"],"step":"off","summary":"restore gro, gso on vA to the values found"})j"}},
    {"rules",
     {R"j({"args":{"identity":{"netns_inode":4026531840},"op":"delete","rule":{"action":1,"family":"inet","from":"","fwmark":0,"fwmask":0,"iif":"lo","oif":"","pref":100,"protocol":0,"table":100,"to":"10.10.0.2/32"}},"do":1,"kind":"rule","netns":"","step":"r100","summary":"delete rule pref 100 iif lo to 10.10.0.2/32 lookup 100"})j",
      R"j({"args":{"identity":{"netns_inode":4026531840},"op":"delete","rule":{"action":1,"family":"inet","from":"","fwmark":0,"fwmask":0,"iif":"","oif":"","pref":1000,"protocol":0,"table":255,"to":""}},"do":2,"kind":"rule","netns":"","step":"local-1000","summary":"delete rule pref 1000 lookup local"})j", R"j({"args":{"identity":{"netns_inode":4026531840},"op":"add","rule":{"action":1,"family":"inet","from":"","fwmark":0,"fwmask":0,"iif":"","oif":"","pref":0,"protocol":2,"table":255,"to":""}},"do":3,"kind":"rule","netns":"","step":"no-local-0","summary":"put back rule pref 0 lookup local"})j",
      R"j({"args":{"chain":"input","comment":"rxerun step no-roce","family":"inet","identity":{"netns_inode":4026531840},"table":"rxerun-test"},"do":4,"kind":"block","netns":"","step":"no-roce","summary":"delete the nftables rule 'rxerun step no-roce' from inet rxerun-test input (then the chain and the table when empty)"})j"}},
    {"rdma",
     {R"j({"args":{"modules":["rdma_rxe","rdma_ucm","ib_uverbs","ib_core","rdma_cm","iw_cm","ib_cm"]},"do":1,"kind":"rxe","netns":"","step":"dev","summary":"unload rdma_rxe, rdma_ucm and 5 modules they needed (loaded by this run) once no rxe device is left"})j",
      R"j({"args":{"name":"rxe0","netdev":"vA"},"do":2,"kind":"rxe","netns":"","step":"dev","summary":"delete rxe device rxe0"})j",
      R"j({"identity":{"index":1,"netdev_ifindex":100,"netns_inode":4026531840},"is":2})j",
      R"j({"args":{"modules":["siw"]},"do":3,"kind":"siw","netns":"","step":"iw","summary":"unload siw (loaded by this run) once no siw device is left"})j",
      R"j({"args":{"name":"siw0","netdev":"vB"},"do":4,"kind":"siw","netns":"","step":"iw","summary":"delete siw device siw0"})j",
      R"j({"identity":{"index":2,"netdev_ifindex":101,"netns_inode":4026531840},"is":4})j",
      R"j({"args":{"modules":["null_blk","configfs"]},"do":5,"kind":"module","netns":"","step":"mod","summary":"unload null_blk and 1 module it needed (loaded by this run) once nothing uses it"})j"}},
    {"nvme",
     {R"j({"args":{"modules":["configfs"]},"do":1,"kind":"nvmet","netns":"","step":"target","summary":"unload configfs (loaded by this run) once configfs is unmounted"})j", R"j({"args":{"configfs_mount":"/sys/kernel/config"},"do":2,"kind":"nvmet","netns":"","step":"target","summary":"unmount configfs from /sys/kernel/config (mounted by this run)"})j", R"j({"identity":{"mount_id":40},"is":2})j", R"j({"args":{"modules":["nvmet_rdma","nvmet","nvme_core","rdma_cm","iw_cm","ib_cm","ib_core"]},"do":3,"kind":"nvmet","netns":"","step":"target","summary":"unload nvmet_rdma and 6 modules they needed (loaded by this run) once no NVMe target subsystem is left"})j", R"j({"args":{"modules":["null_blk"]},"do":4,"kind":"nvmet","netns":"","step":"target","summary":"unload null_blk (loaded by this run) once no null_blk device is left"})j", R"j({"args":{"null_blk":"rxerun-nullb0"},"do":5,"kind":"nvmet","netns":"","step":"target","summary":"remove null_blk device rxerun-nullb0"})j", R"j({"identity":{"index":0},"is":5})j", R"j({"args":{"subsystem":"nqn.2026-01.io.rxerun:lab"},"do":6,"kind":"nvmet","netns":"","step":"target","summary":"remove NVMe target subsystem nqn.2026-01.io.rxerun:lab"})j", R"j({"identity":{"serial":1592590337},"is":6})j", R"j({"args":{"host":"nqn.2026-01.io.rxerun:host"},"do":7,"kind":"nvmet","netns":"","step":"target","summary":"remove NVMe target host nqn.2026-01.io.rxerun:host"})j", R"j({"args":{"allowed_host":"nqn.2026-01.io.rxerun:host","serial":1592590337,"subsystem":"nqn.2026-01.io.rxerun:lab"},"do":8,"kind":"nvmet","netns":"","step":"target","summary":"stop allowing host nqn.2026-01.io.rxerun:host in nqn.2026-01.io.rxerun:lab"})j", R"j({"args":{"namespace":1,"serial":1592590337,"subsystem":"nqn.2026-01.io.rxerun:lab"},"do":9,"kind":"nvmet","netns":"","step":"target","summary":"disable and remove namespace 1 of nqn.2026-01.io.rxerun:lab"})j", R"j({"args":{"address":"10.10.0.1","port":1,"service":"4420","transport":"rdma"},"do":10,"kind":"nvmet","netns":"","step":"target","summary":"remove NVMe target port 1"})j", R"j({"args":{"address":"10.10.0.1","port_link":1,"service":"4420","subsystem":"nqn.2026-01.io.rxerun:lab","transport":"rdma"},"do":11,"kind":"nvmet","netns":"","step":"target","summary":"withdraw nqn.2026-01.io.rxerun:lab from port 1"})j", R"j({"args":{"file":"/run/lab.img"},"do":12,"kind":"nvmet","netns":"","step":"files","summary":"delete /run/lab.img (created by this run)"})j", R"j({"identity":{"dev":2049,"ino":1000},"is":12})j", R"j({"args":{"subsystem":"nqn.2026-01.io.rxerun:files"},"do":13,"kind":"nvmet","netns":"","step":"files","summary":"remove NVMe target subsystem nqn.2026-01.io.rxerun:files"})j", R"j({"identity":{"serial":1592590338},"is":13})j", R"j({"args":{"namespace":1,"serial":1592590338,"subsystem":"nqn.2026-01.io.rxerun:files"},"do":14,"kind":"nvmet","netns":"","step":"files","summary":"disable and remove namespace 1 of nqn.2026-01.io.rxerun:files"})j", R"j({"args":{"address":"10.10.0.1","port":2,"service":"4421","transport":"rdma"},"do":15,"kind":"nvmet","netns":"","step":"files","summary":"remove NVMe target port 2"})j", R"j({"args":{"address":"10.10.0.1","port_link":2,"service":"4421","subsystem":"nqn.2026-01.io.rxerun:files","transport":"rdma"},"do":16,"kind":"nvmet","netns":"","step":"files","summary":"withdraw nqn.2026-01.io.rxerun:files from port 2"})j", R"j({"args":{"modules":["nvme_rdma","nvme_fabrics"]},"do":17,"kind":"nvme_connect","netns":"","step":"host","summary":"unload nvme_rdma and 1 module it needed (loaded by this run) once no NVMe over Fabrics controller of that transport is left"})j", R"j({"args":{"address":"10.10.0.1","controller":"nqn.2026-01.io.rxerun:lab","service":"4420","transport":"rdma"},"do":18,"kind":"nvme_connect","netns":"","step":"host","summary":"disconnect the NVMe controller of nqn.2026-01.io.rxerun:lab at rdma 10.10.0.1 service 4420"})j", R"j({"identity":{"cntlid":1,"instance":0},"is":18})j"}},
    {"programs",
     {R"j({"args":{"argv":["rm","-f","/tmp/lab-x"],"program":"server","token":"RXERUN_TOKEN=test/srv/TyEOV0Zmg8BDkAG4"},"do":1,"kind":"exec","netns":"","step":"srv","summary":"stop server and whatever it started, then run rm -f /tmp/lab-x"})j", R"j({"args":{"file":"w.pcap","id":"test/wire","partial":"w.pcap.rxerun-xXW2nyKJ","shown":"w.pcap"},"do":2,"kind":"capture","netns":"","step":"wire","summary":"stop the capture on vB and close w.pcap"})j"}},
};

// What the model was asked to change, and the programs started and
// stopped. Tokens of background programs are random: only their
// scenario/step part is kept.
Strings actions(fakes::FakeSystem& f) {
  Strings out = f.kernel.changes();
  for (const auto& spec : f.tools.started) out.push_back("start " + shell_join(spec.argv));
  for (const auto& token : f.tools.stopped_marked) out.push_back("stop marked " + token.substr(0, token.rfind('/')));
  for (const auto& [partial, file] : f.captures.recovered) out.push_back("recover " + file);
  for (const auto& id : f.captures.stops) out.push_back("stop capture " + id);
  return out;
}

void forget_actions(fakes::FakeSystem& f) {
  f.kernel.actions.clear();
  f.tools.started.clear();
  f.tools.stopped_marked.clear();
  f.captures.recovered.clear();
  f.captures.stops.clear();
}

// A journal file of scenario "test" holding `lines` after the boot line a
// journal starts with, opened by the journal's own reader.
Journal journal_of(const Strings& lines, const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directory(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  std::ifstream boot_file("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(boot_file, boot);
  std::ofstream out(dir / "test.journal");
  if (!boot.empty()) out << Json{{"boot", boot}}.dump() << "\n";
  for (const auto& line : lines) out << line << "\n";
  out.close();
  auto j = Journal::open(dir.string(), "test");
  REQUIRE(j);
  REQUIRE(j->damaged().empty());
  return std::move(*j);
}

fs::path fresh_dir(const std::string& tag) {
  return fs::temp_directory_path() / ("rxerun-records-" + tag + "-" + std::to_string(::getpid()));
}

// An entry's args without "op", and without what is random per run (a
// background program's token, a capture's temporary file).
Json comparable(Json args) {
  for (const char* key : {"op", "token", "partial"}) args.erase(key);
  return args;
}

std::vector<std::string> summaries(const CleanupReport& c) {
  std::vector<std::string> out;
  for (const auto& u : c.undos) out.push_back(u.step + ": " + u.summary + (u.ok ? "" : " FAILED " + u.error));
  return out;
}

}  // namespace

TEST_CASE("journal records: each entry names its record in op, and holds what the format before op held") {
  for (const auto& lab : kLabs) {
    CAPTURE(lab.name);
    fakes::Harness h;
    lab.setup(h.fake);
    auto r = h.run_keep(lab.yaml);
    REQUIRE(r.exit_code == 0);
    Journal old = journal_of(kOldLines.at(lab.name), fresh_dir(lab.name));
    const auto& now = h.journal.pending();
    REQUIRE(now.size() == old.pending().size());
    for (std::size_t i = 0; i < now.size(); ++i) {
      const JournalEntry& e = now[i];
      const JournalEntry& o = old.pending()[i];
      CAPTURE(entry_line(e));
      CHECK(e.step == o.step);
      CHECK(e.kind == o.kind);
      CHECK(e.netns == o.netns);
      CHECK(e.summary == o.summary);
      CHECK(e.footprint.on == o.footprint.on);
      CHECK(e.footprint.makes == o.footprint.makes);
      REQUIRE(e.args.contains("op"));
      CHECK(e.args.at("op").is_string());
      if (e.kind == "rule")
        CHECK(e.args.at("op") == o.args.at("op"));  // rule named its two records so already
      else
        CHECK_FALSE(o.args.contains("op"));
      CHECK(comparable(e.args) == comparable(o.args));
      CHECK(e.identity == o.identity);
    }
    fs::remove_all(fresh_dir(lab.name));
  }
}

TEST_CASE("journal records: a journal written before op is undone as the labs' own journal is") {
  for (const auto& lab : kLabs) {
    CAPTURE(lab.name);
    // The lab cleaned up from its own journal...
    fakes::Harness own;
    lab.setup(own.fake);
    REQUIRE(own.run_keep(lab.yaml).exit_code == 0);
    forget_actions(own.fake);
    const CleanupReport by_own = own.cleanup();
    CHECK(by_own.clean());
    const Strings own_actions = actions(own.fake);
    CHECK_FALSE(own_actions.empty());

    // ... and the same lab cleaned up from the old journal's lines.
    fakes::Harness h;
    lab.setup(h.fake);
    REQUIRE(h.run_keep(lab.yaml).exit_code == 0);
    forget_actions(h.fake);
    h.journal = journal_of(kOldLines.at(lab.name), fresh_dir(lab.name));
    const CleanupReport by_old = h.cleanup();
    CHECK(by_old.clean());
    CHECK(summaries(by_old) == summaries(by_own));
    CHECK(actions(h.fake) == own_actions);
    CHECK(h.journal.pending().empty());

    // Nothing is left to do.
    forget_actions(h.fake);
    CHECK(h.cleanup().undos.empty());
    CHECK(actions(h.fake).empty());
    fs::remove_all(fresh_dir(lab.name));
  }
}

TEST_CASE("journal records: the lab's journal undoes what it made, the host as it was found") {
  // The nvme lab in detail: the old journal takes the whole target apart.
  const Lab& nvme = kLabs[3];
  REQUIRE(std::string(nvme.name) == "nvme");
  fakes::Harness h;
  nvme.setup(h.fake);
  REQUIRE(h.run_keep(nvme.yaml).exit_code == 0);
  REQUIRE(h.fake.nvme.subsys_dirs.size() == 2);
  h.journal = journal_of(kOldLines.at("nvme"), fresh_dir("nvme-detail"));
  CHECK(h.cleanup().clean());
  CHECK(h.fake.nvme.subsys_dirs.empty());
  CHECK(h.fake.nvme.port_dirs.empty());
  CHECK_FALSE(h.fake.storage.configfs_mount_id.has_value());
  fs::remove_all(fresh_dir("nvme-detail"));
}

TEST_CASE("journal records: an op the kind does not write is refused, never guessed") {
  struct Case {
    const char* kind;
    Json args;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"veth",
       {{"op", "delete"}, {"name", "vX"}, {"peer", "vY"}, {"peer_netns", ""}},
       "journal entry for step bad holds op: \"delete\", not veth: not acting on it"},
      {"address",
       {{"op", 7}, {"dev", "eth0"}, {"cidr", "10.9.0.1/24"}},
       "journal entry for step bad holds op: 7, not a string: not acting on it"},
      // A key of a record is not a guess at it: "subsystem" is in several.
      {"nvmet",
       {{"op", "subsystems"}, {"subsystem", "nqn.2026-01.io.rxerun:lab"}},
       "journal entry for step bad holds op: \"subsystems\", not modules, port_link, port, namespace, allowed_host, "
       "host, null_blk, file, configfs_mount or subsystem: not acting on it"},
      // The op decides, whatever keys the entry has.
      {"nvmet",
       {{"op", "port"}, {"subsystem", "nqn.2026-01.io.rxerun:lab"}},
       "journal entry for step bad has no port: not acting on it"},
      {"rxe",
       {{"op", "modules"}, {"name", "rxe0"}, {"netdev", "eth0"}},
       "journal entry for step bad has no modules: not acting on it"},
      {"nvme_connect",
       {{"op", "device"}, {"modules", {"nvme_rdma"}}},
       "journal entry for step bad holds op: \"device\", not controller or modules: not acting on it"},
      {"rule",
       {{"op", "flush"}, {"rule", Json::object()}},
       "journal entry for step bad holds op: \"flush\", not delete or add: not acting on it"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.kind);
    CAPTURE(c.args.dump());
    fakes::Harness h;
    h.fake.links.add_host_link("", {.name = "eth0", .up = true, .mtu = 1500});
    h.fake.links.addrs[""]["eth0"] = {"10.9.0.1/24"};
    REQUIRE(h.journal.append({0, "bad", c.kind, "", "undo something", c.args}));
    forget_actions(h.fake);
    auto cleanup = h.cleanup();
    REQUIRE(cleanup.undos.size() == 1);
    CHECK_FALSE(cleanup.undos[0].ok);
    CHECK(cleanup.undos[0].error == c.message);
    CHECK(actions(h.fake).empty());
    CHECK(h.fake.links.addrs[""]["eth0"] == Strings{"10.9.0.1/24"});
    REQUIRE(h.journal.pending().size() == 1);  // kept, for the user to look at
  }
}
