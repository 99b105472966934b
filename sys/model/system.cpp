#include "sys/model/system.h"

#include <filesystem>
#include <fstream>

#include "sys/mountinfo.h"

namespace rxerun::sys {

ModelSystem::ModelSystem() {
  for (NetnsScoped* s : std::initializer_list<NetnsScoped*>{&links, &ethtool, &sysctl, &nft, &qdiscs, &routes})
    netns.scope(*s);
}

void make_plan_world(ModelSystem& m) {
  m.kernel.open_world = true;
  m.system.recorder = &m.kernel;
  // Reading the host changes nothing.
  m.sysctl.host_value = [](const std::string& key) -> std::optional<std::string> {
    std::ifstream in(sysctl_path(key));
    std::string value;
    if (in && std::getline(in, value)) return value;
    return std::nullopt;
  };
  m.modules.host_loaded = [](const std::string& name) {
    std::error_code ec;
    return std::filesystem::exists("/sys/module/" + name, ec);
  };
  m.storage.host_has = [](const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec);
  };
  m.storage.host_configfs = [] {
    const auto mounts = read_mountinfo();
    return mounts && mount_at(*mounts, kConfigfsPath, "configfs");
  };
}

}  // namespace rxerun::sys
