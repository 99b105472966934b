#include "sys/recording/rdma.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

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

}  // namespace rxerun::sys
