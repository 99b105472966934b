#include "engine/registry.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace rxerun {

Registry::Registry(std::vector<Kind> kinds) : kinds_(std::move(kinds)) {
  std::sort(kinds_.begin(), kinds_.end(), [](const Kind& a, const Kind& b) { return a.spec.name < b.spec.name; });
  for (std::size_t i = 0; i < kinds_.size(); ++i) {
    const auto& name = kinds_[i].spec.name;
    if (name.empty()) throw std::logic_error("a step kind has no name");
    if (i > 0 && kinds_[i - 1].spec.name == name) throw std::logic_error("step kind '" + name + "' is listed twice");
    names_.push_back(name);
  }
}

Result<void> Registry::add(std::vector<Kind> kinds) {
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const Kind& k = kinds[i];
    const std::string from = k.plugin.empty() ? std::string("this rxerun") : "plugin " + k.plugin;
    if (k.spec.name.empty()) return make_error(from + " declares a step kind without a name");
    if (const Kind* taken = find(k.spec.name))
      return make_error(fmt::format("{}: step kind '{}' is taken: {}", from, k.spec.name,
                                    taken->plugin.empty() ? "rxerun has a built-in kind of that name"
                                                          : "plugin " + taken->plugin + " declares it too"));
    for (std::size_t j = 0; j < i; ++j)
      if (kinds[j].spec.name == k.spec.name)
        return make_error(fmt::format("{}: step kind '{}' is declared twice", from, k.spec.name));
  }
  for (auto& k : kinds) {
    auto at = std::lower_bound(kinds_.begin(), kinds_.end(), k.spec.name,
                               [](const Kind& x, const std::string& n) { return x.spec.name < n; });
    names_.insert(names_.begin() + (at - kinds_.begin()), k.spec.name);
    kinds_.insert(at, std::move(k));
  }
  return {};
}

void Registry::note_plugin_failure(const std::string& plugin, std::string why) {
  plugin_failures_[plugin] = std::move(why);
}

std::optional<std::string> Registry::plugin_failure(const std::string& plugin) const {
  auto it = plugin_failures_.find(plugin);
  if (it == plugin_failures_.end()) return std::nullopt;
  return it->second;
}

const Kind* Registry::find(std::string_view name) const {
  auto it = std::lower_bound(kinds_.begin(), kinds_.end(), name,
                             [](const Kind& k, std::string_view n) { return k.spec.name < n; });
  return it != kinds_.end() && it->spec.name == name ? &*it : nullptr;
}

std::string_view to_string(ParamType t) {
  switch (t) {
    case ParamType::String: return "string";
    case ParamType::Int: return "integer";
    case ParamType::Bool: return "bool";
    case ParamType::OnOff: return "on|off";
    case ParamType::Duration: return "duration";
    case ParamType::Size: return "size";
    case ParamType::IfName: return "interface";
    case ParamType::NetnsName: return "netns";
    case ParamType::Address: return "address";
    case ParamType::Cidr: return "cidr";
    case ParamType::AddressList: return "address list";
    case ParamType::Enum: return "enum";
    case ParamType::Scalar: return "scalar";
    case ParamType::StepRef: return "step name";
    case ParamType::Object: return "map";
    case ParamType::List: return "list";
    case ParamType::Map: return "key-value map";
  }
  return "?";
}

}  // namespace rxerun
