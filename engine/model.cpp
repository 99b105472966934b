#include "engine/model.h"

namespace rxerun {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::Ok: return "ok";
    case Outcome::Fail: return "fail";
    case Outcome::Timeout: return "timeout";
    case Outcome::Error: return "error";
  }
  return "?";
}

std::string_view to_string(KernelHealthPolicy p) {
  switch (p) {
    case KernelHealthPolicy::Fail: return "fail";
    case KernelHealthPolicy::Warn: return "warn";
    case KernelHealthPolicy::Off: return "off";
  }
  return "?";
}

std::optional<KernelHealthPolicy> parse_kernel_health_policy(std::string_view text) {
  for (auto p : {KernelHealthPolicy::Fail, KernelHealthPolicy::Warn, KernelHealthPolicy::Off})
    if (text == to_string(p)) return p;
  return std::nullopt;
}

Mark StepSpec::mark_of(const std::string& path) const {
  // "server.netns" falls back to "server", then to the kind key, then the step.
  std::string p = path;
  while (true) {
    if (auto it = marks.find(p); it != marks.end()) return it->second;
    if (p.empty()) return mark;
    auto dot = p.rfind('.');
    p = dot == std::string::npos ? "" : p.substr(0, dot);
  }
}

const StepSpec* Scenario::find_step(const std::string& step_name) const {
  for (const auto& s : steps)
    if (s.name == step_name) return &s;
  return nullptr;
}

const NodeSpec* Scenario::find_node(const std::string& node_name) const {
  for (const auto& n : nodes)
    if (n.name == node_name) return &n;
  return nullptr;
}

}  // namespace rxerun
