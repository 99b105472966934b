#include "sys/recording/verbs.h"

#include "sys/recording/system.h"

namespace rxerun::sys {

namespace {

std::string side(const VerbsEndpoint& e, const std::string& addr, const std::string& port) {
  std::string s = addr.find(':') != std::string::npos && !port.empty() ? "[" + addr + "]" : addr;
  s += port;
  if (e.netns) s += " in netns " + *e.netns;
  return s;
}

}  // namespace

std::string RecordingVerbs::describe(const VerbsRequest& r) {
  std::string s = "verbs check ";
  if (r.mode == VerbsMode::Self) {
    s += r.dev + " -> " + r.dev + " (two queue pairs, GID of " + (r.addr.empty() ? "its IPv4 address" : r.addr) + ")";
  } else {
    const std::string to = r.client.to.empty() ? r.server.addr : r.client.to;
    s += side(r.client, r.client.addr.empty() ? "the routed source" : r.client.addr, "") + " -> " +
         side(r.server, to, ":" + std::to_string(r.port));
    if (r.server.addr.empty()) s += " (nothing of rxerun's listens there)";
  }
  s += ": ";
  for (std::size_t i = 0; i < r.ops.size(); ++i) s += (i ? ", " : "") + to_string(r.ops[i]);
  s += "; sizes ";
  for (std::size_t i = 0; i < r.sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(r.sizes[i]);
  if (r.iterations > 0) s += "; " + std::to_string(r.iterations) + " iterations of latency and bandwidth each";
  return s + " (librdmacm/libibverbs in rxerun: no shell equivalent)";
}

Result<VerbsResult> RecordingVerbs::run(const VerbsRequest& request, SteadyTime, Interrupt&) {
  log_.record(describe(request), "");
  VerbsResult r;
  r.ops_done = request.ops;
  for (unsigned size : request.sizes) {
    r.bytes_verified += static_cast<std::uint64_t>(size) * request.ops.size();
    if (request.iterations > 0)
      r.sizes.push_back({.size = size, .lat_iterations = request.iterations, .bw_iterations = request.iterations});
  }
  return r;
}

}  // namespace rxerun::sys
