#include "sys/model/traffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "base/strings.h"

namespace rxerun::sys {

Result<PingResult> ModelPinger::ping(const PingSpec& spec, SteadyTime deadline, Interrupt&) {
  calls.push_back(spec);
  std::vector<std::string> cmd{"ping", "-c", std::to_string(spec.count), "-i",
                               decimal_text(spec.interval.count() / 1000.0)};
  if (!spec.from_dev.empty()) cmd.insert(cmd.end(), {"-I", spec.from_dev});
  if (!spec.from_addr.empty()) cmd.insert(cmd.end(), {"-I", spec.from_addr});
  cmd.push_back(spec.to);
  k_.did("ping", "ping " + spec.to, shell_join(cmd));
  if (auto f = k_.fault("ping", spec.to)) return *f;
  PingResult r;
  r.sent = spec.count;
  if (takes) {
    // The ping stops at the deadline with what it has sent by then.
    const auto now = clock_.now();
    if (deadline - now < *takes) {
      const auto left = std::chrono::duration_cast<Duration>(deadline - now);
      r.sent = std::max(1, static_cast<int>(spec.count * left.count() / std::max<long long>(1, takes->count())));
      clock_.advance(left);
    } else {
      clock_.advance(*takes);
    }
  }
  if (!send_error.empty()) {
    r.send_errors = r.sent;
    r.send_error = send_error;
  }
  r.received = send_error.empty() ? (replies ? std::min(*replies, r.sent) : r.sent) : 0;
  if (r.received > 0) {
    r.rtt_min_ms = 0.05;
    r.rtt_avg_ms = 0.07;
    r.rtt_max_ms = 0.1;
  }
  return r;
}

namespace {

std::string verbs_side(const VerbsEndpoint& e, const std::string& addr, const std::string& port) {
  std::string s = addr.find(':') != std::string::npos && !port.empty() ? "[" + addr + "]" : addr;
  s += port;
  if (e.netns) s += " in netns " + *e.netns;
  return s;
}

}  // namespace

std::string ModelVerbs::describe(const VerbsRequest& r) {
  std::string s = "verbs check ";
  if (r.mode == VerbsMode::Self) {
    s += r.dev + " -> " + r.dev + " (two queue pairs, GID of " + (r.addr.empty() ? "its IPv4 address" : r.addr) + ")";
  } else {
    const std::string to = r.client.to.empty() ? r.server.addr : r.client.to;
    s += verbs_side(r.client, r.client.addr.empty() ? "the routed source" : r.client.addr, "") + " -> " +
         verbs_side(r.server, to, ":" + std::to_string(r.port));
    if (r.server.addr.empty()) s += " (nothing of rxerun's listens there)";
  }
  s += ": ";
  for (std::size_t i = 0; i < r.ops.size(); ++i) s += (i ? ", " : "") + to_string(r.ops[i]);
  s += "; sizes ";
  for (std::size_t i = 0; i < r.sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(r.sizes[i]);
  if (r.iterations > 0) s += "; " + std::to_string(r.iterations) + " iterations of latency and bandwidth each";
  return s + " (librdmacm/libibverbs in rxerun: no shell equivalent)";
}

Result<VerbsResult> ModelVerbs::run(const VerbsRequest& request, SteadyTime deadline, Interrupt&) {
  requests.push_back(request);
  deadlines.push_back(deadline);
  k_.did("verbs", describe(request), "");
  if (on_run) on_run();
  if (auto f = k_.fault("verbs.run")) return *f;
  if (result) return *result;
  VerbsResult r;
  r.ops_done = request.ops;
  for (unsigned size : request.sizes) {
    r.bytes_verified += static_cast<std::uint64_t>(size) * request.ops.size();
    if (request.iterations > 0)
      r.sizes.push_back({.size = size, .lat_iterations = request.iterations, .bw_iterations = request.iterations});
  }
  return r;
}

Result<void> ModelCaptures::start(const CaptureRequest& r) {
  requests.push_back(r);
  if (auto f = k_.fault("captures.start", r.dev)) return *f;
  if (running.count(r.id)) return make_error("capture " + r.id + " is already running", EEXIST);
  running[r.id] = r;
  k_.did("captures", fmt::format("capture on {} ({}) to {}", r.dev, r.filter, r.file),
         shell_join({"tcpdump", "-i", r.dev, "-s", std::to_string(r.snaplen), "-w", r.file, r.filter}) + " &");
  return {};
}

Result<nlohmann::json> ModelCaptures::stop(const std::string& id) {
  stops.push_back(id);
  k_.did("captures", "stop capture " + id, "kill %tcpdump");
  auto it = running.find(id);
  if (it == running.end()) {
    const Error none = make_error("no capture " + id + " is running", ENOENT);
    if (k_.refused(none)) return none;
    return nlohmann::json::object();
  }
  nlohmann::json out = facts;
  out["file"] = it->second.file;
  running.erase(it);
  return out;
}

Result<bool> ModelCaptures::recover(const std::string& partial, const std::string& file) {
  recovered.emplace_back(partial, file);
  return true;
}

}  // namespace rxerun::sys
