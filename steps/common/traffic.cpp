#include "steps/common/traffic.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/duration.h"
#include "base/strings.h"
#include "base/try.h"

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
Result<std::vector<sys::LinkStats>> netdev_stats(sys::System& sys, const std::optional<std::string>& netns) {
  std::unique_ptr<sys::NetnsScope> inside;
  if (netns) {
    RXERUN_TRY_ASSIGN(inside, sys.netns.enter(*netns));
  }
  return sys.links.statistics();
}

// The namespaces, each once, in the order given.
std::vector<std::optional<std::string>> distinct(const std::vector<std::optional<std::string>>& netns) {
  std::vector<std::optional<std::string>> out;
  for (const auto& n : netns)
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  if (out.empty()) out.push_back(std::nullopt);
  return out;
}

// The other node's counters, read there by `rxerun __counters` (a tool of
// that node) within kRemoteRead.
constexpr Duration kRemoteRead{15000};

Result<CounterWindow::Snapshot> read_there(StepContext& ctx, const OtherNode& other) {
  sys::ToolSpec spec;
  spec.argv = {"/proc/self/exe", "__counters"};
  if (other.netns) spec.argv.insert(spec.argv.end(), {"--netns", *other.netns});
  spec.node = other.there;
  spec.what = "read node " + other.there + "'s counters";
  RXERUN_TRY_ASSIGN(const auto started, ctx.sys().tools.start(spec));
  sys::RunningTool& tool = *started;
  const auto ended = tool.wait(ctx.sys().clock.now() + kRemoteRead, ctx.sys().interrupt);
  if (ended != sys::ToolWait::Exited) {
    (void)tool.stop(Duration(1000));
    return make_error(ended == sys::ToolWait::Interrupted
                          ? std::string("interrupted")
                          : "node " + other.there + "'s counters: no answer within " + format_duration(kRemoteRead));
  }
  const auto status = tool.poll();
  const std::string why = "node " + other.there + "'s counters: ";
  if (!status || status->code != 0 || status->signal != 0)
    return make_error(why + (tool.err().empty() ? std::string("the reader failed") : std::string(trim(tool.err()))));
  const auto j = nlohmann::json::parse(tool.out(), nullptr, false);
  if (!j.is_object()) return make_error(why + "not a JSON object: " + tool.out().substr(0, 80));
  CounterWindow::Snapshot out;
  for (const auto& [name, value] : j.items()) {
    if (!value.is_number_unsigned()) return make_error(why + name + " is not a count");
    out[name] = value.get<std::uint64_t>();
  }
  return out;
}

// The deltas from `before` to `after` as facts, each name after `prefix`.
void add_deltas(const CounterWindow::Snapshot& before, const CounterWindow::Snapshot& after, const std::string& prefix,
                nlohmann::json& facts) {
  for (const auto& [name, value] : after) {
    auto it = before.find(name);
    const std::uint64_t from = it == before.end() || it->second > value ? 0 : it->second;
    facts[prefix + name] = value - from;
  }
}

}  // namespace

Result<CounterWindow::Snapshot> CounterWindow::read(sys::System& sys,
                                                    const std::vector<std::optional<std::string>>& netns) {
  Snapshot out;
  RXERUN_TRY_ASSIGN(const auto devs, sys.rdma.soft_devices());
  for (const auto& d : devs) {
    auto counters = sys.rdma.counters(d.name, sys::kRxePort);
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
    RXERUN_TRY_ASSIGN(auto stats, netdev_stats(sys, n));
    for (const auto& s : stats) ++seen[s.name];
    per_ns.emplace_back(n, std::move(stats));
  }
  for (const auto& [n, stats] : per_ns)
    for (const auto& s : stats) {
      const std::string prefix = (seen[s.name] > 1 && n) ? *n + "/" : "";
      for (const auto& [name, value] : s.counters) out[prefix + s.name + "." + name] = value;
    }
  return out;
}

Result<CounterWindow> CounterWindow::open(StepContext& ctx, const std::vector<std::optional<std::string>>& netns,
                                          std::optional<OtherNode> other) {
  CounterWindow w;
  w.netns_ = distinct(netns);
  w.other_ = std::move(other);
  RXERUN_TRY_ASSIGN(w.before_, read(ctx.sys(), w.netns_));
  if (w.other_) {
    RXERUN_TRY_ASSIGN(w.other_before_, read_there(ctx, *w.other_));
  }
  return w;
}

Result<void> CounterWindow::close(StepContext& ctx, nlohmann::json& facts) const {
  RXERUN_TRY_ASSIGN(const Snapshot after, read(ctx.sys(), netns_));
  if (!other_) {
    add_deltas(before_, after, "", facts);
    return {};
  }
  RXERUN_TRY_ASSIGN(const Snapshot there, read_there(ctx, *other_));
  add_deltas(before_, after, other_->here + ".", facts);
  add_deltas(other_before_, there, other_->there + ".", facts);
  return {};
}

}  // namespace rxerun::steps
