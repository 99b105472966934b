#include "engine/loader_top.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <vector>

#include "base/duration.h"
#include "base/files.h"
#include "base/utf8.h"
#include "engine/loader_document.h"
#include "engine/loader_steps.h"

namespace rxerun::loading {

namespace {

const std::vector<std::string> kTopKeys{"name",          "description", "include", "vars",  "vm",
                                        "kernel_health", "plugins",     "nodes",   "wires", "steps"};
const std::vector<std::string> kKernelHealthPolicies{"fail", "warn", "off"};
const std::vector<std::string> kVmKeys{"kernel", "kernels", "timeout"};

bool valid_scenario_name(std::string_view s) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  return s.size() <= 64 && std::regex_match(s.begin(), s.end(), kName);
}

// "veth pair (copy).yaml" -> "veth-pair--copy"
std::string name_from_file(const std::string& file) {
  std::string stem = std::filesystem::path(file).stem().string();
  for (char& c : stem) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) c = '-';
  }
  std::size_t first = 0;
  while (first < stem.size() && !std::isalnum(static_cast<unsigned char>(stem[first]))) ++first;
  stem = stem.substr(first, 64);
  return stem.empty() ? "scenario" : stem;
}

// A top-level key read after the others, and its value.
struct LaterKey {
  std::optional<YAML::Node> value;
  YAML::Node key;
};

}  // namespace

void TopLevelReader::read(const YAML::Node& root) {
  if (!root.IsMap()) {
    sink_.error(root, fmt::format("a scenario must be a mapping with 'steps', got {}", type_name(root)));
    return;
  }
  scenario_.file = sink_.file();
  scenario_.name = name_from_file(sink_.file());
  std::vector<IncludedFile> included;
  for_each_pair(root, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (key == "include") included = IncludeReader(sink_, sink_.file()).read(value, key_node);
  });
  read_variables(root, included);
  LaterKey nodes, wires;
  for_each_pair(root, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (key == "name")
      read_name(value, key_node);
    else if (key == "description")
      read_description(value, key_node);
    else if (key == "vm")
      read_vm(value, key_node);
    else if (key == "kernel_health")
      read_kernel_health(value, key_node);
    else if (key == "plugins")
      read_plugins(value, key_node);
    else if (key == "nodes")
      nodes = {value, key_node};
    else if (key == "wires")
      wires = {value, key_node};
    else if (key != "vars" && key != "steps" && key != "include" && !key.starts_with("x-"))
      sink_.error(key_node,
                  fmt::format("unknown key '{}' at the top level{}", excerpt(key), did_you_mean(key, kTopKeys)));
  });
  // Nodes before wires (which name them) and steps (which run on them).
  if (nodes.value) nodes_.read_nodes(*nodes.value, nodes.key, vm_kernels_mark_);
  if (wires.value && !nodes.value)
    sink_.error(wires.key, "'wires' joins nodes' NICs, but the scenario declares no 'nodes' (nodes: {a: {}, b: {}})");
  else if (wires.value)
    nodes_.read_wires(*wires.value, wires.key);
  read_steps(root, included);
}

void TopLevelReader::read_variables(const YAML::Node& root, const std::vector<IncludedFile>& included) {
  for (const auto& file : included) {
    ReadingFile reading(sink_, file.file, file.note);
    for_each_pair(file.root, [&](const std::string& key, const YAML::Node&, const YAML::Node& value) {
      if (key == "vars") vars_.read(value);
    });
  }
  for_each_pair(root, [&](const std::string& key, const YAML::Node&, const YAML::Node& value) {
    if (key == "vars") vars_.read(value);
  });
  for (const auto& path : options_.var_files) read_var_file(path);
  vars_.read_overrides(options_.var_overrides);
}

void TopLevelReader::read_var_file(const std::string& path) {
  auto text = read_file_capped(path, kMaxScenarioBytes, "variables file");
  if (!text) {
    sink_.add(Diagnostic{path, Mark{}, text.error().message});
    return;
  }
  ReadingFile reading(sink_, path, "");
  auto root = DocumentReader(sink_, "empty variables file: expected a mapping of names to values").read(*text);
  if (root) vars_.read_file(*root);
}

void TopLevelReader::read_steps(const YAML::Node& root, const std::vector<IncludedFile>& included) {
  std::vector<StepList> lists;
  for (const auto& file : included) {
    for_each_pair(file.root, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
      if (key == "steps") lists.push_back({value, key_node, file.file, file.note});
    });
  }
  bool has_steps = false;
  for_each_pair(root, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (key != "steps") return;
    lists.push_back({value, key_node, sink_.file(), sink_.note()});
    has_steps = true;
  });
  if (!has_steps) {
    sink_.error(root, "missing 'steps': a scenario needs a list of steps");
    return;
  }
  StepReader(registry_, vars_, steps_, nodes_, sink_, lenient_kinds_).read(lists);
}

void TopLevelReader::read_plugins(const YAML::Node& value, const YAML::Node& key) {
  if (!value.IsSequence()) {
    sink_.error(value.IsNull() ? key : value,
                fmt::format("'plugins' must be a list of paths, got {}", type_name(value)));
    return;
  }
  const std::filesystem::path dir = std::filesystem::path(sink_.file()).parent_path();
  for (const auto& item : value) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      sink_.error(item, fmt::format("a plugin must be the path of a shared object, got {}", type_name(item)));
      continue;
    }
    std::filesystem::path path(item.Scalar());
    if (path.is_relative()) path = dir / path;
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
    if (ec) {
      sink_.error(item, fmt::format("plugin '{}': {}", excerpt(item.Scalar()), ec.message()));
      continue;
    }
    if (options_.load_plugin) {
      if (auto loaded = options_.load_plugin(absolute); !loaded) {
        // Steps of its kinds are not reported as steps without a kind.
        lenient_kinds_ = true;
        if (!options_.plugins_may_fail) {
          sink_.error(item, loaded.error().message);
          continue;
        }
        sink_.warning(item, loaded.error().message);
      }
    }
    scenario_.plugins.push_back(absolute);
  }
}

void TopLevelReader::read_name(const YAML::Node& value, const YAML::Node& key) {
  auto s = scalar_text(value, key, "name", sink_);
  if (!s) return;
  if (!valid_scenario_name(*s)) {
    sink_.error(value, fmt::format("'name' must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter "
                                   "or digit, got '{}'",
                                   excerpt(*s)));
    return;
  }
  scenario_.name = *s;
}

void TopLevelReader::read_description(const YAML::Node& value, const YAML::Node& key) {
  if (value.IsNull()) return;
  auto s = scalar_text(value, key, "description", sink_);
  if (!s) return;
  if (auto e = vars_.expand(*s, mark_of(value))) scenario_.description = *e;
}

void TopLevelReader::read_vm(const YAML::Node& value, const YAML::Node& key) {
  if (!value.IsMap()) {
    sink_.error(value.IsNull() ? key : value,
                fmt::format("'vm' must be a mapping such as {{kernel: \"7.3\"}}, got {}", type_name(value)));
    return;
  }
  for_each_pair(value, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
    if (k != "kernel" && k != "kernels" && k != "timeout") {
      sink_.error(key_node, fmt::format("unknown key '{}' in 'vm'{}", excerpt(k), did_you_mean(k, kVmKeys)));
    } else if (k == "kernels") {
      vm_kernels_mark_ = mark_of(key_node);
      read_vm_kernels(v, key_node);
    } else {
      read_vm_key(k, key_node, v);
    }
  });
  if (scenario_.vm_kernel && !scenario_.vm_kernels.empty())
    sink_.error(value["kernels"],
                "'vm' names both 'kernel' and 'kernels': use 'kernels' alone to run on several kernels");
}

void TopLevelReader::read_vm_key(const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
  auto s = scalar_text(value, key_node, "vm." + key, sink_);
  if (!s) return;
  auto e = vars_.expand(*s, mark_of(value));
  if (!e) return;
  if (key == "timeout") {
    bool too_long = false;
    auto d = parse_duration(*e, &too_long);
    if (too_long)
      sink_.error(value, fmt::format("'vm.timeout' is '{}', longer than 876000h (a hundred years), the longest "
                                     "duration rxerun takes",
                                     excerpt(*e)));
    else if (!d || d->count() <= 0)
      sink_.error(
          value, fmt::format("'vm.timeout' must be a positive duration with a unit (90s, 10m), got '{}'", excerpt(*e)));
    else
      scenario_.vm_timeout = *d;
  } else if (e->empty()) {
    sink_.error(value, "'vm.kernel' cannot be empty");
  } else {
    scenario_.vm_kernel = *e;
  }
}

void TopLevelReader::read_vm_kernels(const YAML::Node& value, const YAML::Node& key) {
  if (!value.IsSequence() || value.size() == 0) {
    sink_.error(value.IsNull() ? key : value,
                fmt::format("'vm.kernels' must be a list of lab kernels such as [\"6.1\", \"7.3\"], got {}",
                            value.IsSequence() ? "an empty list" : type_name(value)));
    return;
  }
  for (const auto& item : value) {
    auto s = scalar_text(item, key, "vm.kernels", sink_);
    if (!s) continue;
    auto e = vars_.expand(*s, mark_of(item));
    if (!e) continue;
    if (e->empty()) {
      sink_.error(item, "a kernel in 'vm.kernels' cannot be empty");
    } else if (std::find(scenario_.vm_kernels.begin(), scenario_.vm_kernels.end(), *e) != scenario_.vm_kernels.end()) {
      sink_.error(item, fmt::format("kernel '{}' is in 'vm.kernels' twice", excerpt(*e)));
    } else {
      scenario_.vm_kernels.push_back(*e);
    }
  }
}

void TopLevelReader::read_kernel_health(const YAML::Node& value, const YAML::Node& key) {
  auto s = scalar_text(value, key, "kernel_health", sink_);
  if (!s) return;
  auto e = vars_.expand(*s, mark_of(value));
  if (!e) return;
  if (auto p = parse_kernel_health_policy(*e))
    scenario_.kernel_health = *p;
  else
    sink_.error(value, fmt::format("'kernel_health' must be fail, warn or off, got '{}'{}", excerpt(*e),
                                   did_you_mean(*e, kKernelHealthPolicies)));
}

}  // namespace rxerun::loading
