#include "engine/nodes.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/kind.h"
#include "engine/model.h"

namespace rxerun {

namespace {

int nodes_hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::vector<std::string> step_nodes(const StepSpec& step, const Kind* kind) {
  std::vector<std::string> nodes;
  auto add = [&](const std::string& node) {
    if (!node.empty() && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  };
  const std::string own = step.node.value_or("");
  bool any_end = false;
  if (kind) {
    for (const auto& path : kind->end_nodes) {
      if (!end_given(step.params, path)) continue;
      any_end = true;
      const nlohmann::json* end = param_at(step.params, path);
      add(end && end->is_string() ? end->get<std::string>() : own);
    }
  }
  if (!any_end) add(own);
  return nodes;
}

const nlohmann::json* param_at(const nlohmann::json& params, const std::string& path) {
  const nlohmann::json* at = &params;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &at->at(key);
    if (dot == std::string::npos) return at;
    start = dot + 1;
  }
}

bool end_given(const nlohmann::json& params, const std::string& end_node_path) {
  const std::size_t dot = end_node_path.rfind('.');
  return dot == std::string::npos || param_at(params, end_node_path.substr(0, dot)) != nullptr;
}

bool valid_node_name(std::string_view name) {
  if (name.empty() || name.size() > 15) return false;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!letter(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9') || c == '-' || c == '_'; });
}

std::string normalized_mac(std::string_view text, std::string* why) {
  auto bad = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return std::string();
  };
  if (text.size() != 17) return bad("a MAC address is six pairs of hex digits joined by ':' (52:54:00:12:34:56)");
  std::string mac;
  int octets[6] = {};
  for (std::size_t i = 0; i < 6; ++i) {
    const int hi = nodes_hex_digit(text[3 * i]), lo = nodes_hex_digit(text[3 * i + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && text[3 * i + 2] != ':'))
      return bad("a MAC address is six pairs of hex digits joined by ':' (52:54:00:12:34:56)");
    octets[i] = hi * 16 + lo;
  }
  if (std::all_of(std::begin(octets), std::end(octets), [](int o) { return o == 0; }))
    return bad("the all-zero address is no NIC's");
  if (octets[0] & 1) return bad("a multicast address (the first octet is odd): a NIC's own address is unicast");
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", octets[0], octets[1], octets[2], octets[3], octets[4],
                     octets[5]);
}

std::string derived_mac(std::size_t wire, int end) {
  return fmt::format("52:54:00:0a:{:02x}:{:02x}", wire, end);
}

}  // namespace rxerun
