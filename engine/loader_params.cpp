// A step's parameters: YAML -> JSON by each parameter's declared type, with
// {{variables}} expanded and every value's place recorded; check_params
// (engine/checks.h) then checks and normalises them.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "engine/checks.h"
#include "engine/loader_detail.h"

namespace rxerun::loading {

nlohmann::json Loader::string_value(ParamContext& ctx, const YAML::Node& n) {
  auto s = expand_string(n.Scalar(), mark_of(n), true);
  if (!s) {
    ctx.expand_failed = true;
    return n.Scalar();
  }
  return *s;
}

nlohmann::json Loader::generic(ParamContext& ctx, const YAML::Node& n) {
  if (n.IsScalar()) {
    nlohmann::json v = plain_scalar(n);
    return v.is_string() ? string_value(ctx, n) : v;
  }
  if (n.IsSequence()) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& item : n) arr.push_back(generic(ctx, item));
    return arr;
  }
  if (n.IsMap()) {
    nlohmann::json obj = nlohmann::json::object();
    for_each_pair(n, [&](const std::string& k, const YAML::Node&, const YAML::Node& v) { obj[k] = generic(ctx, v); });
    return obj;
  }
  return nullptr;
}

nlohmann::json Loader::typed(ParamContext& ctx, const ParamSpec& spec, const YAML::Node& n, const std::string& path,
                             Mark key_mark) {
  ctx.step.marks[path] = n.IsNull() ? key_mark : mark_of(n);
  if (n.IsScalar()) {
    if (spec.type == ParamType::Scalar || spec.type == ParamType::Bool) return generic(ctx, n);
    return string_value(ctx, n);  // check_params reads "5", "off", "10.0.0.1/24" by type
  }
  if (n.IsSequence() && (spec.type == ParamType::AddressList || spec.type == ParamType::List)) {
    nlohmann::json arr = nlohmann::json::array();
    int i = 0;
    for (const auto& item : n) {
      const std::string item_path = fmt::format("{}.{}", path, i++);
      ctx.step.marks[item_path] = mark_of(item);
      arr.push_back(item.IsScalar() ? string_value(ctx, item) : generic(ctx, item));
    }
    return arr;
  }
  if (n.IsMap() && spec.type == ParamType::Object) return typed_fields(ctx, spec.fields, nullptr, n, path + ".");
  if (n.IsMap() && spec.type == ParamType::Map && !spec.fields.empty())
    return typed_fields(ctx, {}, &spec.fields.front(), n, path + ".");
  return generic(ctx, n);
}

nlohmann::json Loader::typed_fields(ParamContext& ctx, const std::vector<ParamSpec>& specs, const ParamSpec* extra,
                                    const YAML::Node& map, const std::string& prefix) {
  nlohmann::json obj = nlohmann::json::object();
  for_each_pair(map, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
    const std::string path = prefix + k;
    auto it = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == k; });
    if (it != specs.end()) {
      obj[k] = typed(ctx, *it, v, path, mark_of(key_node));
    } else if (extra) {
      obj[k] = typed(ctx, *extra, v, path, mark_of(key_node));
    } else {
      ctx.step.marks[path] = mark_of(key_node);  // an unknown parameter is pointed at by its key
      obj[k] = generic(ctx, v);
    }
  });
  return obj;
}

void Loader::load_params(StepSpec& step, const YAML::Node& value, const YAML::Node& kind_key) {
  const Kind* kind = registry_.find(step.kind);
  if (!kind) return;
  const KindSpec& spec = kind->spec;
  ParamContext ctx{step};
  if (spec.scalar) {
    step.params =
        value.IsNull() ? nlohmann::json() : typed(ctx, *spec.scalar, value, spec.scalar->name, mark_of(kind_key));
  } else if (value.IsMap()) {
    step.params = typed_fields(ctx, spec.params, spec.extra ? &*spec.extra : nullptr, value, "");
  } else {
    step.params = value.IsNull() ? nlohmann::json::object() : generic(ctx, value);
  }
  // A value whose variable was undefined was reported; checking it would only repeat that.
  if (ctx.expand_failed) return;
  auto diags = check_params(spec, step.params, step, file_, loaded_names_);
  diags_.insert(diags_.end(), diags.begin(), diags.end());
}

}  // namespace rxerun::loading
