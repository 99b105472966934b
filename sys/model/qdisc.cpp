#include "sys/model/qdisc.h"

#include <array>
#include <cerrno>
#include <string_view>

namespace rxerun::sys {

namespace {

// What the kernel attaches by itself (with handle 0), which an exclusive add
// replaces.
bool attached_by_kernel(const std::string& kind) {
  static constexpr std::array<std::string_view, 11> kKinds = {
      "noqueue", "noop", "pfifo_fast", "mq", "fq_codel", "fq", "sfq", "pfifo", "bfifo", "cake", "fq_pie"};
  for (auto k : kKinds)
    if (kind == k) return true;
  return false;
}

}  // namespace

std::optional<std::string> QdiscModel::root_of(const std::string& dev) const {
  auto it = root.find(dev);
  if (it == root.end()) return std::nullopt;
  return it->second;
}

Result<void> QdiscModel::attach_netem(const std::string& dev, const NetemSpec& spec) {
  if (auto it = root.find(dev); it != root.end() && !attached_by_kernel(it->second))
    return make_error("Exclusivity flag on, cannot modify (root qdisc " + it->second + " of " + dev + ")", EEXIST);
  root[dev] = "netem";
  specs[dev] = spec;
  return {};
}

Result<void> QdiscModel::detach_root(const std::string& dev) {
  auto it = root.find(dev);
  if (it == root.end() || attached_by_kernel(it->second)) return make_error("no qdisc on " + dev, ENOENT);
  root.erase(it);
  specs.erase(dev);
  return {};
}

}  // namespace rxerun::sys
