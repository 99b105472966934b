#include "sys/recording.h"

#include "sys/sysctl.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/strings.h"
#include "base/duration.h"

namespace rxerun::sys {

void ActionLog::record(PlannedAction action) {
  if (!netns_.empty() && !action.shell.empty())
    action.shell = shell_join({"ip", "netns", "exec", netns_}) + " " + action.shell;
  actions_.push_back(std::move(action));
}

void ActionLog::record_anywhere(std::string what, std::string shell) {
  actions_.push_back(PlannedAction{std::move(what), std::move(shell)});
}

std::vector<PlannedAction> ActionLog::take() {
  std::vector<PlannedAction> out;
  out.swap(actions_);
  return out;
}

WaitResult RecordingClock::wait_until(SteadyTime until, Interrupt&) {
  if (until > now_) {
    if (until == SteadyTime::max()) {
      log_.record({"wait without end", ""});
    } else {
      auto d = std::chrono::ceil<std::chrono::milliseconds>(until - now_);
      auto ms = d.count();
      std::string secs = fmt::format("{:.3f}", ms / 1000.0);  // sleep(1) takes decimals
      secs.erase(secs.find_last_not_of('0') + 1);
      if (secs.back() == '.') secs.pop_back();
      log_.record({"wait " + rxerun::format_duration(d), shell_join({"sleep", secs})});
      now_ = until;
    }
  }
  return WaitResult::Reached;
}

namespace {

class RecordingScope final : public NetnsScope {
 public:
  RecordingScope(ActionLog& log, std::string previous) : log_(log), previous_(std::move(previous)) {}
  ~RecordingScope() override { log_.set_netns(previous_); }

 private:
  ActionLog& log_;
  std::string previous_;
};

std::string seconds(Duration d) {
  std::string s = fmt::format("{:.3f}", d.count() / 1000.0);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string pct(double v) {
  std::string s = fmt::format("{:.3f}", v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s + "%";
}

}  // namespace

Result<std::unique_ptr<NetnsScope>> RecordingNetns::enter(const std::string& name) {
  auto scope = std::make_unique<RecordingScope>(log_, log_.netns());
  log_.set_netns(name);
  return std::unique_ptr<NetnsScope>(std::move(scope));
}

Result<bool> RecordingNetns::exists(const std::string& name) { return created_.count(name) > 0; }

Result<void> RecordingNetns::create(const std::string& name) {
  created_.insert(name);
  log_.record("create network namespace " + name, shell_join({"ip", "netns", "add", name}));
  return {};
}

Result<void> RecordingNetns::remove(const std::string& name) {
  created_.erase(name);
  log_.record("delete network namespace " + name, shell_join({"ip", "netns", "del", name}));
  return {};
}

LinkInfo* RecordingLinks::find(const std::string& name) {
  auto it = links_.find({log_.netns(), name});
  return it == links_.end() ? nullptr : &it->second;
}

Result<std::optional<LinkInfo>> RecordingLinks::get(const std::string& name) {
  if (auto* l = find(name)) return std::optional<LinkInfo>(*l);
  return std::optional<LinkInfo>();
}

Result<std::vector<LinkInfo>> RecordingLinks::list() {
  std::vector<LinkInfo> out;
  for (const auto& [key, info] : links_)
    if (key.first == log_.netns()) out.push_back(info);
  return out;
}

Result<std::vector<LinkStats>> RecordingLinks::statistics() {
  std::vector<LinkStats> out;
  for (const auto& [key, info] : links_)
    if (key.first == log_.netns()) out.push_back({info.name, {}});
  return out;
}

std::vector<std::string> RecordingLinks::addresses_in(const std::string& netns, const std::string& dev) const {
  auto it = addresses_.find({netns, dev});
  return it == addresses_.end() ? std::vector<std::string>{} : it->second;
}

Result<void> RecordingLinks::add_veth(const VethSpec& spec) {
  std::vector<std::string> cmd{"ip", "link", "add", spec.name};
  if (spec.mtu) cmd.insert(cmd.end(), {"mtu", std::to_string(spec.mtu)});
  cmd.insert(cmd.end(), {"type", "veth", "peer", "name", spec.peer});
  if (!spec.peer_netns.empty()) cmd.insert(cmd.end(), {"netns", spec.peer_netns});
  log_.record("create veth pair " + spec.name + "/" + spec.peer, shell_join(cmd));
  const std::string peer_ns = spec.peer_netns.empty() ? log_.netns() : spec.peer_netns;
  unsigned mtu = spec.mtu ? spec.mtu : 1500;
  links_[{log_.netns(), spec.name}] = LinkInfo{0, spec.name, "veth", spec.alias, false, false, mtu};
  links_[{peer_ns, spec.peer}] = LinkInfo{0, spec.peer, "veth", spec.alias, false, false, mtu};
  if (!spec.alias.empty()) {
    log_.record("mark " + spec.name, shell_join({"ip", "link", "set", spec.name, "alias", spec.alias}));
    const std::string peer_mark = shell_join({"link", "set", spec.peer, "alias", spec.alias});
    if (spec.peer_netns.empty()) {
      log_.record("mark " + spec.peer, "ip " + peer_mark);
    } else {
      log_.record_anywhere("mark " + spec.peer, shell_join({"ip", "-n", spec.peer_netns}) + " " + peer_mark);
    }
  }
  return {};
}

Result<void> RecordingLinks::remove(const std::vector<std::string>& names) {
  for (const auto& n : names) {
    log_.record("delete interface " + n, shell_join({"ip", "link", "del", n}));
    links_.erase({log_.netns(), n});
  }
  return {};
}

Result<void> RecordingLinks::set_up(const std::string& name, bool up) {
  log_.record(std::string(up ? "bring up " : "bring down ") + name,
              shell_join({"ip", "link", "set", name, up ? "up" : "down"}));
  if (auto* l = find(name)) l->up = up;
  return {};
}

Result<void> RecordingLinks::set_mtu(const std::string& name, unsigned mtu) {
  log_.record("set the MTU of " + name, shell_join({"ip", "link", "set", name, "mtu", std::to_string(mtu)}));
  if (auto* l = find(name)) l->mtu = mtu;
  return {};
}

Result<void> RecordingLinks::set_alias(const std::string& name, const std::string& alias) {
  log_.record("mark " + name, shell_join({"ip", "link", "set", name, "alias", alias}));
  if (auto* l = find(name)) l->alias = alias;
  return {};
}

Result<std::vector<std::string>> RecordingLinks::addresses(const std::string& dev, int* ifindex) {
  if (ifindex) *ifindex = 0;  // a plan knows no index: add_address() goes by name
  return addresses_[{log_.netns(), dev}];
}

Result<void> RecordingLinks::add_address(const std::string& dev, const std::string& cidr, int) {
  log_.record("add " + cidr + " to " + dev, shell_join({"ip", "addr", "add", cidr, "dev", dev}));
  addresses_[{log_.netns(), dev}].push_back(cidr);
  return {};
}

Result<void> RecordingLinks::remove_address(const std::string& dev, const std::string& cidr) {
  log_.record("remove " + cidr + " from " + dev, shell_join({"ip", "addr", "del", cidr, "dev", dev}));
  std::erase(addresses_[{log_.netns(), dev}], cidr);
  return {};
}

Result<std::map<std::string, Feature>> RecordingEthtool::features(const std::string&) {
  return std::map<std::string, Feature>{};
}

Result<std::map<std::string, bool>> RecordingEthtool::set_features(const std::string& dev,
                                                                   const std::map<std::string, bool>& wanted) {
  std::vector<std::string> cmd{"ethtool", "-K", dev};
  std::string what;
  for (const auto& [name, on] : wanted) {
    cmd.insert(cmd.end(), {name, on ? "on" : "off"});
    what += (what.empty() ? "" : ", ") + name + (on ? " on" : " off");
  }
  log_.record("set " + what + " on " + dev, shell_join(cmd));
  return wanted;  // what a plan assumes: each feature as asked
}

Result<std::string> RecordingSysctl::read(const std::string& key) {
  if (auto it = written_.find({log_.netns(), key}); it != written_.end()) return it->second;
  // Only rxerun's own namespace is the host's: a namespace of the plan does not exist.
  if (log_.netns().empty()) {
    std::ifstream in(sysctl_path(key));
    std::string value;
    if (in && std::getline(in, value)) return value;
  }
  return std::string(kValueAtRunTime);
}

Result<void> RecordingSysctl::write(const std::string& key, const std::string& value) {
  written_[{log_.netns(), key}] = value;
  if (value == kValueAtRunTime) {
    log_.record("set " + key + " back to the value it had before, known only at run time", "");
  } else {
    log_.record("set " + key + " to " + value, shell_join({"sysctl", "-w", key + "=" + value}));
  }
  return {};
}

Result<nlohmann::json> RecordingNft::run(const std::string& command) {
  log_.record("nftables: " + command, shell_join({"nft", command}));
  return models_[log_.netns()].apply(command);
}

Result<std::optional<std::string>> RecordingQdiscs::root_kind(const std::string& dev) {
  if (netem_.count({log_.netns(), dev})) return std::optional<std::string>("netem");
  return std::optional<std::string>();
}

Result<void> RecordingQdiscs::add_netem(const std::string& dev, const NetemSpec& spec) {
  std::vector<std::string> cmd{"tc", "qdisc", "add", "dev", dev, "root", "netem"};
  if (spec.delay) {
    cmd.insert(cmd.end(), {"delay", format_duration(*spec.delay)});
    if (spec.jitter) cmd.push_back(format_duration(*spec.jitter));
  }
  if (spec.loss_pct) cmd.insert(cmd.end(), {"loss", pct(*spec.loss_pct)});
  if (spec.duplicate_pct) cmd.insert(cmd.end(), {"duplicate", pct(*spec.duplicate_pct)});
  if (spec.corrupt_pct) cmd.insert(cmd.end(), {"corrupt", pct(*spec.corrupt_pct)});
  if (spec.reorder_pct) cmd.insert(cmd.end(), {"reorder", pct(*spec.reorder_pct)});
  if (spec.rate_bytes_per_s) cmd.insert(cmd.end(), {"rate", std::to_string(*spec.rate_bytes_per_s * 8) + "bit"});
  log_.record("add netem on " + dev, shell_join(cmd));
  netem_.insert({log_.netns(), dev});
  return {};
}

Result<QdiscStats> RecordingQdiscs::root_stats(const std::string& dev) {
  log_.record("read the qdisc statistics of " + dev, shell_join({"tc", "-s", "qdisc", "show", "dev", dev}));
  return QdiscStats{};
}

Result<void> RecordingQdiscs::remove_root(const std::string& dev) {
  log_.record("remove the root qdisc of " + dev, shell_join({"tc", "qdisc", "del", "dev", dev, "root"}));
  netem_.erase({log_.netns(), dev});
  return {};
}

Result<PingResult> RecordingPinger::ping(const PingSpec& spec, SteadyTime, Interrupt&) {
  std::vector<std::string> cmd{"ping", "-c", std::to_string(spec.count), "-i", seconds(spec.interval)};
  if (!spec.from_dev.empty()) cmd.insert(cmd.end(), {"-I", spec.from_dev});
  if (!spec.from_addr.empty()) cmd.insert(cmd.end(), {"-I", spec.from_addr});
  cmd.push_back(spec.to);
  log_.record("ping " + spec.to, shell_join(cmd));
  return PingResult{spec.count, spec.count, std::nullopt, std::nullopt, std::nullopt};
}

Result<bool> RecordingRdma::module_loaded(const std::string& name) {
  if (loaded_.count(name)) return true;
  if (unloaded_.count(name)) return false;
  std::error_code ec;
  return std::filesystem::exists("/sys/module/" + name, ec);
}

Result<std::vector<std::string>> RecordingRdma::modules_to_load(const std::string& name) {
  auto loaded = module_loaded(name);
  if (!loaded) return loaded.error();
  if (*loaded) return std::vector<std::string>{};
  return std::vector<std::string>{name};
}

Result<void> RecordingRdma::load_module(const std::string& name) {
  log_.record_anywhere("load kernel module " + name, shell_join({"modprobe", name}));
  loaded_.insert(name);
  unloaded_.erase(name);
  return {};
}

Result<void> RecordingRdma::unload_module(const std::string& name) {
  auto loaded = module_loaded(name);
  if (!loaded) return loaded.error();
  if (!*loaded) return make_error("module " + name + " is not loaded", ENOENT);
  log_.record_anywhere("unload kernel module " + name, shell_join({"modprobe", "-r", name}));
  loaded_.erase(name);
  unloaded_.insert(name);
  return {};
}

Result<std::vector<RxeDevice>> RecordingRdma::rxe_devices() {
  std::vector<RxeDevice> out;
  for (const auto& d : devices_)
    out.push_back(
        {.index = d.index, .name = d.name, .netdev = d.netns == log_.netns() ? d.netdev : "", .parent = d.netdev});
  return out;
}

Result<void> RecordingRdma::add_rxe(const std::string& name, const std::string& netdev) {
  for (const auto& d : devices_)
    if (d.name == name) return make_error("cannot add rxe device " + name + ": Too many open files in system", ENFILE);
  log_.record("add rxe device " + name + " over " + netdev,
              shell_join({"rdma", "link", "add", name, "type", "rxe", "netdev", netdev}));
  devices_.push_back({next_index_++, name, log_.netns(), netdev});
  return {};
}

Result<void> RecordingRdma::remove_device(unsigned index) {
  auto it = std::find_if(devices_.begin(), devices_.end(), [&](const Device& d) { return d.index == index; });
  if (it == devices_.end()) return make_error("no RDMA device " + std::to_string(index), ENODEV);
  // Device names are global: the command works from any namespace.
  log_.record_anywhere("delete rxe device " + it->name, shell_join({"rdma", "link", "delete", it->name}));
  devices_.erase(it);
  return {};
}

Result<PortState> RecordingRdma::port_state(const std::string&, unsigned) {
  return PortState{4, "ACTIVE", 5, "LinkUp"};
}

Result<PortMtu> RecordingRdma::port_mtu(const std::string&, unsigned) {
  return PortMtu{1024, 4096};
}

Result<std::vector<GidEntry>> RecordingRdma::gids(const std::string& dev, unsigned) {
  auto it = std::find_if(devices_.begin(), devices_.end(), [&](const Device& d) { return d.name == dev; });
  if (it == devices_.end()) return std::vector<GidEntry>{};
  std::vector<GidEntry> out = {{0, "fe80::", "RoCE v2", it->netdev}};
  for (const auto& cidr : links_.addresses_in(it->netns, it->netdev)) {
    const std::string addr = cidr.substr(0, cidr.find('/'));
    if (addr.find(':') == std::string::npos)
      out.push_back({static_cast<unsigned>(out.size()), "::ffff:" + addr, "RoCE v2", it->netdev});
  }
  return out;
}

RecordingSystem::RecordingSystem() = default;

}  // namespace rxerun::sys
