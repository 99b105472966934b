#pragma once
// What the loader's readers share of YAML (engine/loader.cpp lists the
// readers): a node's place as a Mark, its type in words, plain scalars typed
// as YAML 1.2's core schema types them, the pairs of a mapping, and the rule
// for names of steps and variables. Only the loader's files include this
// header: nothing from yaml-cpp leaves them.

#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/diag.h"

namespace rxerun::loading {

class DiagnosticSink;

Mark to_mark(const YAML::Mark& m);
Mark mark_of(const YAML::Node& n);

// "nothing", "'text'", "a list", "a mapping": what a message says was found.
std::string type_name(const YAML::Node& n);

// Quoted scalars (and explicit !!str) are strings; plain ones are typed the
// way YAML 1.2's core schema types them.
bool is_quoted(const YAML::Node& n);
nlohmann::json plain_scalar(const YAML::Node& n);

// YAML 1.1's merge keys, which yaml-cpp keeps as a plain key '<<': in
// `map`, `<<: *common` or `<<: [*a, *b]` is replaced, in place, by the pairs
// of the merged mappings that `map` does not have itself (its own keys win,
// and an earlier mapping of a list wins over a later one). The merged pairs
// are the merged mapping's own nodes, so a diagnostic about one points at
// where it is written. The merged mappings' own merge keys must have been
// applied first (DocumentReader walks the tree children first). A '<<'
// whose value is not a mapping or a list of mappings is an error in `sink`.
void apply_merge_keys(YAML::Node map, DiagnosticSink& sink);

// Letters, digits, '_', '.' and '-': a step's name, and a variable's.
bool valid_step_name(std::string_view s);

// The text of a scalar `value`; otherwise an error ("'WHAT' must be a
// string, got ...") at the value, or at its `key` when the value is empty.
std::optional<std::string> scalar_text(const YAML::Node& value, const YAML::Node& key, std::string_view what,
                                       DiagnosticSink& sink);

// Calls fn(key, key_node, value) for each pair of a mapping, skipping keys
// that are not plain strings and repeated keys (both reported by the
// document reader).
template <class Fn>
void for_each_pair(const YAML::Node& map, Fn fn) {
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const auto pair = *it;  // each it-> would build the pair of nodes again
    if (!pair.first.IsScalar()) continue;
    const std::string& key = pair.first.Scalar();
    if (!seen.insert(key).second) continue;
    fn(key, pair.first, pair.second);
  }
}

}  // namespace rxerun::loading
