// The vocabulary of sys/verbs.h, apart from the real check (sys/verbs/),
// so that code that only names operations, or carries requests and results
// between processes and nodes, does not need libibverbs.

#include "sys/verbs.h"

#include <algorithm>

namespace rxerun::sys {

std::string to_string(VerbsOp op) {
  switch (op) {
    case VerbsOp::Send: return "send";
    case VerbsOp::Write: return "write";
    case VerbsOp::Read: return "read";
  }
  return "?";
}

std::optional<VerbsOp> verbs_op_named(std::string_view name) {
  for (VerbsOp op : {VerbsOp::Send, VerbsOp::Write, VerbsOp::Read})
    if (to_string(op) == name) return op;
  return std::nullopt;
}

namespace {

using json = nlohmann::json;

json endpoint_json(const VerbsEndpoint& e) {
  json j = {{"addr", e.addr}, {"to", e.to}};
  if (e.netns) j["netns"] = *e.netns;
  return j;
}

VerbsEndpoint endpoint_from(const json& j) {
  VerbsEndpoint e;
  e.addr = j.at("addr").get<std::string>();
  e.to = j.at("to").get<std::string>();
  if (j.contains("netns")) e.netns = j.at("netns").get<std::string>();
  return e;
}

}  // namespace

json verbs_request_json(const VerbsRequest& r, Duration budget) {
  json ops = json::array();
  for (VerbsOp op : r.ops) ops.push_back(to_string(op));
  return {{"mode", r.mode == VerbsMode::Self ? "self" : "cm"},
          {"server", endpoint_json(r.server)},
          {"client", endpoint_json(r.client)},
          {"port", r.port},
          {"dev", r.dev},
          {"addr", r.addr},
          {"ops", ops},
          {"sizes", r.sizes},
          {"iterations", r.iterations},
          {"budget_ms", budget.count()}};
}

Result<VerbsRequest> verbs_request_from_json(const json& j, Duration* budget) {
  try {
    VerbsRequest r;
    r.mode = j.at("mode").get<std::string>() == "self" ? VerbsMode::Self : VerbsMode::Cm;
    r.server = endpoint_from(j.at("server"));
    r.client = endpoint_from(j.at("client"));
    r.port = j.at("port").get<unsigned>();
    r.dev = j.at("dev").get<std::string>();
    r.addr = j.at("addr").get<std::string>();
    r.ops.clear();
    for (const auto& op : j.at("ops")) {
      const std::string s = op.get<std::string>();
      const auto named = verbs_op_named(s);
      if (!named) return make_error("no verbs operation '" + s + "'", EINVAL);
      r.ops.push_back(*named);
    }
    r.sizes = j.at("sizes").get<std::vector<unsigned>>();
    r.iterations = j.at("iterations").get<unsigned>();
    const long long ms = j.at("budget_ms").get<long long>();
    if (ms < 0) return make_error("budget_ms is negative", EINVAL);
    *budget = std::min<Duration>(Duration(ms), kMaxDuration);
    return r;
  } catch (const json::exception& e) {
    return make_error(std::string("not a verbs request: ") + e.what(), EINVAL);
  }
}

json verbs_result_json(const Result<VerbsResult>& r) {
  if (!r) return {{"error", r.error().message}, {"code", r.error().code}};
  const VerbsResult& v = *r;
  json ops = json::array();
  for (VerbsOp op : v.ops_done) ops.push_back(static_cast<int>(op));
  json sizes = json::array();
  for (const auto& s : v.sizes)
    sizes.push_back({{"size", s.size},
                     {"lat_iterations", s.lat_iterations},
                     {"lat_min_us", s.lat_min_us},
                     {"lat_avg_us", s.lat_avg_us},
                     {"lat_p99_us", s.lat_p99_us},
                     {"bw_iterations", s.bw_iterations},
                     {"bw_mib", s.bw_mib}});
  json j = {{"status", static_cast<int>(v.status)},
            {"message", v.message},
            {"stage", v.stage},
            {"cause", v.cause},
            {"ops_done", ops},
            {"bytes_verified", v.bytes_verified},
            {"server_device", v.server_device},
            {"client_device", v.client_device},
            {"local_gid", v.local_gid},
            {"remote_gid", v.remote_gid},
            {"active_mtu", v.active_mtu},
            {"sizes", sizes}};
  if (v.gid_index) j["gid_index"] = *v.gid_index;
  return j;
}

Result<VerbsResult> verbs_result_from_json(const json& j) {
  try {
    if (j.contains("error")) return make_error(j.at("error").get<std::string>(), j.value("code", 0));
    VerbsResult v;
    const int status = j.at("status").get<int>();
    if (status < static_cast<int>(VerbsStatus::Ok) || status > static_cast<int>(VerbsStatus::Interrupted))
      return make_error("not a verbs status: " + std::to_string(status), EINVAL);
    v.status = static_cast<VerbsStatus>(status);
    v.message = j.at("message").get<std::string>();
    v.stage = j.at("stage").get<std::string>();
    v.cause = j.at("cause").get<std::string>();
    for (const auto& op : j.at("ops_done")) {
      const int n = op.get<int>();
      if (n < static_cast<int>(VerbsOp::Send) || n > static_cast<int>(VerbsOp::Read))
        return make_error("not a verbs operation: " + std::to_string(n), EINVAL);
      v.ops_done.push_back(static_cast<VerbsOp>(n));
    }
    v.bytes_verified = j.at("bytes_verified").get<std::uint64_t>();
    v.server_device = j.at("server_device").get<std::string>();
    v.client_device = j.at("client_device").get<std::string>();
    v.local_gid = j.at("local_gid").get<std::string>();
    v.remote_gid = j.at("remote_gid").get<std::string>();
    v.active_mtu = j.at("active_mtu").get<unsigned>();
    if (j.contains("gid_index")) v.gid_index = j.at("gid_index").get<unsigned>();
    for (const auto& s : j.at("sizes"))
      v.sizes.push_back({s.at("size").get<unsigned>(), s.at("lat_iterations").get<unsigned>(),
                         s.at("lat_min_us").get<double>(), s.at("lat_avg_us").get<double>(),
                         s.at("lat_p99_us").get<double>(), s.at("bw_iterations").get<unsigned>(),
                         s.at("bw_mib").get<double>()});
    return v;
  } catch (const json::exception& e) {
    return make_error(std::string("not a verbs result: ") + e.what(), EINVAL);
  }
}

VerbsResult merge_verbs_ends(VerbsResult client, const VerbsResult& server) {
  client.server_device = server.server_device;
  client.bytes_verified += server.bytes_verified;
  const bool own_finding = server.cause == "mismatch" || server.cause == "protocol";
  if (server.status != VerbsStatus::Ok && (client.status == VerbsStatus::Ok || own_finding)) {
    client.status = server.status;
    client.message = server.message;
    client.stage = server.stage;
    client.cause = server.cause;
  }
  return client;
}

}  // namespace rxerun::sys
