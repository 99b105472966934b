#pragma once
// The implementations `rxerun plan` runs a scenario against: they change
// nothing and note each action with the shell command a person would type.
// Waits return at once (virtual time moves on). Reads answer from what the
// plan itself created, so that later steps see earlier steps' work.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sys/nft_model.h"
#include "sys/system.h"

namespace rxerun::sys {

class ActionLog final : public Recorder {
 public:
  void record(PlannedAction action) override;
  void record(std::string what, std::string shell) { record(PlannedAction{std::move(what), std::move(shell)}); }
  // For a command that names its namespace itself (`ip -n NAME ...`): it runs
  // as it is from any namespace, so it is not wrapped in `ip netns exec`.
  void record_anywhere(std::string what, std::string shell);
  std::vector<PlannedAction> take();  // the actions since the last take()

  // The namespace that later actions happen in ("" for rxerun's own).
  void set_netns(std::string name) { netns_ = std::move(name); }
  const std::string& netns() const { return netns_; }

 private:
  std::vector<PlannedAction> actions_;
  std::string netns_;
};

class RecordingClock final : public Clock {
 public:
  explicit RecordingClock(ActionLog& log) : log_(log) {}
  SteadyTime now() override { return now_; }
  WaitResult wait_until(SteadyTime until, Interrupt& interrupt) override;

 private:
  ActionLog& log_;
  SteadyTime now_{};
};

class RecordingNetns final : public Netns {
 public:
  explicit RecordingNetns(ActionLog& log) : log_(log) {}
  Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) override;
  Result<bool> exists(const std::string& name) override;
  Result<void> create(const std::string& name) override;
  Result<void> remove(const std::string& name) override;
  // A plan knows no inode: 0, which the undos do not compare.
  Result<std::uint64_t> inode(const std::string&) override { return std::uint64_t{0}; }
  Result<std::uint64_t> current_inode() override { return std::uint64_t{0}; }

 private:
  ActionLog& log_;
  std::set<std::string> created_;
};

// Interfaces the plan created exist (keyed by namespace and name); nothing else does.
class RecordingLinks final : public Links {
 public:
  explicit RecordingLinks(ActionLog& log) : log_(log) {}
  Result<std::optional<LinkInfo>> get(const std::string& name) override;
  Result<std::vector<LinkInfo>> list() override;
  // The plan's interfaces, all counters 0.
  Result<std::vector<LinkStats>> statistics() override;
  // What the plan put on `dev` in `netns` so far.
  std::vector<std::string> addresses_in(const std::string& netns, const std::string& dev) const;
  Result<void> add_veth(const VethSpec& spec) override;
  Result<void> remove(const std::vector<std::string>& names) override;
  Result<void> set_up(const std::string& name, bool up) override;
  Result<void> set_mtu(const std::string& name, unsigned mtu) override;
  Result<void> set_alias(const std::string& name, const std::string& alias) override;
  Result<std::vector<std::string>> addresses(const std::string& dev, int* ifindex = nullptr) override;
  Result<void> add_address(const std::string& dev, const std::string& cidr, int ifindex = 0) override;
  Result<void> remove_address(const std::string& dev, const std::string& cidr) override;

 private:
  LinkInfo* find(const std::string& name);
  ActionLog& log_;
  std::map<std::pair<std::string, std::string>, LinkInfo> links_;  // (netns, name)
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> addresses_;
};

// Features are unknown in a plan: reads return none, so steps request everything asked for.
class RecordingEthtool final : public Ethtool {
 public:
  explicit RecordingEthtool(ActionLog& log) : log_(log) {}
  Result<std::map<std::string, Feature>> features(const std::string& dev) override;
  Result<std::map<std::string, bool>> set_features(const std::string& dev,
                                                   const std::map<std::string, bool>& wanted) override;

 private:
  ActionLog& log_;
};

// Reads what the plan wrote, else the host's value in rxerun's own namespace
// (reading /proc/sys changes nothing). A value the plan cannot know (inside a
// namespace, of an interface that does not exist yet) reads as
// kValueAtRunTime; writing that back is listed as known only at run time,
// never as `sysctl -w KEY=` some made-up value. Writes are recorded.
class RecordingSysctl final : public Sysctl {
 public:
  static constexpr const char* kValueAtRunTime = "(the value found at run time)";

  explicit RecordingSysctl(ActionLog& log) : log_(log) {}
  Result<std::string> read(const std::string& key) override;
  Result<void> write(const std::string& key, const std::string& value) override;

 private:
  ActionLog& log_;
  std::map<std::pair<std::string, std::string>, std::string> written_;  // (netns, key)
};

// Records every command and answers from an in-memory nftables per namespace
// holding what the plan created, so that an undo lists, and then deletes,
// the rules its step added.
class RecordingNft final : public Nft {
 public:
  explicit RecordingNft(ActionLog& log) : log_(log) {}
  Result<nlohmann::json> run(const std::string& command) override;

 private:
  ActionLog& log_;
  std::map<std::string, NftModel> models_;  // by namespace
};

class RecordingQdiscs final : public Qdiscs {
 public:
  explicit RecordingQdiscs(ActionLog& log) : log_(log) {}
  Result<bool> netem_available() override { return true; }
  Result<std::optional<std::string>> root_kind(const std::string& dev) override;
  Result<void> add_netem(const std::string& dev, const NetemSpec& spec) override;
  Result<QdiscStats> root_stats(const std::string& dev) override;
  Result<void> remove_root(const std::string& dev) override;

 private:
  ActionLog& log_;
  std::set<std::pair<std::string, std::string>> netem_;
};

// A ping changes nothing; the plan shows the command and assumes every reply comes back.
class RecordingPinger final : public Pinger {
 public:
  explicit RecordingPinger(ActionLog& log) : log_(log) {}
  Result<PingResult> ping(const PingSpec& spec, SteadyTime deadline, Interrupt& interrupt) override;

 private:
  ActionLog& log_;
};

// Modules the plan loaded, or that this host has loaded (/sys/module: reading
// it changes nothing), count as loaded; rxe devices are those the plan
// added. Ports of any device read ACTIVE and rxe's UDP socket is assumed
// there: the plan previews the run where everything goes as intended.
class RecordingRdma final : public Rdma {
 public:
  RecordingRdma(ActionLog& log, RecordingLinks& links) : log_(log), links_(links) {}
  Result<bool> module_loaded(const std::string& name) override;
  Result<std::vector<std::string>> modules_to_load(const std::string& name) override;
  Result<void> load_module(const std::string& name) override;
  Result<void> unload_module(const std::string& name) override;
  Result<std::vector<RxeDevice>> rxe_devices() override;
  Result<void> add_rxe(const std::string& name, const std::string& netdev) override;
  Result<void> remove_device(unsigned index) override;
  Result<PortState> port_state(const std::string& dev, unsigned port) override;
  Result<PortMtu> port_mtu(const std::string& dev, unsigned port) override;
  // A link-local entry and one RoCE v2 entry per IPv4 address the plan put
  // on the netdev, in that order (rxe's).
  Result<std::vector<GidEntry>> gids(const std::string& dev, unsigned port) override;
  // Nothing has counted anything yet.
  Result<Counters> counters(const std::string&, unsigned) override { return Counters{}; }
  Result<bool> udp4791_listening() override { return true; }
  Result<bool> cm_listening(std::uint16_t) override { return true; }

 private:
  struct Device {
    unsigned index;
    std::string name, netns, netdev;
  };
  ActionLog& log_;
  RecordingLinks& links_;
  std::set<std::string> loaded_, unloaded_;
  std::vector<Device> devices_;
  unsigned next_index_ = 1;
};

}  // namespace rxerun::sys

#include "sys/routes_recording.h"
#include "sys/tools_recording.h"
#include "sys/verbs_recording.h"
#include "sys/capture_recording.h"

namespace rxerun::sys {

// Everything above, wired into one System.
class RecordingSystem {
 public:
  RecordingSystem();
  System& system() { return system_; }
  ActionLog& log() { return log_; }

 private:
  ActionLog log_;
  RecordingClock clock_{log_};
  RecordingNetns netns_{log_};
  Interrupt interrupt_;
  RecordingLinks links_{log_};
  RecordingEthtool ethtool_{log_};
  RecordingSysctl sysctl_{log_};
  RecordingNft nft_{log_};
  RecordingQdiscs qdiscs_{log_};
  RecordingPinger pinger_{log_};
  RecordingRdma rdma_{log_, links_};
  RecordingRoutes routes_{log_};
  RecordingTools tools_{log_};
  RecordingVerbs verbs_{log_};
  RecordingCaptures captures_{log_};
  System system_{clock_,  netns_,  interrupt_, links_, ethtool_, sysctl_,   nft_,
                 qdiscs_, pinger_, rdma_,      routes_, tools_, verbs_, captures_, &log_};
};

}  // namespace rxerun::sys
