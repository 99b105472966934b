#include "app/plugins.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine/plugin_kind.h"
#include "rxerun/plugin.h"

namespace rxerun {

namespace {

// What a plugin's registration hands over, checked after it returns.
class Collector final : public sdk::Registrar {
 public:
  void add(sdk::Kind kind) override { kinds.push_back(std::move(kind)); }
  std::vector<sdk::Kind> kinds;
};

// The plugin files loaded so far, by device and inode, with the path they
// were loaded by.
std::map<std::pair<dev_t, ino_t>, std::string>& loaded_files() {
  static std::map<std::pair<dev_t, ino_t>, std::string> files;
  return files;
}

struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle) ::dlclose(handle);
  }
};

}  // namespace

std::string plugin_argument_path(const std::string& given) {
  std::error_code ec;
  auto absolute = std::filesystem::absolute(given, ec);
  return ec ? given : absolute.lexically_normal().string();
}

Result<void> load_plugin(const std::string& path, Registry& registry) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return make_error("plugin " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return make_error("plugin " + path + ": not a regular file");
  const auto id = std::make_pair(st.st_dev, st.st_ino);
  if (loaded_files().count(id)) return {};

  Library library;
  library.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library.handle) return make_error(fmt::format("plugin {}: cannot load it: {}", path, ::dlerror()));
  const auto* entry = static_cast<const sdk::PluginEntry*>(::dlsym(library.handle, "rxerun_plugin"));
  if (!entry)
    return make_error(
        fmt::format("plugin {}: not an rxerun plugin: it has no entry point rxerun_plugin "
                    "(RXERUN_PLUGIN in rxerun/plugin.h defines it)",
                    path));
  if (entry->sdk_version != sdk::kVersion)
    return make_error(
        fmt::format("plugin {} was built for rxerun SDK version {}; this rxerun has SDK version {}: "
                    "rebuild it against this rxerun's SDK",
                    path, entry->sdk_version, sdk::kVersion));
  if (!entry->register_kinds) return make_error(fmt::format("plugin {}: its entry point registers nothing", path));

  std::vector<Kind> kinds;
  {
    Collector collector;
    try {
      entry->register_kinds(collector);
    } catch (const std::exception& e) {
      return make_error(fmt::format("plugin {}: registering its kinds failed: {}", path, e.what()));
    } catch (...) {
      return make_error(
          fmt::format("plugin {}: registering its kinds failed (an exception that is no "
                      "std::exception)",
                      path));
    }
    if (collector.kinds.empty()) return make_error(fmt::format("plugin {} declares no step kind", path));
    for (auto& k : collector.kinds) {
      if (!k.run) return make_error(fmt::format("plugin {}: step kind '{}' has no run function", path, k.spec.name));
      kinds.push_back(plugin_kind(std::move(k), path));
    }
  }
  if (auto added = registry.add(std::move(kinds)); !added) return added;
  loaded_files().emplace(id, path);
  library.handle = nullptr;  // its kinds' code stays for the life of the process
  return {};
}

void load_journal_plugins(const Journal& journal, Registry& registry) {
  for (const auto& entry : journal.pending()) {
    if (entry.plugin.empty() || registry.find(entry.kind) || registry.plugin_failure(entry.plugin)) continue;
    if (auto loaded = load_plugin(entry.plugin, registry); !loaded)
      registry.note_plugin_failure(entry.plugin, loaded.error().message);
  }
}

}  // namespace rxerun
