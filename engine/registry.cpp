#include "engine/registry.h"

#include <algorithm>
#include <stdexcept>

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
