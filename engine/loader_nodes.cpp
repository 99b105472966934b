// The loader's part of two-node labs: `nodes:` (the lab VMs), `wires:`
// (between their NICs), a step's `node:`, and the nodes of a pair kind's
// ends (Kind::end_nodes). docs/scenarios.md, "Nodes and wires", says the
// rules.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/utf8.h"
#include "engine/checks.h"
#include "engine/kind.h"
#include "engine/loader_detail.h"
#include "engine/nodes.h"

namespace rxerun::loading {

namespace {

// The names of the declared nodes: "a, b" ("none" when there is none).
std::string node_list(const Scenario& scenario) {
  std::vector<std::string> names;
  for (const auto& n : scenario.nodes) names.push_back(n.name);
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

// "'node: a'", "'node: a' or 'node: b'", "'node: a', 'node: b' or 'node: c'".
std::string node_choices(const Scenario& scenario) {
  std::string text;
  for (std::size_t i = 0; i < scenario.nodes.size(); ++i) {
    if (i > 0) text += i + 1 == scenario.nodes.size() ? " or " : ", ";
    text += fmt::format("'node: {}'", scenario.nodes[i].name);
  }
  return text;
}

// "wire 2's first end (b)"
std::string wire_end_words(std::size_t index, int end, const std::string& node) {
  return fmt::format("wire {}'s {} end ({})", index + 1, end == 1 ? "first" : "second", node);
}

}  // namespace

void Loader::load_nodes(const YAML::Node& value, const YAML::Node& key) {
  has_nodes_ = true;
  if (vm_kernels_mark_)
    error(*vm_kernels_mark_,
          "'vm.kernels' cannot go with 'nodes': each node names its own kernel (nodes: {a: "
          "{kernel: \"6.1\"}, b: {kernel: \"7.3\"}})");
  if (value.IsNull() || (value.IsMap() && value.size() == 0)) {
    error(value.IsNull() ? key : value,
          "'nodes' is empty: declare at least one node, such as nodes: {a: {kernel: \"6.1\"}}");
    return;
  }
  if (!value.IsMap()) {
    error(value, fmt::format("'nodes' must be a mapping of node names to {{kernel: ...}}, such as {{a: {{kernel: "
                             "\"6.1\"}}, b: {{}}}}, got {}",
                             type_name(value)));
    return;
  }
  std::size_t count = 0;
  for_each_pair(value, [&](const std::string& name, const YAML::Node& name_node, const YAML::Node& v) {
    if (++count == kMaxLabNodes + 1)
      error(name_node, fmt::format("node '{}' is one too many: a scenario has at most {} nodes, each a lab VM of "
                                   "about 1.4 GB of memory",
                                   excerpt(name), kMaxLabNodes));
    if (count > kMaxLabNodes) return;
    load_node(name, name_node, v);
  });
}

void Loader::load_node(const std::string& name, const YAML::Node& key, const YAML::Node& value) {
  if (!valid_node_name(name)) {
    error(key, fmt::format("node name '{}' must be a letter, then letters, digits, '-' or '_', at most 15 bytes",
                           excerpt(name)));
    return;
  }
  NodeSpec node{.name = name, .kernel = std::nullopt, .mark = mark_of(key)};
  if (!value.IsNull() && !value.IsMap()) {
    error(value,
          fmt::format("node '{}' must be a mapping such as {{kernel: \"6.1\"}}, got {}", name, type_name(value)));
  } else if (value.IsMap()) {
    for_each_pair(value, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
      if (k != "kernel") {
        error(key_node, fmt::format("unknown key '{}' in node '{}'{}", excerpt(k), name, did_you_mean(k, kNodeKeys)));
        return;
      }
      auto s = scalar_text(v, key_node, fmt::format("nodes.{}.kernel", name));
      if (!s) return;
      auto e = expand_string(*s, mark_of(v), false);
      if (!e) return;
      if (e->empty())
        error(v, fmt::format("the kernel of node '{}' cannot be empty", name));
      else
        node.kernel = *e;
    });
  }
  // Kept after an error in its value: the steps that name it are right.
  scenario_.nodes.push_back(std::move(node));
}

void Loader::load_wires(const YAML::Node& value, const YAML::Node& key) {
  if (value.IsNull()) return;
  if (!value.IsSequence()) {
    error(value,
          fmt::format("'wires' must be a list of wires such as [{{a: eth1, b: eth1}}], got {}", type_name(value)));
    return;
  }
  // The derived MACs number the wires in one byte.
  if (value.size() > 255) {
    error(key, fmt::format("'wires' holds {} wires; at most 255", value.size()));
    return;
  }
  std::size_t index = 0;
  for (const auto& item : value) load_wire(item, index++);
}

void Loader::load_wire(const YAML::Node& item, std::size_t index) {
  if (!item.IsMap()) {
    error(item, fmt::format("a wire must be a mapping of two nodes to their NICs, such as {{a: eth1, b: eth1}}, got {}",
                            type_name(item)));
    return;
  }
  if (item.size() != 2) {
    error(item, fmt::format("a wire joins two nodes' NICs, such as {{a: eth1, b: eth1}}; this one names {} node{}",
                            item.size(), item.size() == 1 ? "" : "s"));
    return;
  }
  std::vector<WireEndRead> ends;
  for_each_pair(item, [&](const std::string& node, const YAML::Node& key, const YAML::Node& v) {
    if (!scenario_.find_node(node)) {
      error(key, fmt::format("wire names node '{}', which 'nodes' does not declare (nodes: {})", excerpt(node),
                             node_list(scenario_)));
      return;
    }
    if (auto end = load_wire_end(node, key, v)) ends.push_back(std::move(*end));
  });
  if (ends.size() != 2) return;
  for (int i = 0; i < 2; ++i) {
    auto& read = ends[static_cast<std::size_t>(i)];
    if (!read.mac_given) read.end.mac = derived_mac(index + 1, i + 1);
    claim_wire_end(read, index, i + 1);
  }
  scenario_.wires.push_back(WireSpec{.a = ends[0].end, .b = ends[1].end, .mark = mark_of(item)});
}

std::optional<Loader::WireEndRead> Loader::load_wire_end(const std::string& node, const YAML::Node& key,
                                                         const YAML::Node& value) {
  WireEndRead read;
  read.end.node = node;
  read.end.mark = mark_of(key);
  read.mac_mark = mark_of(key);
  std::optional<YAML::Node> nic, mac;
  if (value.IsScalar()) {
    nic = value;
  } else if (value.IsMap()) {
    for_each_pair(value, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
      if (k == "nic")
        nic = v;
      else if (k == "mac")
        mac = v;
      else
        error(key_node, fmt::format("unknown key '{}' in the wire end of node '{}'{}", excerpt(k), node,
                                    did_you_mean(k, kWireEndKeys)));
    });
    if (!nic) {
      error(value,
            fmt::format("the wire end of node '{}' names no 'nic': {{nic: eth1, mac: \"52:54:00:12:34:56\"}}", node));
      return std::nullopt;
    }
  } else {
    error(value.IsNull() ? key : value,
          fmt::format("the wire end of node '{}' must be a NIC's name (eth1) or {{nic: eth1, mac: ...}}, got {}", node,
                      type_name(value)));
    return std::nullopt;
  }
  auto nic_text = scalar_text(*nic, key, "nic");
  if (!nic_text) return std::nullopt;
  auto name = expand_string(*nic_text, mark_of(*nic), false);
  if (!name) return std::nullopt;
  std::string why;
  read.nic_mark = mark_of(*nic);
  if (!valid_ifname(*name, &why)) {
    error(*nic, fmt::format("'{}' is not a valid interface name: {}", excerpt(*name), why));
    return std::nullopt;
  }
  if (*name == "lo") {
    error(*nic, fmt::format("'lo' is the loopback of node '{}': a wire joins a NIC of its own (eth1)", node));
    return std::nullopt;
  }
  read.end.nic = *name;
  if (mac) {
    auto mac_text = scalar_text(*mac, key, "mac");
    if (!mac_text) return std::nullopt;
    auto given = expand_string(*mac_text, mark_of(*mac), false);
    if (!given) return std::nullopt;
    read.end.mac = normalized_mac(*given, &why);
    if (read.end.mac.empty()) {
      error(*mac, fmt::format("'{}' is not a NIC's MAC address: {}", excerpt(*given), why));
      return std::nullopt;
    }
    read.mac_given = true;
    read.mac_mark = mark_of(*mac);
  }
  return read;
}

void Loader::claim_wire_end(const WireEndRead& read, std::size_t index, int which) {
  const WireEnd& end = read.end;
  const std::string nic = end.node + "/" + end.nic;
  if (auto [it, fresh] = nics_.try_emplace(nic, read.nic_mark, index); !fresh)
    error(read.nic_mark, fmt::format("{} of node '{}' is on wire {} already (at {}:{}): a NIC joins one wire", end.nic,
                                     end.node, it->second.second + 1, it->second.first.line, it->second.first.col));
  const std::string who = wire_end_words(index, which, end.node);
  if (auto [it, fresh] = macs_.try_emplace(end.mac, read.mac_mark, who); !fresh) {
    if (read.mac_given)
      error(read.mac_mark, fmt::format("MAC {} is given twice: {} has it already (at {}:{})", end.mac,
                                       it->second.second, it->second.first.line, it->second.first.col));
    else
      error(read.mac_mark, fmt::format("the MAC derived for this end, {}, is the one {} is given (at {}:{}): give "
                                       "this end a MAC, or that one another",
                                       end.mac, it->second.second, it->second.first.line, it->second.first.col));
  }
}

std::string Loader::unknown_node(const std::string& name, std::string_view what) const {
  if (!has_nodes_)
    return fmt::format("{} names node '{}', but this scenario declares no 'nodes' (the lab VMs of a two-node lab)",
                       what, excerpt(name));
  std::vector<std::string> names;
  for (const auto& n : scenario_.nodes) names.push_back(n.name);
  return fmt::format("unknown node '{}' in {}{}; 'nodes' declares {}", excerpt(name), what, did_you_mean(name, names),
                     node_list(scenario_));
}

void Loader::load_step_node(StepSpec& step, const YAML::Node& key_node, const YAML::Node& value) {
  auto s = common_text(key_node, value, "node");
  if (!s) return;
  if (!scenario_.find_node(*s)) {
    error(value, unknown_node(*s, "'node'"));
    return;
  }
  step.node = *s;
}

void Loader::check_step_nodes(StepSpec& step, bool node_given) {
  const Kind* kind = registry_.find(step.kind);
  if (!kind) return;  // no kind, or an unknown one: reported
  // Both ends (each end the step gives) name their node: the step needs none.
  int ends = 0, named = 0;
  for (const auto& path : kind->end_nodes) {
    if (!end_given(step.params, path)) continue;
    ++ends;
    const nlohmann::json* v = param_at(step.params, path);
    if (!v || !v->is_string()) continue;  // not given (the step's node), or not a string (reported)
    ++named;
    const std::string& name = v->get_ref<const std::string&>();
    if (!has_nodes_ || !scenario_.find_node(name)) error(step.mark_of(path), unknown_node(name, "'" + path + "'"));
  }
  const bool ends_named = ends > 0 && named == ends;
  // A `node:` that names no node was reported where it is.
  if (!has_nodes_ || node_given || scenario_.nodes.empty()) return;
  const std::string& kind_name = kind->spec.name;
  if (kind_name == "sleep" || ends_named) return;  // a sleep touches no kernel
  if (kind_name == "wait" || kind_name == "revert") {
    // It runs where the step it names (its scalar parameter) ran.
    if (!step.params.is_string()) return;  // reported
    const StepSpec* target = find_loaded(step.params.get<std::string>());
    if (!target || target->index >= step.index) return;  // reported
    const auto nodes = step_nodes(*target, registry_.find(target->kind));
    if (nodes.size() == 1) {
      step.node = nodes.front();
      return;
    }
  }
  std::string message = fmt::format("step '{}' runs on a node: this scenario has nodes ({}); add {}", step.name,
                                    node_list(scenario_), node_choices(scenario_));
  if (!kind->end_nodes.empty())
    message += fmt::format(", or name each end's node ({})", fmt::join(kind->end_nodes, ", "));
  error(step.mark, std::move(message));
}

}  // namespace rxerun::loading
