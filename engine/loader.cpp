// YAML -> Scenario. Every problem becomes a Diagnostic at FILE:LINE:COL; the
// loader goes on after one so that a single run names all of them. The
// document and its top-level keys, variables, steps and their common keys are
// read here; parameters in loader_params.cpp, facts and expectations in
// loader_expect.cpp.

#include "engine/loader.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <sstream>

#include "base/files.h"
#include "base/utf8.h"
#include "engine/checks.h"
#include "engine/loader_detail.h"
#include "engine/loader_guards.h"

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

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
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

bool valid_scenario_name(std::string_view s) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  return s.size() <= 64 && std::regex_match(s.begin(), s.end(), kName);
}

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

bool is_common_key(const std::string& k) {
  return std::find(kCommonKeys.begin(), kCommonKeys.end(), k) != kCommonKeys.end();
}

bool fact_pattern_matches(const std::string& pattern, const std::string& fact) {
  static const std::regex kPlaceholder("[A-Z][A-Z0-9_]*");
  std::string re;
  std::size_t start = 0;
  bool is_pattern = false;
  while (start <= pattern.size()) {
    std::size_t dot = pattern.find('.', start);
    if (dot == std::string::npos) dot = pattern.size();
    const std::string seg = pattern.substr(start, dot - start);
    if (std::regex_match(seg, kPlaceholder)) {
      re += ".+";
      is_pattern = true;
    } else {
      for (char c : seg) {
        if (std::strchr("\\^$.|?*+()[]{}", c)) re += '\\';
        re += c;
      }
    }
    if (dot == pattern.size()) break;
    re += "\\.";
    start = dot + 1;
  }
  return is_pattern && fact.size() <= 256 && std::regex_match(fact, std::regex(re));
}

bool fact_declared(const KindSpec& kind, const std::string& fact) {
  if (kind.dynamic_facts) return true;
  for (const auto& f : kind.facts) {
    if (f.name == fact || fact_pattern_matches(f.name, fact)) return true;
  }
  return false;
}

LoadResult Loader::load(std::string_view text) {
  LoadResult result;
  try {
    load_text(text);
  } catch (const YAML::Exception& e) {
    error(to_mark(e.mark), e.msg.empty() ? std::string(e.what()) : e.msg);
  } catch (const std::exception& e) {
    error(Mark{}, fmt::format("cannot load the scenario: {}", e.what()));
  }
  std::stable_sort(diags_.begin(), diags_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.mark.line, a.mark.col) < std::tie(b.mark.line, b.mark.col);
  });
  // A node reached twice through an alias would report the same problem twice.
  diags_.erase(std::unique(diags_.begin(), diags_.end(),
                           [](const Diagnostic& a, const Diagnostic& b) {
                             return a.mark.line == b.mark.line && a.mark.col == b.mark.col && a.message == b.message;
                           }),
               diags_.end());
  result.diagnostics = std::move(diags_);
  result.warnings = std::move(warnings_);
  if (result.diagnostics.empty()) result.scenario = std::move(scenario_);
  return result;
}

void Loader::load_text(std::string_view text) {
  if (auto d = check_encoding(text, file_)) {
    diags_.push_back(*d);
    return;
  }
  if (auto m = nesting_too_deep(text)) {
    error(*m, fmt::format("nesting deeper than {} levels: a scenario is a shallow mapping", kMaxNesting));
    return;
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
    if (!ends_the_text(root, text) && !single_document(text)) return;
  } catch (const YAML::DeepRecursion& e) {
    error(to_mark(e.mark), "nesting too deep for the YAML parser");
    return;
  } catch (const YAML::Exception& e) {
    error(to_mark(e.mark), fmt::format("YAML syntax error: {}", e.msg));
    return;
  }
  if (root.IsNull()) {
    error(Mark{}, "empty scenario: expected a mapping with 'steps'");
    return;
  }
  if (!check_tree(root, 0)) return;
  load_top(root);
}

// True when the first document, `root`, provably runs to the end of the
// text, so that single_document() (a second parse, a third of the time of
// loading a large file) has nothing to find. yaml-cpp closes a block
// mapping whose keys start in column 0 only at the end of the text, at a
// document marker ("---", "...") or at a directive ("%..."), each of which
// must start a line; a byte-order mark may stand before either, and '\r'
// may end a line. Anything else (a flow or scalar root, an indented
// mapping: "[a]\n,", "  a: 1\nb: 2") goes through the full count.
bool Loader::ends_the_text(const YAML::Node& root, std::string_view text) {
  if (!root.IsMap() || root.Style() != YAML::EmitterStyle::Block || root.size() == 0) return false;
  if (root.begin()->first.Mark().column != 0) return false;
  if (text.find("\xEF\xBB\xBF") != std::string_view::npos) return false;
  for (std::size_t start = 0; start < text.size();) {
    const auto line = text.substr(start);
    if (line.starts_with("---") || line.starts_with("...") || line.starts_with("%")) return false;
    const auto end = text.find_first_of("\r\n", start);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return true;
}

// False (with a diagnostic) when the text holds more than one document.
// yaml-cpp's LoadAll() loops forever on a stray ',' at the top level (each
// call yields an empty document without consuming it), so documents are
// counted here, two at most; a "document" starting at a ',' is that token.
bool Loader::single_document(std::string_view text) {
  struct Counter : YAML::EventHandler {
    std::vector<YAML::Mark> starts;
    void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  };
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  Counter counter;
  if (!parser.HandleNextDocument(counter) || !parser.HandleNextDocument(counter)) return true;
  const YAML::Mark second = counter.starts.back();
  const auto pos = std::min(static_cast<std::size_t>(std::max(second.pos, 0)), text.size());
  if (text.substr(pos).starts_with(","))
    error(to_mark(second), "YAML syntax error: unexpected ','");
  else
    error(to_mark(second), "a scenario file holds one YAML document; a second one starts here");
  return false;
}

// Repeated keys (yaml-cpp keeps both silently), keys that are not strings,
// and a bound on the tree's size. False when the document is too big to go on.
bool Loader::check_tree(const YAML::Node& n, int depth) {
  if (++visited_ > kMaxNodes || depth > 4 * kMaxNesting) {
    if (!too_big_reported_)
      error(n, fmt::format("the document is too large: more than {} YAML nodes (aliases count each time they are "
                           "used)",
                           kMaxNodes));
    too_big_reported_ = true;
    return false;
  }
  if (n.IsSequence()) {
    for (const auto& item : n)
      if (!check_tree(item, depth + 1)) return false;
  } else if (n.IsMap()) {
    std::map<std::string, Mark> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const auto pair = *it;  // each it-> would build the pair of nodes again
      const YAML::Node& key = pair.first;
      if (!key.IsScalar()) {
        error(key, "a mapping key must be a plain string");
      } else if (auto [at, fresh] = seen.emplace(key.Scalar(), mark_of(key)); !fresh) {
        error(key, fmt::format("duplicate key '{}' (first at {}:{})", excerpt(key.Scalar()), at->second.line,
                               at->second.col));
      }
      if (!check_tree(pair.second, depth + 1)) return false;
    }
  }
  return true;
}

void Loader::load_top(const YAML::Node& root) {
  if (!root.IsMap()) {
    error(root, fmt::format("a scenario must be a mapping with 'steps', got {}", type_name(root)));
    return;
  }
  scenario_.file = file_;
  scenario_.name = name_from_file(file_);
  std::optional<YAML::Node> steps, nodes, wires;
  YAML::Node steps_key, nodes_key, wires_key;
  // vars first: every other value may use them, whatever the order of keys.
  for_each_pair(root, [&](const std::string& key, const YAML::Node&, const YAML::Node& value) {
    if (key == "vars") load_vars(value);
  });
  load_var_overrides();
  for_each_pair(root, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (key == "name")
      load_name(value, key_node);
    else if (key == "description")
      load_description(value, key_node);
    else if (key == "vm")
      load_vm(value, key_node);
    else if (key == "kernel_health")
      load_kernel_health(value, key_node);
    else if (key == "plugins")
      load_plugins(value, key_node);
    else if (key == "nodes") {
      nodes = value;
      nodes_key = key_node;
    } else if (key == "wires") {
      wires = value;
      wires_key = key_node;
    } else if (key == "steps") {
      steps = value;
      steps_key = key_node;
    } else if (key != "vars")
      error(key_node, fmt::format("unknown key '{}' at the top level{}", excerpt(key), did_you_mean(key, kTopKeys)));
  });
  // Nodes before wires (which name them) and steps (which run on them).
  if (nodes) load_nodes(*nodes, nodes_key);
  if (wires && !nodes)
    error(wires_key, "'wires' joins nodes' NICs, but the scenario declares no 'nodes' (nodes: {a: {}, b: {}})");
  else if (wires)
    load_wires(*wires, wires_key);
  if (!steps) {
    error(root, "missing 'steps': a scenario needs a list of steps");
    return;
  }
  load_steps(*steps, steps_key);
}

// plugins: [PATH, ...], each relative to the scenario's directory, loaded
// here so that the steps (read after every top-level key) may use its kinds.
void Loader::load_plugins(const YAML::Node& value, const YAML::Node& key) {
  if (!value.IsSequence()) {
    error(value.IsNull() ? key : value, fmt::format("'plugins' must be a list of paths, got {}", type_name(value)));
    return;
  }
  const std::filesystem::path dir = std::filesystem::path(file_).parent_path();
  for (const auto& item : value) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      error(item, fmt::format("a plugin must be the path of a shared object, got {}", type_name(item)));
      continue;
    }
    std::filesystem::path path(item.Scalar());
    if (path.is_relative()) path = dir / path;
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
    if (ec) {
      error(item, fmt::format("plugin '{}': {}", excerpt(item.Scalar()), ec.message()));
      continue;
    }
    if (options_.load_plugin) {
      if (auto loaded = options_.load_plugin(absolute); !loaded) {
        // Steps of its kinds are not reported as steps without a kind.
        lenient_kinds_ = true;
        if (!options_.plugins_may_fail) {
          error(item, loaded.error().message);
          continue;
        }
        warnings_.push_back({file_, mark_of(item), loaded.error().message});
      }
    }
    scenario_.plugins.push_back(absolute);
  }
}

std::optional<std::string> Loader::scalar_text(const YAML::Node& value, const YAML::Node& key, std::string_view what) {
  if (value.IsScalar()) return value.Scalar();
  error(value.IsNull() ? key : value, fmt::format("'{}' must be a string, got {}", what, type_name(value)));
  return std::nullopt;
}

void Loader::load_name(const YAML::Node& value, const YAML::Node& key) {
  auto s = scalar_text(value, key, "name");
  if (!s) return;
  if (!valid_scenario_name(*s)) {
    error(value, fmt::format("'name' must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or "
                             "digit, got '{}'",
                             excerpt(*s)));
    return;
  }
  scenario_.name = *s;
}

void Loader::load_description(const YAML::Node& value, const YAML::Node& key) {
  if (value.IsNull()) return;
  auto s = scalar_text(value, key, "description");
  if (!s) return;
  if (auto e = expand_string(*s, mark_of(value), false)) scenario_.description = *e;
}

void Loader::load_vm(const YAML::Node& value, const YAML::Node& key) {
  if (!value.IsMap()) {
    error(value.IsNull() ? key : value,
          fmt::format("'vm' must be a mapping such as {{kernel: \"7.3\"}}, got {}", type_name(value)));
    return;
  }
  for_each_pair(value, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
    if (k != "kernel" && k != "kernels" && k != "timeout") {
      error(key_node, fmt::format("unknown key '{}' in 'vm'{}", excerpt(k), did_you_mean(k, kVmKeys)));
      return;
    }
    if (k == "kernels") {
      vm_kernels_mark_ = mark_of(key_node);
      load_vm_kernels(v, key_node);
      return;
    }
    auto s = scalar_text(v, key_node, "vm." + k);
    if (!s) return;
    auto e = expand_string(*s, mark_of(v), false);
    if (!e) return;
    if (k == "timeout") {
      bool too_long = false;
      auto d = parse_duration(*e, &too_long);
      if (too_long)
        error(v, fmt::format("'vm.timeout' is '{}', longer than 876000h (a hundred years), the longest duration "
                             "rxerun takes",
                             excerpt(*e)));
      else if (!d || d->count() <= 0)
        error(v, fmt::format("'vm.timeout' must be a positive duration with a unit (90s, 10m), got '{}'", excerpt(*e)));
      else
        scenario_.vm_timeout = *d;
    } else if (e->empty()) {
      error(v, "'vm.kernel' cannot be empty");
    } else {
      scenario_.vm_kernel = *e;
    }
  });
  if (scenario_.vm_kernel && !scenario_.vm_kernels.empty())
    error(value["kernels"], "'vm' names both 'kernel' and 'kernels': use 'kernels' alone to run on several kernels");
}

void Loader::load_vm_kernels(const YAML::Node& value, const YAML::Node& key) {
  if (!value.IsSequence() || value.size() == 0) {
    error(value.IsNull() ? key : value,
          fmt::format("'vm.kernels' must be a list of lab kernels such as [\"6.1\", \"7.3\"], got {}",
                      value.IsSequence() ? "an empty list" : type_name(value)));
    return;
  }
  for (const auto& item : value) {
    auto s = scalar_text(item, key, "vm.kernels");
    if (!s) continue;
    auto e = expand_string(*s, mark_of(item), false);
    if (!e) continue;
    if (e->empty()) {
      error(item, "a kernel in 'vm.kernels' cannot be empty");
    } else if (std::find(scenario_.vm_kernels.begin(), scenario_.vm_kernels.end(), *e) != scenario_.vm_kernels.end()) {
      error(item, fmt::format("kernel '{}' is in 'vm.kernels' twice", excerpt(*e)));
    } else {
      scenario_.vm_kernels.push_back(*e);
    }
  }
}

void Loader::load_kernel_health(const YAML::Node& value, const YAML::Node& key) {
  auto s = scalar_text(value, key, "kernel_health");
  if (!s) return;
  auto e = expand_string(*s, mark_of(value), false);
  if (!e) return;
  if (auto p = parse_kernel_health_policy(*e))
    scenario_.kernel_health = *p;
  else
    error(value, fmt::format("'kernel_health' must be fail, warn or off, got '{}'{}", excerpt(*e),
                             did_you_mean(*e, kKernelHealthPolicies)));
}

std::optional<std::string> Loader::bad_var_name(const std::string& name) {
  if (!valid_step_name(name))
    return fmt::format("invalid variable name '{}': use letters, digits, '_', '.' and '-'", excerpt(name));
  if (name == "steps" || name.starts_with("steps."))
    return fmt::format("variable name '{}' is reserved for {{{{steps.NAME.FACT}}}}", excerpt(name));
  return std::nullopt;
}

void Loader::load_vars(const YAML::Node& value) {
  if (value.IsNull()) return;
  if (!value.IsMap()) {
    error(value, fmt::format("'vars' must be a mapping of names to values, got {}", type_name(value)));
    return;
  }
  for_each_pair(value, [&](const std::string& name, const YAML::Node& key, const YAML::Node& v) {
    if (auto why = bad_var_name(name)) {
      error(key, *why);
      return;
    }
    if (!v.IsScalar()) {
      error(v.IsNull() ? key : v,
            fmt::format("variable '{}' must have a string, number or bool value, got {}", name, type_name(v)));
      return;
    }
    // Values are not expanded again: a '{{' in one would be read as a variable later.
    if (v.Scalar().find("{{") != std::string::npos) {
      error(v, fmt::format("the value of variable '{}' cannot contain '{{{{'", name));
      return;
    }
    scenario_.vars[name] = v.Scalar();
  });
}

void Loader::load_var_overrides() {
  for (const auto& [name, value] : options_.var_overrides) {
    if (auto why = bad_var_name(name)) {
      error(Mark{}, fmt::format("--var {}: {}", excerpt(name), *why));
    } else if (value.find("{{") != std::string::npos) {
      error(Mark{}, fmt::format("--var {}: a value cannot contain '{{{{'", name));
    } else if (auto bad = first_invalid_utf8(value)) {
      error(Mark{}, fmt::format("--var {}: the value is not UTF-8 text (byte 0x{:02x} at offset {}); a scenario's "
                                "values are UTF-8",
                                name, static_cast<unsigned char>(value[*bad]), *bad));
    } else {
      scenario_.vars[name] = value;  // --var wins over `vars:`, and may define a new one
    }
  }
}

// Expands {{name}}; {{steps.X.Y}} stays, and is allowed only where
// `step_refs_ok` (parameters, read at run time). nullopt after an error.
std::optional<std::string> Loader::expand_string(const std::string& text, Mark where, bool step_refs_ok,
                                                 std::string_view what) {
  const int refused = expansion_.refused;
  auto r = expand(text, scenario_.vars, nullptr, &expansion_);
  if (!r) {
    // The scenario-wide cap is reported once, where it was crossed.
    if (refused == 0 || expansion_.refused == refused) error(where, r.error().message);
    return std::nullopt;
  }
  const auto refs = step_references(*r);
  if (refs.empty()) return std::move(r).value();
  if (!step_refs_ok) {
    error(where, fmt::format("{} cannot read facts of other steps ({{{{steps.{}.{}}}}}): only parameters can", what,
                             excerpt(refs.front().step), excerpt(refs.front().fact)));
    return std::nullopt;
  }
  bool ok = true;
  for (const auto& ref : refs) ok = check_step_ref(ref, where) && ok;
  if (!ok) return std::nullopt;
  return std::move(r).value();
}

bool Loader::check_step_ref(const StepReference& ref, Mark where) {
  const std::string written = fmt::format("{{{{steps.{}.{}}}}}", excerpt(ref.step), excerpt(ref.fact));
  const StepSpec* target = find_loaded(ref.step);
  if (!target) {
    const bool later = std::any_of(heads_.begin(), heads_.end(), [&](const StepHead& h) { return h.name == ref.step; });
    if (later)
      error(where,
            fmt::format("step '{}' in {} comes later: only earlier steps' facts can be read", ref.step, written));
    else
      error(where, fmt::format("unknown step '{}' in {}{}", excerpt(ref.step), written,
                               did_you_mean(ref.step, loaded_names_)));
    return false;
  }
  return check_fact(*target, ref.fact, where, written);
}

void Loader::load_steps(const YAML::Node& steps, const YAML::Node& key) {
  if (steps.IsNull() || (steps.IsSequence() && steps.size() == 0)) {
    error(steps.IsNull() ? key : steps, "'steps' is empty: a scenario needs at least one step");
    return;
  }
  if (!steps.IsSequence()) {
    error(steps, fmt::format("'steps' must be a list of steps, got {}", type_name(steps)));
    return;
  }
  // Sized once: a thousand steps would otherwise move every StepSpec ten times.
  heads_.reserve(steps.size());
  scenario_.steps.reserve(steps.size());
  int index = 0;
  for (const auto& node : steps) heads_.push_back(read_head(node, index++));
  std::map<std::string, Mark> first_named;
  index = 0;
  for (const auto& node : steps) {
    const StepHead& head = heads_[static_cast<std::size_t>(index)];
    const Mark name_mark = head.named ? head.name_mark : mark_of(node);
    if (auto [it, fresh] = first_named.emplace(head.name, name_mark); !fresh)
      error(name_mark, fmt::format("duplicate step name '{}' (first at {}:{})", excerpt(head.name), it->second.line,
                                   it->second.col));
    load_step(node, index++);
  }
}

// Kind keys of a step mapping. A kind that shares its name with a common
// key (`netns`) is the kind only when no other kind key is there.
std::vector<std::pair<std::string, YAML::Node>> Loader::kind_keys(const YAML::Node& node) {
  std::vector<std::pair<std::string, YAML::Node>> kinds, ambiguous;
  bool unknown = false;
  for_each_pair(node, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node&) {
    if (!registry_.find(key)) {
      unknown |= !is_common_key(key);
      return;
    }
    (is_common_key(key) ? ambiguous : kinds).emplace_back(key, key_node);
  });
  // Beside a key that may be the kind of a plugin that could not be loaded,
  // `netns` is the common key.
  if (kinds.empty() && ambiguous.size() == 1 && !(unknown && lenient_kinds_)) return ambiguous;
  return kinds;
}

StepHead Loader::read_head(const YAML::Node& node, int index) {
  StepHead head;
  if (!node.IsMap()) {
    head.name = fmt::format("step-{}", index + 1);
    return head;
  }
  const auto kinds = kind_keys(node);
  if (kinds.size() == 1) {
    head.kind = kinds.front().first;
    head.kind_key = kinds.front().second;
  }
  for_each_pair(node, [&](const std::string& key, const YAML::Node&, const YAML::Node& value) {
    if (key == "name" && value.IsScalar() && valid_step_name(value.Scalar())) {
      head.named = true;
      head.name = value.Scalar();
      head.name_mark = mark_of(value);
    }
  });
  if (!head.named) head.name = fmt::format("{}-{}", head.kind.empty() ? "step" : head.kind, index + 1);
  return head;
}

void Loader::load_step(const YAML::Node& node, int index) {
  const StepHead& head = heads_[static_cast<std::size_t>(index)];
  StepSpec step;
  step.index = index;
  step.name = head.name;
  step.named = head.named;
  step.mark = mark_of(node);
  step.kind = head.kind;
  if (!node.IsMap()) {
    std::string hint;
    if (node.IsScalar() && registry_.find(node.Scalar()))
      hint = fmt::format(" ('{}' needs its parameters: '{}: ...')", node.Scalar(), node.Scalar());
    error(node, fmt::format("a step must be a mapping with one kind key, got {}{}", type_name(node), hint));
    finish_step(std::move(step));
    return;
  }
  check_step_keys(node, step.mark);
  YAML::Node params_node, expect_node, expect_key;
  bool has_expect = false, has_node = false;
  for_each_pair(node, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (!head.kind.empty() && key == head.kind) {
      params_node = value;
    } else if (key == "expect") {
      expect_node = value;
      expect_key = key_node;
      has_expect = true;
    } else if (is_common_key(key)) {
      has_node |= key == "node";
      load_common(step, key, key_node, value);
    }
  });
  if (!head.kind.empty()) {
    step.marks[""] = mark_of(head.kind_key);
    load_params(step, params_node, head.kind_key);
  }
  check_step_nodes(step, has_node);
  if (has_expect) load_expect(step, expect_node, expect_key);
  finish_step(std::move(step));
}

void Loader::finish_step(StepSpec step) {
  loaded_names_.push_back(step.name);
  scenario_.steps.push_back(std::move(step));
}

// Unknown keys, a missing kind, two kinds.
void Loader::check_step_keys(const YAML::Node& node, Mark step_mark) {
  std::vector<std::string> all_keys = kCommonKeys;
  all_keys.insert(all_keys.end(), registry_.names().begin(), registry_.names().end());
  const auto kinds = kind_keys(node);
  if (kinds.empty() && lenient_kinds_) return;  // a kind of the plugin that could not be loaded, perhaps
  for (std::size_t i = 1; i < kinds.size(); ++i)
    error(kinds[i].second, fmt::format("step has two kinds, '{}' and '{}': a step does exactly one thing",
                                       kinds.front().first, kinds[i].first));
  std::vector<std::pair<std::string, YAML::Node>> unknown;
  for_each_pair(node, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node&) {
    if (!is_common_key(key) && !registry_.find(key)) unknown.emplace_back(key, key_node);
  });
  std::size_t close_to_kind = unknown.size();
  if (kinds.empty()) {
    for (std::size_t i = 0; i < unknown.size() && close_to_kind == unknown.size(); ++i)
      if (suggest(unknown[i].first, registry_.names())) close_to_kind = i;
    const std::string kinds = fmt::format("{}", fmt::join(registry_.names(), ", "));
    if (close_to_kind < unknown.size())
      error(unknown[close_to_kind].second,
            fmt::format("step has no kind: '{}' is not one of {}{}", excerpt(unknown[close_to_kind].first), kinds,
                        did_you_mean(unknown[close_to_kind].first, registry_.names())));
    else
      error(step_mark, fmt::format("step has no kind: expected one of {}", kinds));
  }
  for (std::size_t i = 0; i < unknown.size(); ++i) {
    if (i == close_to_kind) continue;
    error(unknown[i].second, fmt::format("unknown key '{}' in step{}", excerpt(unknown[i].first),
                                         did_you_mean(unknown[i].first, all_keys)));
  }
}

std::optional<std::string> Loader::common_text(const YAML::Node& key_node, const YAML::Node& value,
                                               const std::string& key) {
  if (!value.IsScalar()) {
    error(value.IsNull() ? key_node : value, fmt::format("'{}' must be a scalar, got {}", key, type_name(value)));
    return std::nullopt;
  }
  return expand_string(value.Scalar(), mark_of(value), false, fmt::format("'{}'", key));
}

void Loader::load_common(StepSpec& step, const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
  if (key == "name") {
    load_step_name(key_node, value);
  } else if (key == "netns") {
    auto s = common_text(key_node, value, key);
    std::string why;
    if (s && !valid_netns_name(*s, &why))
      error(value, fmt::format("'netns' is not a valid namespace name: {} ('{}')", why, excerpt(*s)));
    else if (s)
      step.netns = *s;
  } else if (key == "node") {
    load_step_node(step, key_node, value);
  } else if (key == "timeout" || key == "delay") {
    auto s = common_text(key_node, value, key);
    if (!s) return;
    bool too_long = false;
    auto d = parse_duration(*s, &too_long);
    if (!d && too_long)
      error(value, fmt::format("'{}' is '{}', longer than 876000h (a hundred years), the longest duration rxerun "
                               "takes",
                               key, excerpt(*s)));
    else if (!d)
      error(value, fmt::format("'{}' must be a duration with a unit (500ms, 5s, 1m, 1h), got '{}'", key, excerpt(*s)));
    else if (key == "timeout")
      step.timeout = *d;
    else
      step.delay = *d;
  } else if (key == "retries") {
    auto s = common_text(key_node, value, key);
    if (!s) return;
    if (!all_digits(*s) || s->size() > 3 || std::stoi(*s) > 100)
      error(value, fmt::format("'retries' must be an integer from 0 to 100, got '{}'", excerpt(*s)));
    else
      step.retries = std::stoi(*s);
  } else if (key == "tags") {
    load_tags(step, key_node, value);
  }
}

void Loader::load_step_name(const YAML::Node& key_node, const YAML::Node& value) {
  if (!value.IsScalar()) {
    error(value.IsNull() ? key_node : value, fmt::format("a step's 'name' must be a string, got {}", type_name(value)));
  } else if (!valid_step_name(value.Scalar())) {
    error(value,
          fmt::format("step name '{}' may hold only letters, digits, '_', '.' and '-'", excerpt(value.Scalar())));
  }
}

void Loader::load_tags(StepSpec& step, const YAML::Node& key_node, const YAML::Node& value) {
  auto add = [&](const YAML::Node& tag) {
    if (!tag.IsScalar() || tag.Scalar().empty()) {
      error(tag.IsNull() ? key_node : tag, fmt::format("a tag must be a non-empty string, got {}", type_name(tag)));
      return;
    }
    if (auto s = expand_string(tag.Scalar(), mark_of(tag), false, "'tags'")) step.tags.push_back(*s);
  };
  if (value.IsSequence()) {
    for (const auto& tag : value) add(tag);
  } else {
    add(value);
  }
}

}  // namespace rxerun::loading

namespace rxerun {

LoadResult load_scenario(const std::string& path, const Registry& registry, const LoadOptions& options) {
  try {
    auto data = read_file_capped(path, kMaxScenarioBytes, "scenario");
    if (!data) return LoadResult{std::nullopt, {Diagnostic{path, Mark{}, data.error().message}}};
    return load_scenario_text(*data, path, registry, options);
  } catch (const std::exception& e) {  // std::bad_alloc, or a bug: never a crash
    return LoadResult{std::nullopt, {Diagnostic{path, Mark{}, fmt::format("cannot load the scenario: {}", e.what())}}};
  }
}

LoadResult load_scenario_text(std::string_view text, const std::string& file, const Registry& registry,
                              const LoadOptions& options) {
  try {
    return loading::Loader(file, registry, options).load(text);
  } catch (const std::exception& e) {
    return LoadResult{std::nullopt, {Diagnostic{file, Mark{}, fmt::format("cannot load the scenario: {}", e.what())}}};
  }
}

}  // namespace rxerun
