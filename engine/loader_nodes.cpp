#include "engine/loader_nodes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "base/utf8.h"
#include "engine/checks.h"
#include "engine/kind.h"
#include "engine/nodes.h"

namespace rxerun::loading {

namespace {

const std::vector<std::string> kNodeKeys{"kernel"};
const std::vector<std::string> kWireEndKeys{"nic", "mac"};

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

void NodesReader::read_nodes(const YAML::Node& value, const YAML::Node& key, std::optional<Mark> vm_kernels) {
  has_nodes_ = true;
  if (vm_kernels)
    sink_.error(*vm_kernels,
                "'vm.kernels' cannot go with 'nodes': each node names its own kernel (nodes: {a: "
                "{kernel: \"6.1\"}, b: {kernel: \"7.3\"}})");
  if (value.IsNull() || (value.IsMap() && value.size() == 0)) {
    sink_.error(value.IsNull() ? key : value,
                "'nodes' is empty: declare at least one node, such as nodes: {a: {kernel: \"6.1\"}}");
    return;
  }
  if (!value.IsMap()) {
    sink_.error(value, fmt::format("'nodes' must be a mapping of node names to {{kernel: ...}}, such as {{a: "
                                   "{{kernel: \"6.1\"}}, b: {{}}}}, got {}",
                                   type_name(value)));
    return;
  }
  std::size_t count = 0;
  for_each_pair(value, [&](const std::string& name, const YAML::Node& name_node, const YAML::Node& v) {
    if (++count == kMaxLabNodes + 1)
      sink_.error(name_node, fmt::format("node '{}' is one too many: a scenario has at most {} nodes, each a lab VM "
                                         "of about 1.4 GB of memory",
                                         excerpt(name), kMaxLabNodes));
    if (count > kMaxLabNodes) return;
    read_node(name, name_node, v);
  });
}

void NodesReader::read_node(const std::string& name, const YAML::Node& key, const YAML::Node& value) {
  if (!valid_node_name(name)) {
    sink_.error(key, fmt::format("node name '{}' must be a letter, then letters, digits, '-' or '_', at most 15 bytes",
                                 excerpt(name)));
    return;
  }
  NodeSpec node{.name = name, .kernel = std::nullopt, .mark = mark_of(key)};
  if (!value.IsNull() && !value.IsMap()) {
    sink_.error(value,
                fmt::format("node '{}' must be a mapping such as {{kernel: \"6.1\"}}, got {}", name, type_name(value)));
  } else if (value.IsMap()) {
    for_each_pair(value, [&](const std::string& k, const YAML::Node& key_node, const YAML::Node& v) {
      if (k != "kernel") {
        sink_.error(key_node,
                    fmt::format("unknown key '{}' in node '{}'{}", excerpt(k), name, did_you_mean(k, kNodeKeys)));
        return;
      }
      auto s = scalar_text(v, key_node, fmt::format("nodes.{}.kernel", name), sink_);
      if (!s) return;
      auto e = vars_.expand(*s, mark_of(v));
      if (!e) return;
      if (e->empty())
        sink_.error(v, fmt::format("the kernel of node '{}' cannot be empty", name));
      else
        node.kernel = *e;
    });
  }
  // Kept after an error in its value: the steps that name it are right.
  scenario_.nodes.push_back(std::move(node));
}

void NodesReader::read_wires(const YAML::Node& value, const YAML::Node& key) {
  if (value.IsNull()) return;
  if (!value.IsSequence()) {
    sink_.error(
        value, fmt::format("'wires' must be a list of wires such as [{{a: eth1, b: eth1}}], got {}", type_name(value)));
    return;
  }
  // The derived MACs number the wires in one byte.
  if (value.size() > 255) {
    sink_.error(key, fmt::format("'wires' holds {} wires; at most 255", value.size()));
    return;
  }
  std::size_t index = 0;
  for (const auto& item : value) read_wire(item, index++);
}

void NodesReader::read_wire(const YAML::Node& item, std::size_t index) {
  if (!item.IsMap()) {
    sink_.error(item, fmt::format("a wire must be a mapping of two nodes to their NICs, such as {{a: eth1, b: eth1}}, "
                                  "got {}",
                                  type_name(item)));
    return;
  }
  if (item.size() != 2) {
    sink_.error(item,
                fmt::format("a wire joins two nodes' NICs, such as {{a: eth1, b: eth1}}; this one names {} node{}",
                            item.size(), item.size() == 1 ? "" : "s"));
    return;
  }
  std::vector<WireEndRead> ends;
  for_each_pair(item, [&](const std::string& node, const YAML::Node& key, const YAML::Node& v) {
    if (!scenario_.find_node(node)) {
      sink_.error(key, fmt::format("wire names node '{}', which 'nodes' does not declare (nodes: {})", excerpt(node),
                                   node_list(scenario_)));
      return;
    }
    if (auto end = read_wire_end(node, key, v)) ends.push_back(std::move(*end));
  });
  if (ends.size() != 2) return;
  for (int i = 0; i < 2; ++i) {
    auto& read = ends[static_cast<std::size_t>(i)];
    if (!read.mac_given) read.end.mac = derived_mac(index + 1, i + 1);
    claim_wire_end(read, index, i + 1);
  }
  scenario_.wires.push_back(WireSpec{.a = ends[0].end, .b = ends[1].end, .mark = mark_of(item)});
}

std::optional<NodesReader::WireEndRead> NodesReader::read_wire_end(const std::string& node, const YAML::Node& key,
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
        sink_.error(key_node, fmt::format("unknown key '{}' in the wire end of node '{}'{}", excerpt(k), node,
                                          did_you_mean(k, kWireEndKeys)));
    });
    if (!nic) {
      sink_.error(value, fmt::format("the wire end of node '{}' names no 'nic': {{nic: eth1, mac: "
                                     "\"52:54:00:12:34:56\"}}",
                                     node));
      return std::nullopt;
    }
  } else {
    sink_.error(value.IsNull() ? key : value,
                fmt::format("the wire end of node '{}' must be a NIC's name (eth1) or {{nic: eth1, mac: ...}}, got {}",
                            node, type_name(value)));
    return std::nullopt;
  }
  auto name = read_nic(node, key, *nic);
  if (!name) return std::nullopt;
  read.nic_mark = mark_of(*nic);
  read.end.nic = *name;
  if (mac) {
    auto normalized = read_mac(key, *mac);
    if (!normalized) return std::nullopt;
    read.end.mac = *normalized;
    read.mac_given = true;
    read.mac_mark = mark_of(*mac);
  }
  return read;
}

std::optional<std::string> NodesReader::read_nic(const std::string& node, const YAML::Node& key,
                                                 const YAML::Node& nic) {
  auto text = scalar_text(nic, key, "nic", sink_);
  if (!text) return std::nullopt;
  auto name = vars_.expand(*text, mark_of(nic));
  if (!name) return std::nullopt;
  std::string why;
  if (!valid_ifname(*name, &why)) {
    sink_.error(nic, fmt::format("'{}' is not a valid interface name: {}", excerpt(*name), why));
    return std::nullopt;
  }
  if (*name == "lo") {
    sink_.error(nic, fmt::format("'lo' is the loopback of node '{}': a wire joins a NIC of its own (eth1)", node));
    return std::nullopt;
  }
  return name;
}

std::optional<std::string> NodesReader::read_mac(const YAML::Node& key, const YAML::Node& mac) {
  auto text = scalar_text(mac, key, "mac", sink_);
  if (!text) return std::nullopt;
  auto given = vars_.expand(*text, mark_of(mac));
  if (!given) return std::nullopt;
  std::string why;
  std::string normalized = normalized_mac(*given, &why);
  if (normalized.empty()) {
    sink_.error(mac, fmt::format("'{}' is not a NIC's MAC address: {}", excerpt(*given), why));
    return std::nullopt;
  }
  return normalized;
}

void NodesReader::claim_wire_end(const WireEndRead& read, std::size_t index, int which) {
  const WireEnd& end = read.end;
  const std::string nic = end.node + "/" + end.nic;
  if (auto [it, fresh] = nics_.try_emplace(nic, read.nic_mark, index); !fresh)
    sink_.error(read.nic_mark,
                fmt::format("{} of node '{}' is on wire {} already (at {}:{}): a NIC joins one wire", end.nic, end.node,
                            it->second.second + 1, it->second.first.line, it->second.first.col));
  const std::string who = wire_end_words(index, which, end.node);
  if (auto [it, fresh] = macs_.try_emplace(end.mac, read.mac_mark, who); !fresh) {
    if (read.mac_given)
      sink_.error(read.mac_mark, fmt::format("MAC {} is given twice: {} has it already (at {}:{})", end.mac,
                                             it->second.second, it->second.first.line, it->second.first.col));
    else
      sink_.error(read.mac_mark,
                  fmt::format("the MAC derived for this end, {}, is the one {} is given (at {}:{}): give this end a "
                              "MAC, or that one another",
                              end.mac, it->second.second, it->second.first.line, it->second.first.col));
  }
}

std::string NodesReader::unknown_node(const std::string& name, std::string_view what) const {
  if (!has_nodes_)
    return fmt::format("{} names node '{}', but this scenario declares no 'nodes' (the lab VMs of a two-node lab)",
                       what, excerpt(name));
  std::vector<std::string> names;
  for (const auto& n : scenario_.nodes) names.push_back(n.name);
  return fmt::format("unknown node '{}' in {}{}; 'nodes' declares {}", excerpt(name), what, did_you_mean(name, names),
                     node_list(scenario_));
}

void NodesReader::read_step_node(StepSpec& step, const std::string& name, const YAML::Node& value) {
  if (!scenario_.find_node(name)) {
    sink_.error(value, unknown_node(name, "'node'"));
    return;
  }
  step.node = name;
}

void NodesReader::check_step_nodes(StepSpec& step, bool node_given, const StepTable& steps) {
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
    if (!has_nodes_ || !scenario_.find_node(name))
      sink_.error(step.mark_of(path), unknown_node(name, "'" + path + "'"));
  }
  const bool ends_named = ends > 0 && named == ends;
  // A `node:` that names no node was reported where it is.
  if (!has_nodes_ || node_given || scenario_.nodes.empty()) return;
  const std::string& kind_name = kind->spec.name;
  if (kind_name == "sleep" || ends_named) return;  // a sleep touches no kernel
  if (kind_name == "wait" || kind_name == "revert") {
    // It runs where the step it names (its scalar parameter) ran.
    if (!step.params.is_string()) return;  // reported
    const StepSpec* target = steps.find(step.params.get<std::string>());
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
  sink_.error(step.mark, std::move(message));
}

}  // namespace rxerun::loading
