#include "sys/model/settings.h"

#include <array>
#include <cerrno>
#include <string_view>

#include "base/strings.h"

namespace rxerun::sys {

std::string* ModelSysctl::find(const std::string& key) {
  auto& values_here = by_netns[k_.netns];
  if (auto it = values_here.find(key); it != values_here.end()) return &it->second;
  const std::string path = sysctl_path(key);
  for (auto& [k, v] : values_here)
    if (sysctl_path(k) == path) return &v;
  return nullptr;
}

Result<std::string> ModelSysctl::read(const std::string& key) {
  if (auto f = k_.fault("sysctl.read", key)) return *f;
  if (const auto* v = find(key)) return *v;
  if (!k_.open_world) return make_error("no sysctl " + key, ENOENT);
  // Only rxerun's own namespace is the host's: a namespace of the plan does not exist.
  if (k_.netns.empty() && host_value)
    if (auto v = host_value(key)) return *v;
  return std::string(kValueAtRunTime);
}

Result<void> ModelSysctl::write(const std::string& key, const std::string& value) {
  if (auto f = k_.fault("sysctl.write", key)) return *f;
  auto* v = find(key);
  if (!v && !k_.open_world) return make_error("no sysctl " + key, ENOENT);
  if (v) {
    *v = value;
  } else {
    by_netns[k_.netns][key] = value;  // the host's keys are not a plan's to know
  }
  if (value == kValueAtRunTime) {
    k_.did("sysctl", "set " + key + " back to the value it had before, known only at run time", "");
  } else {
    k_.did("sysctl", "set " + key + " to " + value, shell_join({"sysctl", "-w", key + "=" + value}));
  }
  return {};
}

Result<std::map<std::string, Feature>> ModelEthtool::features(const std::string& dev) {
  if (auto f = k_.fault("ethtool.features", dev)) return *f;
  auto& here = by_netns[k_.netns];
  if (auto it = here.find(dev); it != here.end()) return it->second;
  if (k_.open_world) return std::map<std::string, Feature>{};
  return make_error("no interface " + dev, ENODEV);
}

Result<std::map<std::string, bool>> ModelEthtool::set_features(const std::string& dev,
                                                               const std::map<std::string, bool>& wanted) {
  if (auto f = k_.fault("ethtool.set_features", dev)) return *f;
  std::map<std::string, bool> changed = wanted;  // an open world's answer: each feature as asked
  auto& here = by_netns[k_.netns];
  if (auto it = here.find(dev); it != here.end()) {
    changed.clear();
    for (const auto& [name, on] : wanted) {
      auto f = it->second.find(name);
      if (f == it->second.end()) return make_error("unknown feature " + name, EOPNOTSUPP);
      if (f->second.fixed && f->second.active != on) return make_error(name + " is fixed", EOPNOTSUPP);
      if (f->second.active != on) changed[name] = on;
      f->second.active = on;
    }
    for (const auto& [cause, effect] : drags) {
      if (!changed.count(cause.first) || changed.at(cause.first) != cause.second) continue;
      auto f = it->second.find(effect.first);
      if (f != it->second.end() && f->second.active != effect.second)
        f->second.active = changed[effect.first] = effect.second;
    }
  } else if (!k_.open_world) {
    return make_error("no interface " + dev, ENODEV);
  }
  std::vector<std::string> cmd{"ethtool", "-K", dev};
  std::string what;
  for (const auto& [name, on] : wanted) {
    cmd.insert(cmd.end(), {name, on ? "on" : "off"});
    what += (what.empty() ? "" : ", ") + name + (on ? " on" : " off");
  }
  k_.did("ethtool", "set " + what + " on " + dev, shell_join(cmd));
  return changed;
}

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

Result<std::optional<std::string>> ModelQdiscs::root_kind(const std::string& dev) {
  auto& here = roots[k_.netns];
  auto it = here.find(dev);
  if (it == here.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<void> ModelQdiscs::add_netem(const std::string& dev, const NetemSpec& spec) {
  if (auto f = k_.fault("qdiscs.add_netem", dev)) return *f;
  if (!netem) return make_error("netem is not available", ENOENT);
  auto& here = roots[k_.netns];
  if (auto it = here.find(dev); it != here.end() && !attached_by_kernel(it->second))
    return make_error("Exclusivity flag on, cannot modify (root qdisc " + it->second + " of " + dev + ")", EEXIST);
  here[dev] = "netem";
  netem_specs[k_.netns][dev] = spec;
  std::vector<std::string> cmd{"tc", "qdisc", "add", "dev", dev, "root", "netem"};
  if (spec.delay) {
    cmd.insert(cmd.end(), {"delay", format_duration(*spec.delay)});
    if (spec.jitter) cmd.push_back(format_duration(*spec.jitter));
  }
  if (spec.loss_pct) cmd.insert(cmd.end(), {"loss", decimal_text(*spec.loss_pct) + "%"});
  if (spec.duplicate_pct) cmd.insert(cmd.end(), {"duplicate", decimal_text(*spec.duplicate_pct) + "%"});
  if (spec.corrupt_pct) cmd.insert(cmd.end(), {"corrupt", decimal_text(*spec.corrupt_pct) + "%"});
  if (spec.reorder_pct) cmd.insert(cmd.end(), {"reorder", decimal_text(*spec.reorder_pct) + "%"});
  if (spec.rate_bytes_per_s) cmd.insert(cmd.end(), {"rate", std::to_string(*spec.rate_bytes_per_s * 8) + "bit"});
  k_.did("qdiscs", "add netem on " + dev, shell_join(cmd));
  return {};
}

Result<QdiscStats> ModelQdiscs::root_stats(const std::string& dev) {
  if (auto f = k_.fault("qdiscs.root_stats", dev)) return *f;
  k_.looked("qdiscs", "read the qdisc statistics of " + dev, shell_join({"tc", "-s", "qdisc", "show", "dev", dev}));
  if (roots[k_.netns].count(dev)) return stats;
  if (k_.open_world) return QdiscStats{};
  return make_error("no qdisc on " + dev, ENOENT);
}

Result<void> ModelQdiscs::remove_root(const std::string& dev) {
  if (auto f = k_.fault("qdiscs.remove_root", dev)) return *f;
  auto& here = roots[k_.netns];
  auto it = here.find(dev);
  if (it == here.end() || attached_by_kernel(it->second)) {
    const Error none = make_error("no qdisc on " + dev, ENOENT);
    if (k_.refused(none)) return none;
  } else {
    here.erase(it);
    netem_specs[k_.netns].erase(dev);
  }
  k_.did("qdiscs", "remove the root qdisc of " + dev, shell_join({"tc", "qdisc", "del", "dev", dev, "root"}));
  return {};
}

}  // namespace rxerun::sys
