#include "engine/loader_yaml.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "base/utf8.h"
#include "engine/checks.h"
#include "engine/loader_sink.h"

namespace rxerun::loading {

Mark to_mark(const YAML::Mark& m) {
  if (m.is_null() || m.line < 0 || m.column < 0) return Mark{1, 1};
  return Mark{m.line + 1, m.column + 1};
}

Mark mark_of(const YAML::Node& n) {
  return to_mark(n.Mark());
}

std::string type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "'" + excerpt(n.Scalar()) + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

bool is_quoted(const YAML::Node& n) {
  const std::string& tag = n.Tag();
  return tag == "!" || tag.ends_with(":str");
}

nlohmann::json plain_scalar(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (is_quoted(n)) return s;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex kInt("[-+]?[0-9]{1,20}");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  // Integers stay exact up to 64 bits, unsigned too (a device's max_mr_size
  // is 2^64 - 1); only a larger one becomes a double.
  if (std::regex_match(s, kInt))
    if (auto i = exact_integer(s)) return *i;
  if (s.size() <= 64 && std::regex_match(s, kFloat)) {
    const double d = std::strtod(s.c_str(), nullptr);
    if (std::isfinite(d)) return d;
  }
  return s;
}

bool valid_step_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

std::optional<std::string> scalar_text(const YAML::Node& value, const YAML::Node& key, std::string_view what,
                                       DiagnosticSink& sink) {
  if (value.IsScalar()) return value.Scalar();
  sink.error(value.IsNull() ? key : value, fmt::format("'{}' must be a string, got {}", what, type_name(value)));
  return std::nullopt;
}

}  // namespace rxerun::loading
