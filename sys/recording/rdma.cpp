#include "sys/recording/rdma.h"

#include <cerrno>
#include <filesystem>

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

Result<bool> RecordingRdma::module_loaded(const std::string& name) {
  if (model_.loaded.count(name)) return true;
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

Result<void> RecordingRdma::load_module(const std::string& name, const std::string& options) {
  std::vector<std::string> argv = {"modprobe", name};
  for (const auto& o : split_words(options)) argv.push_back(o);
  log_.record_anywhere("load kernel module " + name + (options.empty() ? "" : " with " + options), shell_join(argv));
  model_.load(name);
  unloaded_.erase(name);
  options_[name] = options;
  return {};
}

Result<std::map<std::string, std::string>> RecordingRdma::module_parameters(const std::string& name) {
  std::map<std::string, std::string> out;
  if (auto it = options_.find(name); it != options_.end()) {
    // What the plan loaded it with: name=value words.
    for (const auto& o : split_words(it->second))
      if (auto eq = o.find('='); eq != std::string::npos) out[o.substr(0, eq)] = o.substr(eq + 1);
    return out;
  }
  auto loaded = module_loaded(name);
  if (!loaded) return loaded.error();
  if (!*loaded) return make_error("module " + name + " is not loaded", ENOENT);
  return out;  // the host's: not read by a plan
}

Result<void> RecordingRdma::unload_module(const std::string& name) {
  auto loaded = module_loaded(name);
  if (!loaded) return loaded.error();
  if (!*loaded) return make_error("module " + name + " is not loaded", ENOENT);
  model_.loaded.insert(name);  // the host's, when the plan did not load it
  if (auto r = model_.unload(name); !r) return r;
  log_.record_anywhere("unload kernel module " + name, shell_join({"modprobe", "-r", name}));
  unloaded_.insert(name);
  return {};
}

Result<std::vector<SoftDevice>> RecordingRdma::soft_devices() {
  model_.prune(links_);
  return model_.seen_from(log_.netns(), links_);
}

Result<void> RecordingRdma::add_soft_device(const std::string& type, const std::string& name,
                                            const std::string& netdev) {
  model_.prune(links_);
  if (auto added = model_.create_device(type, name, log_.netns(), netdev, links_); !added) return added;
  log_.record("add " + type + " device " + name + " over " + netdev,
              shell_join({"rdma", "link", "add", name, "type", type, "netdev", netdev}));
  return {};
}

Result<void> RecordingRdma::remove_device(unsigned index) {
  model_.prune(links_);
  auto name = model_.delete_device(index);
  if (!name) return name.error();
  // Device names are global: the command works from any namespace.
  log_.record_anywhere("delete rxe device " + *name, shell_join({"rdma", "link", "delete", *name}));
  return {};
}

Result<PortState> RecordingRdma::port_state(const std::string&, unsigned) {
  return PortState{4, "ACTIVE", 5, "LinkUp"};
}

Result<PortMtu> RecordingRdma::port_mtu(const std::string&, unsigned) {
  return PortMtu{1024, 4096};
}

Result<std::vector<GidEntry>> RecordingRdma::gids(const std::string& dev, unsigned port) {
  model_.prune(links_);
  auto table = model_.gid_table(dev, port, links_);
  if (!table && table.error().code == ENODEV) return std::vector<GidEntry>{};
  return table;
}

}  // namespace rxerun::sys
