#pragma once
// Fakes of sys/ for engine and step tests: virtual time that jumps instead of
// waiting, a scheduled Ctrl-C, and in-memory namespaces, interfaces,
// addresses, features, sysctls, nftables, qdiscs, rxe devices and ping
// replies. Where `rxerun plan` models the same kernel state, the fake is that
// model (sys/model/, the fake inheriting it, its state open to the test)
// with what tests script on top: failures to inject, counts, prepared
// answers. Each fake keeps a log of the calls that change something.

#include <cerrno>
#include <csignal>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/duration.h"
#include "sys/kernel_log.h"
#include "sys/model/links.h"
#include "sys/model/netns.h"
#include "sys/model/nft.h"
#include "sys/model/qdisc.h"
#include "sys/model/rdma.h"
#include "sys/model/sysctl.h"
#include "sys/system.h"

namespace rxerun::fakes {

class FakeClock final : public sys::Clock {
 public:
  sys::SteadyTime now() override { return now_; }
  sys::WaitResult wait_until(sys::SteadyTime until, sys::Interrupt& interrupt) override;

  void advance(Duration d) { now_ += d; }
  // Ctrl-C arrives when virtual time reaches `at` during a wait.
  void interrupt_at(sys::SteadyTime at) { interrupt_at_ = at; }
  sys::SteadyTime start() const { return sys::SteadyTime{} + std::chrono::hours(1); }

  std::vector<Duration> waits;    // every wait, in order
  std::function<void()> on_wait;  // runs after each wait moved time on: the world changes meanwhile

 private:
  sys::SteadyTime now_ = start();
  std::optional<sys::SteadyTime> interrupt_at_;
};

// The namespaces of sys::NetnsModel (`existing`), entered as the test's
// system is; FakeLinks' interfaces come and go with them.
// The kernel's log on the fake clock's time: now() is FakeClock's time in
// microseconds, and the test (or a fake step, through `on_read` or by
// calling log()) puts records in.
class FakeKernelLog final : public sys::KernelLog {
 public:
  explicit FakeKernelLog(FakeClock& clock) : clock_(clock) {}
  std::uint64_t now() override;
  std::vector<sys::KernelRecord> records(std::uint64_t since) override;
  std::string release() override { return "6.1.0-test-amd64"; }
  // Adds a record of the kernel's (facility 0) at the fake clock's now, one per line of `text`.
  void log(const std::string& text, int facility = 0);

  std::vector<sys::KernelRecord> entries;
  int reads = 0;  // records() calls

 private:
  FakeClock& clock_;
};

class FakeNetns final : public sys::Netns, public sys::NetnsModel {
 public:
  Result<std::unique_ptr<sys::NetnsScope>> enter(const std::string& name) override;
  Result<bool> exists(const std::string& name) override { return has(name); }
  Result<void> create(const std::string& name) override;
  Result<void> remove(const std::string& name) override;
  // A namespace's inode is given the first time it is asked for (or at
  // create()) and forgotten at remove(): one made again gets a new one.
  Result<std::uint64_t> inode(const std::string& name) override;
  Result<std::uint64_t> current_inode() override;
  // As `ip netns del NAME; ip netns add NAME` between two runs: a new
  // namespace under the old name, its interfaces gone.
  void recreate(const std::string& name);

  std::map<std::string, std::uint64_t> inodes;  // "" is rxerun's own namespace
  std::vector<std::string> log;                 // "enter lab", "leave lab", "create lab", "remove lab"
  std::string current;                          // "" outside any

 private:
  std::uint64_t next_inode_ = 4026532000;
};

// The interfaces of sys::LinksModel, per namespace ("" is rxerun's own),
// as seen from FakeNetns' current one.
class FakeLinks final : public sys::Links, public sys::LinksModel {
 public:
  explicit FakeLinks(FakeNetns& netns);
  Result<std::optional<sys::LinkInfo>> get(const std::string& name) override;
  Result<std::vector<sys::LinkInfo>> list() override;
  // Every link of the current namespace with `stats`' counters (none: all 0).
  Result<std::vector<sys::LinkStats>> statistics() override;
  Result<void> add_veth(const sys::VethSpec& spec) override;
  Result<void> remove(const std::vector<std::string>& names) override;
  Result<void> set_up(const std::string& name, bool up) override;
  Result<void> set_mtu(const std::string& name, unsigned mtu) override;
  Result<void> set_alias(const std::string& name, const std::string& alias) override;
  Result<std::vector<std::string>> addresses(const std::string& dev, int* ifindex = nullptr) override;
  Result<void> add_address(const std::string& dev, const std::string& cidr, int ifindex = 0) override;
  Result<void> remove_address(const std::string& dev, const std::string& cidr) override;

  std::map<std::string, std::map<std::string, std::map<std::string, std::uint64_t>>> stats;  // netns -> dev -> counters
  std::vector<std::string> log;  // "add veth vA/vB", "remove vA vB", "up vA", "mtu vA 9000", "addr add ...", ...
  int remove_calls = 0;          // how many remove() calls (batching is visible here)

 private:
  FakeNetns& netns_;
};

class FakeEthtool final : public sys::Ethtool {
 public:
  Result<std::map<std::string, sys::Feature>> features(const std::string& dev) override;
  Result<std::map<std::string, bool>> set_features(const std::string& dev,
                                                   const std::map<std::string, bool>& wanted) override;

  std::map<std::string, std::map<std::string, sys::Feature>> devs;  // dev -> features
  std::vector<std::string> log;
  int set_errno = 0;  // set_features() fails with this errno when not 0 (EPERM: not root)
  // A feature that follows when another changes to a value, as the kernel's
  // dependencies do (tx-checksumming off takes segmentation along):
  // (feature, value) -> (follower, its value then).
  std::map<std::pair<std::string, bool>, std::pair<std::string, bool>> drags;
};

// The sysctls of sys::SysctlModel (`values`: the test puts the host's there).
class FakeSysctl final : public sys::Sysctl, public sys::SysctlModel {
 public:
  Result<std::string> read(const std::string& key) override;
  Result<void> write(const std::string& key, const std::string& value) override;

  std::vector<std::string> log;
  std::set<std::string> read_only;  // keys whose write() fails with EACCES
};

// Records commands; answers from `replies` (command prefix -> JSON) when one
// matches. Otherwise the in-memory nftables of sys/model/nft.h answers (its
// `tables` are open to the test); commands it does not model answer null.
class FakeNft final : public sys::Nft, public sys::NftModel {
 public:
  Result<nlohmann::json> run(const std::string& command) override;

  std::vector<std::string> commands;
  std::vector<std::pair<std::string, nlohmann::json>> replies;
  std::set<std::string> failing;  // command prefixes that fail
  int error_code = ENOENT;        // the errno `failing` commands report
  // Called before each command: a test moves counters here as if traffic flowed.
  std::function<void(FakeNft&)> before_each;
};

// The root qdiscs of sys::QdiscModel (`root`, `specs`), with netem present
// or not as the test says, and prepared statistics.
class FakeQdiscs final : public sys::Qdiscs, public sys::QdiscModel {
 public:
  Result<bool> netem_available() override { return netem; }
  Result<std::optional<std::string>> root_kind(const std::string& dev) override;
  Result<void> add_netem(const std::string& dev, const sys::NetemSpec& spec) override;
  Result<sys::QdiscStats> root_stats(const std::string& dev) override;
  Result<void> remove_root(const std::string& dev) override;

  bool netem = true;
  sys::QdiscStats stats;
  std::vector<std::string> log;
};

// Answers every ping with `replies` of the `count` sent.
class FakePinger final : public sys::Pinger {
 public:
  explicit FakePinger(FakeClock* clock = nullptr) : clock(clock) {}
  Result<sys::PingResult> ping(const sys::PingSpec& spec, sys::SteadyTime deadline, sys::Interrupt& interrupt) override;

  std::optional<int> replies;  // unset: all
  std::vector<sys::PingSpec> calls;
  std::optional<Error> error;     // set: ping() fails with it (could not run)
  std::string send_error;         // set: every request was refused with this text, nothing came back
  std::optional<Duration> takes;  // set: virtual time a whole ping takes; cut short at the deadline
  FakeClock* clock = nullptr;     // moved on by `takes`
};

// rdma_rxe and the RDMA stack as modules, rxe devices over FakeLinks'
// interfaces (sys::RdmaModel: a device goes with its netdev, as in the
// kernel), ports whose state follows the netdev unless a test decides, and
// rxe's UDP 4791 sockets: per namespace that holds an rxe device (Linux 7.1
// and later), or in the initial namespace only (before, e.g. 6.1).
class FakeRdma final : public sys::Rdma, public sys::RdmaModel {
 public:
  FakeRdma(FakeNetns& netns, FakeLinks& links);
  Result<bool> module_loaded(const std::string& name) override;
  Result<std::vector<std::string>> modules_to_load(const std::string& name) override;
  Result<void> load_module(const std::string& name, const std::string& options) override;
  Result<std::map<std::string, std::string>> module_parameters(const std::string& name) override;
  Result<void> unload_module(const std::string& name) override;
  Result<std::vector<sys::SoftDevice>> soft_devices() override;
  Result<void> add_soft_device(const std::string& type, const std::string& name, const std::string& netdev) override;
  Result<void> remove_device(unsigned index) override;
  Result<sys::PortState> port_state(const std::string& dev, unsigned port) override;
  Result<sys::PortMtu> port_mtu(const std::string& dev, unsigned port) override;
  // `gid_tables` when set for the device, else rxe's: the netdev's IPv6
  // link-local address (fe80::1 here), then one RoCE v2 entry per IPv4 address.
  Result<std::vector<sys::GidEntry>> gids(const std::string& dev, unsigned port) override;
  Result<sys::Counters> counters(const std::string& dev, unsigned port) override;
  Result<bool> udp4791_listening() override;
  // True once `cm_listen_after` calls have answered false (a server coming
  // up); an error when cm_probe_error is set (a kernel without the dump).
  Result<bool> cm_listening(std::uint16_t port) override;
  int cm_listen_after = 0;
  int cm_probes = 0;
  std::vector<std::uint16_t> cm_probed_ports;
  bool cm_probe_error = false;

  // `modules` starts as this kernel's: rdma_rxe, rdma_ucm and what they need.
  std::map<std::string, int> busy;  // module -> unload attempts that still fail with EBUSY
  int load_errno = 0;               // load_module() fails with it when not 0 (EPERM: not root)
  // module -> the parameters it has, with their defaults: load_module()
  // refuses others (EINVAL, as the kernel does).
  std::map<std::string, std::map<std::string, std::string>> known_parameters;
  // module -> its parameters while loaded (module_parameters()).
  std::map<std::string, std::map<std::string, std::string>> parameters;
  std::map<unsigned, int> hidden;  // device index -> soft_devices() calls that do not list it yet
  int hidden_for = 0;              // a new device shows in soft_devices() after this many calls
  bool per_netns_udp = true;       // false: a kernel before 7.1
  // Unset: ACTIVE when the netdev is up with carrier, else DOWN.
  std::function<int(const Device&)> state_of;
  // When set and it returns an error, port_state fails with it (a device the
  // kernel is removing: its attributes fail to read while it is listed).
  std::function<std::optional<Error>(const Device&)> port_fault;
  std::optional<sys::PortMtu> mtu = sys::PortMtu{1024, 4096};    // unset: port_mtu() fails
  std::map<std::string, std::vector<sys::GidEntry>> gid_tables;  // device -> its table, overriding rxe's
  std::map<std::string, sys::Counters> device_counters;          // device -> counters (none: empty)
  std::vector<std::string> log;  // "load rdma_rxe", "unload rdma_rxe", "add rxe0 vA", "delete rxe0"

 private:
  FakeNetns& netns_;
  FakeLinks& links_;
};

}  // namespace rxerun::fakes

#include "fakes/fake_capture.h"
#include "fakes/fake_nvme.h"
#include "fakes/fake_routes.h"
#include "fakes/fake_tools.h"
#include "fakes/fake_verbs.h"

namespace rxerun::fakes {

struct FakeSystem {
  FakeClock clock;
  FakeNetns netns;
  sys::Interrupt interrupt;
  FakeLinks links{netns};
  FakeEthtool ethtool;
  FakeSysctl sysctl;
  FakeNft nft;
  FakeQdiscs qdiscs;
  FakePinger pinger{&clock};
  FakeRdma rdma{netns, links};
  FakeRoutes routes;
  FakeTools tools;
  FakeVerbs verbs;
  FakeCaptures captures;
  FakeNvme nvme{rdma};
  FakeKernelLog kernel_log{clock};
  sys::System system{clock,  netns, interrupt, links, ethtool, sysctl,   nft,  qdiscs,
                     pinger, rdma,  routes,    tools, verbs,   captures, nvme, kernel_log};
};

}  // namespace rxerun::fakes
