#include "engine/loader_params.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/checks.h"

namespace rxerun::loading {

void ParamReader::read(const KindSpec& kind, const YAML::Node& value, const YAML::Node& kind_key) {
  if (kind.scalar) {
    step_.params = value.IsNull() ? nlohmann::json() : typed(*kind.scalar, value, kind.scalar->name, mark_of(kind_key));
  } else if (value.IsMap()) {
    step_.params = typed_fields(kind.params, kind.extra ? &*kind.extra : nullptr, value, "");
  } else {
    step_.params = value.IsNull() ? nlohmann::json::object() : generic(value);
  }
  if (expand_failed_ || !final_literals(kind_key)) return;
  sink_.add(check_params(kind, step_.params, step_, sink_.file(), steps_.names()));
}

bool ParamReader::final_literals(const YAML::Node& kind_key) {
  if (has_step_references(step_.params)) return true;  // the run time's pass resolves them
  if (auto r = resolve_literals(step_.params); !r) {
    sink_.error(kind_key, r.error().message);
    return false;
  }
  if (!has_step_references(step_.params)) return true;
  sink_.error(kind_key,
              "a literal ({{ '...' }}) in these parameters writes {{steps.NAME.FACT}}, which would read a "
              "fact at run time: a parameter cannot hold it as text");
  return false;
}

nlohmann::json ParamReader::string_value(const YAML::Node& n) {
  auto s = vars_.expand(n.Scalar(), mark_of(n), steps_);
  if (!s) {
    expand_failed_ = true;
    return n.Scalar();
  }
  return *s;
}

nlohmann::json ParamReader::generic(const YAML::Node& n) {
  if (n.IsScalar()) {
    nlohmann::json v = plain_scalar(n);
    return v.is_string() ? string_value(n) : v;
  }
  if (n.IsSequence()) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& item : n) arr.push_back(generic(item));
    return arr;
  }
  if (n.IsMap()) {
    nlohmann::json obj = nlohmann::json::object();
    for_each_pair(n, [&](const std::string& k, const YAML::Node&, const YAML::Node& v) { obj[k] = generic(v); });
    return obj;
  }
  return nullptr;
}

nlohmann::json ParamReader::typed(const ParamSpec& spec, const YAML::Node& n, const std::string& path, Mark key_mark) {
  step_.marks[path] = n.IsNull() ? key_mark : mark_of(n);
  if (n.IsScalar()) {
    if (spec.type == ParamType::Scalar || spec.type == ParamType::Bool) return generic(n);
    return string_value(n);  // check_params reads "5", "off", "10.0.0.1/24" by type
  }
  if (n.IsSequence() && (spec.type == ParamType::AddressList || spec.type == ParamType::List)) {
    nlohmann::json arr = nlohmann::json::array();
    int i = 0;
    for (const auto& item : n) {
      const std::string item_path = fmt::format("{}.{}", path, i++);
      step_.marks[item_path] = mark_of(item);
      arr.push_back(item.IsScalar() ? string_value(item) : generic(item));
    }
    return arr;
  }
  if (n.IsMap() && spec.type == ParamType::Object) return typed_fields(spec.fields, nullptr, n, path + ".");
  if (n.IsMap() && spec.type == ParamType::Map && !spec.fields.empty())
    return typed_fields({}, &spec.fields.front(), n, path + ".");
  return generic(n);
}

nlohmann::json ParamReader::typed_fields(const std::vector<ParamSpec>& specs, const ParamSpec* extra,
                                         const YAML::Node& map, const std::string& prefix) {
  nlohmann::json obj = nlohmann::json::object();
  for_each_pair(map, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
    const std::string path = prefix + k;
    auto it = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == k; });
    if (it != specs.end()) {
      obj[k] = typed(*it, v, path, mark_of(key_node));
    } else if (extra) {
      obj[k] = typed(*extra, v, path, mark_of(key_node));
    } else {
      step_.marks[path] = mark_of(key_node);  // an unknown parameter is pointed at by its key
      obj[k] = generic(v);
    }
  });
  return obj;
}

}  // namespace rxerun::loading
