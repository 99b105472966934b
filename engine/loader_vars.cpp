#include "engine/loader_vars.h"

#include <fmt/format.h>

#include "base/utf8.h"
#include "engine/loader_step_table.h"

namespace rxerun::loading {

std::optional<std::string> Variables::bad_name(const std::string& name) {
  if (!valid_step_name(name))
    return fmt::format("invalid variable name '{}': use letters, digits, '_', '.' and '-'", excerpt(name));
  if (name == "steps" || name.starts_with("steps."))
    return fmt::format("variable name '{}' is reserved for {{{{steps.NAME.FACT}}}}", excerpt(name));
  return std::nullopt;
}

void Variables::read(const YAML::Node& value) {
  read_pairs(value, false);
}

void Variables::read_file(const YAML::Node& root) {
  read_pairs(root, true);
}

void Variables::read_pairs(const YAML::Node& value, bool from_file) {
  if (value.IsNull()) return;
  if (!value.IsMap()) {
    sink_.error(value, fmt::format("{} must be a mapping of names to values, got {}",
                                   from_file ? "a variables file" : "'vars'", type_name(value)));
    return;
  }
  for_each_pair(value, [&](const std::string& name, const YAML::Node& key, const YAML::Node& v) {
    if (auto why = bad_name(name)) {
      sink_.error(key, *why);
      return;
    }
    if (!v.IsScalar()) {
      sink_.error(v.IsNull() ? key : v,
                  fmt::format("variable '{}' must have a string, number or bool value, got {}", name, type_name(v)));
      return;
    }
    // Values are not expanded again: a '{{' in one would be read as a variable later.
    if (v.Scalar().find("{{") != std::string::npos) {
      sink_.error(v, fmt::format("the value of variable '{}' cannot contain '{{{{'", name));
      return;
    }
    vars_[name] = v.Scalar();
    if (from_file) {
      const Mark at = mark_of(key);
      overrides_[name] = fmt::format("{}:{}:{}", sink_.file(), at.line, at.col);
    }
  });
}

void Variables::read_overrides(const std::map<std::string, std::string>& overrides) {
  for (const auto& [name, value] : overrides) {
    if (auto why = bad_name(name)) {
      sink_.error(Mark{}, fmt::format("--var {}: {}", excerpt(name), *why));
    } else if (value.find("{{") != std::string::npos) {
      sink_.error(Mark{}, fmt::format("--var {}: a value cannot contain '{{{{'", name));
    } else if (auto bad = first_invalid_utf8(value)) {
      sink_.error(Mark{}, fmt::format("--var {}: the value is not UTF-8 text (byte 0x{:02x} at offset {}); a "
                                      "scenario's values are UTF-8",
                                      name, static_cast<unsigned char>(value[*bad]), *bad));
    } else {
      vars_[name] = value;
      overrides_[name] = "";
    }
  }
}

std::map<std::string, std::string> Variables::unused_overrides() const {
  std::vector<std::string> known(used_.begin(), used_.end());
  for (const auto& [name, value] : vars_)
    if (!overrides_.count(name)) known.push_back(name);
  std::map<std::string, std::string> unused;
  for (const auto& [name, where] : overrides_) {
    if (used_.count(name)) continue;
    const std::string why = fmt::format("no scenario reads variable '{}'{}", excerpt(name), did_you_mean(name, known));
    unused[name] = where.empty() ? fmt::format("rxerun: warning: --var {}: {}", excerpt(name), why)
                                 : fmt::format("{}: warning: {}", where, why);
  }
  return unused;
}

std::optional<std::string> Variables::substitute(const std::string& text, Mark where) {
  if (text.find("{{") != std::string::npos)
    for (auto& name : variable_references(text)) used_.insert(std::move(name));
  const int refused = budget_.refused;
  auto r = rxerun::expand(text, vars_, nullptr, &budget_);
  if (!r) {
    // The scenario-wide cap is reported once, where it was crossed.
    if (refused == 0 || budget_.refused == refused) sink_.error(where, r.error().message);
    return std::nullopt;
  }
  return std::move(r).value();
}

std::optional<std::string> Variables::expand(const std::string& text, Mark where, std::string_view what) {
  auto s = substitute(text, where);
  if (!s) return std::nullopt;
  const auto refs = step_references(*s);
  if (refs.empty()) {
    auto resolved = resolve_literals(*s);  // a value that reads no facts is final now
    if (resolved) return std::move(resolved).value();
    sink_.error(where, resolved.error().message);
    return std::nullopt;
  }
  sink_.error(where, fmt::format("{} cannot read facts of other steps ({{{{steps.{}.{}}}}}): only parameters can", what,
                                 excerpt(refs.front().step), excerpt(refs.front().fact)));
  return std::nullopt;
}

std::optional<std::string> Variables::expand(const std::string& text, Mark where, StepTable& steps) {
  auto s = substitute(text, where);
  if (!s) return std::nullopt;
  bool ok = true;
  for (const auto& ref : step_references(*s)) ok = steps.check_reference(ref, where) && ok;
  if (!ok) return std::nullopt;
  return s;
}

}  // namespace rxerun::loading
