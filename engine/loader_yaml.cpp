#include "engine/loader_yaml.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>
#include <utility>
#include <vector>

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

namespace {

bool is_merge_key(const YAML::Node& key) {
  return key.IsScalar() && key.Scalar() == "<<" && !is_quoted(key);
}

// The mappings a merge key's value names; errors for anything else.
std::vector<YAML::Node> merged_mappings(const YAML::Node& value, const YAML::Node& key, DiagnosticSink& sink) {
  constexpr std::string_view kWhat = "a merge key '<<' takes a mapping (<<: *common) or a list of them (<<: [*a, *b])";
  std::vector<YAML::Node> sources;
  if (value.IsMap()) {
    sources.push_back(value);
  } else if (value.IsSequence()) {
    for (const auto& item : value) {
      if (item.IsMap())
        sources.push_back(item);
      else
        sink.error(item.IsNull() ? key : item, fmt::format("{}, got {} in the list", kWhat, type_name(item)));
    }
  } else {
    sink.error(value.IsNull() ? key : value, fmt::format("{}, got {}", kWhat, type_name(value)));
  }
  return sources;
}

}  // namespace

void apply_merge_keys(YAML::Node map, DiagnosticSink& sink) {
  std::optional<std::pair<YAML::Node, YAML::Node>> merge;
  std::set<std::string> keys;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const auto pair = *it;
    if (is_merge_key(pair.first)) {
      if (!merge) merge.emplace(pair.first, pair.second);  // a second '<<' is a duplicate key, reported as such
    } else if (pair.first.IsScalar()) {
      keys.insert(pair.first.Scalar());
    }
  }
  if (!merge) return;
  std::vector<std::pair<YAML::Node, YAML::Node>> merged;
  for (const auto& source : merged_mappings(merge->second, merge->first, sink)) {
    for (auto it = source.begin(); it != source.end(); ++it) {
      const auto pair = *it;
      if (pair.first.IsScalar() && !is_merge_key(pair.first) && keys.insert(pair.first.Scalar()).second)
        merged.emplace_back(pair.first, pair.second);
    }
  }
  map.remove(merge->first);
  for (const auto& [key, value] : merged) map.force_insert(key, value);
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
