#include "steps/common/traffic.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace rxerun::steps {

nlohmann::json rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const double r = std::round(v * scale) / scale;
  if (r == std::floor(r) && std::fabs(r) < 1e15) return static_cast<long long>(r);
  return r;
}

std::string unanswered_hint(const std::string& address) {
  return "the connection request got no answer: UDP 4791 dropped on the way (a `block` on the input hook?), or no "
         "rxe device over the netdev that holds " +
         address;
}

namespace {

// The netdevs of one namespace, read inside it.
Result<std::vector<sys::LinkStats>> netdev_stats(StepContext& ctx, const std::optional<std::string>& netns) {
  std::unique_ptr<sys::NetnsScope> inside;
  if (netns) {
    auto entered = ctx.sys().netns.enter(*netns);
    if (!entered) return entered.error();
    inside = std::move(*entered);
  }
  return ctx.sys().links.statistics();
}

// The namespaces, each once, in the order given.
std::vector<std::optional<std::string>> distinct(const std::vector<std::optional<std::string>>& netns) {
  std::vector<std::optional<std::string>> out;
  for (const auto& n : netns)
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  if (out.empty()) out.push_back(std::nullopt);
  return out;
}

Result<CounterWindow::Snapshot> snapshot(StepContext& ctx, const std::vector<std::optional<std::string>>& netns) {
  CounterWindow::Snapshot out;
  auto devs = ctx.sys().rdma.soft_devices();
  if (!devs) return devs.error();
  for (const auto& d : *devs) {
    auto counters = ctx.sys().rdma.counters(d.name, sys::kRxePort);
    if (!counters) {
      if (counters.error().code == ENODEV || counters.error().code == ENOENT) continue;  // went meanwhile
      return counters.error();
    }
    for (const auto& [name, value] : *counters) out[d.name + "." + name] = value;
  }

  // A netdev name in two of the namespaces (lo always is) gets its
  // namespace's name in front; the step's own namespace keeps the plain name.
  std::vector<std::pair<std::optional<std::string>, std::vector<sys::LinkStats>>> per_ns;
  std::map<std::string, int> seen;
  for (const auto& n : netns) {
    auto stats = netdev_stats(ctx, n);
    if (!stats) return stats.error();
    for (const auto& s : *stats) ++seen[s.name];
    per_ns.emplace_back(n, std::move(*stats));
  }
  for (const auto& [n, stats] : per_ns)
    for (const auto& s : stats) {
      const std::string prefix = (seen[s.name] > 1 && n) ? *n + "/" : "";
      for (const auto& [name, value] : s.counters) out[prefix + s.name + "." + name] = value;
    }
  return out;
}

}  // namespace

Result<CounterWindow> CounterWindow::open(StepContext& ctx, const std::vector<std::optional<std::string>>& netns) {
  CounterWindow w;
  w.netns_ = distinct(netns);
  auto before = snapshot(ctx, w.netns_);
  if (!before) return before.error();
  w.before_ = std::move(*before);
  return w;
}

Result<void> CounterWindow::close(StepContext& ctx, nlohmann::json& facts) const {
  auto after = snapshot(ctx, netns_);
  if (!after) return after.error();
  for (const auto& [name, value] : *after) {
    auto it = before_.find(name);
    const std::uint64_t from = it == before_.end() || it->second > value ? 0 : it->second;
    facts[name] = value - from;
  }
  return {};
}

}  // namespace rxerun::steps
