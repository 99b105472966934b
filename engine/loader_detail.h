#pragma once
// The loader's inside, shared by its files: engine/loader.cpp (the document,
// top-level keys, variables, steps and their common keys),
// engine/loader_params.cpp (a step's parameters, by their declared types) and
// engine/loader_expect.cpp (facts and expectations). Only the loader's files
// include this header: nothing from yaml-cpp leaves them.

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/loader.h"
#include "engine/vars.h"

namespace rxerun::loading {

// Reading YAML nodes.

Mark to_mark(const YAML::Mark& m);

Mark mark_of(const YAML::Node& n);

std::string type_name(const YAML::Node& n);

// Quoted scalars (and explicit !!str) are strings; plain ones are typed the
// way YAML 1.2's core schema types them.
bool is_quoted(const YAML::Node& n);

bool all_digits(std::string_view s);

nlohmann::json plain_scalar(const YAML::Node& n);

bool valid_step_name(std::string_view s);

bool valid_scenario_name(std::string_view s);

// "veth pair (copy).yaml" -> "veth-pair--copy"
std::string name_from_file(const std::string& file);

inline const std::vector<std::string> kTopKeys{"name",    "description", "vars",  "vm",   "kernel_health",
                                               "plugins", "nodes",       "wires", "steps"};
inline const std::vector<std::string> kKernelHealthPolicies{"fail", "warn", "off"};
inline const std::vector<std::string> kVmKeys{"kernel", "kernels", "timeout"};
inline const std::vector<std::string> kCommonKeys{"name",    "netns",   "node",  "expect",
                                                  "timeout", "retries", "delay", "tags"};
inline const std::vector<std::string> kNodeKeys{"kernel"};
inline const std::vector<std::string> kWireEndKeys{"nic", "mac"};
inline const std::vector<std::string> kOutcomes{"ok", "fail", "timeout"};
bool is_common_key(const std::string& k);

// A fact spec such as "DEV.COUNTER": upper-case segments stand for any text.
bool fact_pattern_matches(const std::string& pattern, const std::string& fact);

bool fact_declared(const KindSpec& kind, const std::string& fact);

// One step seen before the full pass: its kind key and final name, so that
// {{steps.X.Y}} can say "comes later" and duplicate names are found.
struct StepHead {
  std::string kind;  // "" when the step has none (or several)
  YAML::Node kind_key;
  std::string name;
  bool named = false;
  Mark name_mark;
};

// YAML -> Scenario for one file; used once.
class Loader {
 public:
  Loader(std::string file, const Registry& registry, const LoadOptions& options)
      : file_(std::move(file)), registry_(registry), options_(options) {}

  // The scenario, or every problem found in it, sorted by place.
  LoadResult load(std::string_view text);

 private:
  // plumbing
  void error(Mark m, std::string message) { diags_.push_back({file_, m, std::move(message)}); }
  void error(const YAML::Node& n, std::string message) { error(mark_of(n), std::move(message)); }

  // Calls fn(key, key_node, value) for each pair of a mapping, skipping keys
  // that are not plain strings and repeated keys (both reported by check_tree).
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

  // whole document
  void load_text(std::string_view text);

  // True when the first document, `root`, provably runs to the end of the
  // text, so that single_document() (a second parse, a third of the time of
  // loading a large file) has nothing to find. yaml-cpp closes a block
  // mapping whose keys start in column 0 only at the end of the text, at a
  // document marker ("---", "...") or at a directive ("%..."), each of which
  // must start a line; a byte-order mark may stand before either, and '\r'
  // may end a line. Anything else (a flow or scalar root, an indented
  // mapping: "[a]\n,", "  a: 1\nb: 2") goes through the full count.
  static bool ends_the_text(const YAML::Node& root, std::string_view text);

  // False (with a diagnostic) when the text holds more than one document.
  // yaml-cpp's LoadAll() loops forever on a stray ',' at the top level (each
  // call yields an empty document without consuming it), so documents are
  // counted here, two at most; a "document" starting at a ',' is that token.
  bool single_document(std::string_view text);

  // Repeated keys (yaml-cpp keeps both silently), keys that are not strings,
  // and a bound on the tree's size. False when the document is too big to go on.
  bool check_tree(const YAML::Node& n, int depth);

  void load_top(const YAML::Node& root);

  // top-level keys
  std::optional<std::string> scalar_text(const YAML::Node& value, const YAML::Node& key, std::string_view what);

  void load_name(const YAML::Node& value, const YAML::Node& key);

  void load_description(const YAML::Node& value, const YAML::Node& key);

  void load_vm(const YAML::Node& value, const YAML::Node& key);
  void load_vm_kernels(const YAML::Node& value, const YAML::Node& key);
  void load_kernel_health(const YAML::Node& value, const YAML::Node& key);
  void load_plugins(const YAML::Node& value, const YAML::Node& key);

  // nodes and wires (engine/loader_nodes.cpp)
  void load_nodes(const YAML::Node& value, const YAML::Node& key);
  void load_node(const std::string& name, const YAML::Node& key, const YAML::Node& value);
  void load_wires(const YAML::Node& value, const YAML::Node& key);
  void load_wire(const YAML::Node& item, std::size_t index);
  struct WireEndRead {
    WireEnd end;
    Mark nic_mark;
    Mark mac_mark;  // where the MAC is given; the end's key when it is derived
    bool mac_given = false;
  };
  std::optional<WireEndRead> load_wire_end(const std::string& node, const YAML::Node& key, const YAML::Node& value);
  // A wire end's NIC and MAC, each used once in the scenario; `which` is 1
  // for the wire's first end, 2 for its second.
  void claim_wire_end(const WireEndRead& read, std::size_t index, int which);
  // "unknown node 'c' in 'node' (did you mean 'a'?); 'nodes' declares a, b",
  // or, in a scenario without nodes, why `what` cannot name one.
  std::string unknown_node(const std::string& name, std::string_view what) const;
  // A step's `node:`.
  void load_step_node(StepSpec& step, const YAML::Node& key_node, const YAML::Node& value);
  // The nodes of a step's ends (Kind::end_nodes), and its own `node:` where
  // the scenario has nodes and the step needs one (or takes it from the step
  // a `wait` or `revert` names); `node_given`: the step has a `node:` key.
  void check_step_nodes(StepSpec& step, bool node_given);

  // vars
  static std::optional<std::string> bad_var_name(const std::string& name);

  void load_vars(const YAML::Node& value);

  void load_var_overrides();

  // Expands {{name}}; {{steps.X.Y}} stays, and is allowed only where
  // `step_refs_ok` (parameters, read at run time). nullopt after an error.
  std::optional<std::string> expand_string(const std::string& text, Mark where, bool step_refs_ok,
                                           std::string_view what = "this value");

  bool check_step_ref(const StepReference& ref, Mark where);

  // facts
  const StepSpec* find_loaded(const std::string& name) const;

  // The kind whose facts a step reports: its own, or for `revert` the
  // reverted step's. nullptr when that is not known (an error said why).
  const KindSpec* facts_kind(const StepSpec& step, int hops = 0) const;

  bool check_fact(const StepSpec& step, const std::string& fact, Mark where, std::string_view context);

  // steps
  void load_steps(const YAML::Node& steps, const YAML::Node& key);

  // Kind keys of a step mapping. A kind that shares its name with a common
  // key (`netns`) is the kind only when no other kind key is there.
  std::vector<std::pair<std::string, YAML::Node>> kind_keys(const YAML::Node& node);

  StepHead read_head(const YAML::Node& node, int index);

  void load_step(const YAML::Node& node, int index);

  void finish_step(StepSpec step);

  // Unknown keys, a missing kind, two kinds.
  void check_step_keys(const YAML::Node& node, Mark step_mark);

  // common step keys
  std::optional<std::string> common_text(const YAML::Node& key_node, const YAML::Node& value, const std::string& key);

  void load_common(StepSpec& step, const std::string& key, const YAML::Node& key_node, const YAML::Node& value);

  void load_step_name(const YAML::Node& key_node, const YAML::Node& value);

  void load_tags(StepSpec& step, const YAML::Node& key_node, const YAML::Node& value);

  // params
  // YAML -> JSON by the declared type of the parameter, with {{vars}}
  // expanded and marks recorded; check_params then checks and normalises.
  struct ParamContext {
    StepSpec& step;
    bool expand_failed = false;
  };

  nlohmann::json string_value(ParamContext& ctx, const YAML::Node& n);

  nlohmann::json generic(ParamContext& ctx, const YAML::Node& n);

  nlohmann::json typed(ParamContext& ctx, const ParamSpec& spec, const YAML::Node& n, const std::string& path,
                       Mark key_mark);

  nlohmann::json typed_fields(ParamContext& ctx, const std::vector<ParamSpec>& specs, const ParamSpec* extra,
                              const YAML::Node& map, const std::string& prefix);

  void load_params(StepSpec& step, const YAML::Node& value, const YAML::Node& kind_key);

  // expect
  std::optional<Outcome> outcome_of(const YAML::Node& v);

  void load_expect(StepSpec& step, const YAML::Node& value, const YAML::Node& key);

  void load_fact_expectation(StepSpec& step, const std::string& fact, const YAML::Node& fact_key, const YAML::Node& v);

  std::string file_;
  const Registry& registry_;
  const LoadOptions& options_;
  Scenario scenario_;
  ExpansionBudget expansion_;  // every {{variable}} substituted in the file
  Diagnostics diags_;
  Diagnostics warnings_;
  bool has_nodes_ = false;                                    // the scenario has a `nodes:` key
  std::map<std::string, std::pair<Mark, std::size_t>> nics_;  // "a/eth1" -> where a wire first joined it, the wire
  std::map<std::string, std::pair<Mark, std::string>>
      macs_;                             // a wire end's MAC -> where, and whose: "wire 1's first end (a)"
  std::optional<Mark> vm_kernels_mark_;  // where `vm.kernels` is, when it is
  bool lenient_kinds_ = false;           // a plugin could not be loaded: its kinds' steps are not errors of their own
  std::vector<StepHead> heads_;
  std::vector<std::string> loaded_names_;  // names of the steps loaded so far: the earlier steps
  long visited_ = 0;
  bool too_big_reported_ = false;
};

}  // namespace rxerun::loading
