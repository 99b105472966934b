// verbs: a native RDMA check with librdmacm and libibverbs (sys::Verbs), no
// external tool. Two modes:
// - cm (default): a server listens on an address, a client connects with
//   rdma_cm (each in its own namespace when asked); SEND/RECV, RDMA WRITE
//   and RDMA READ of a pattern, every byte verified where it lands; then
//   latency (SEND ping-pong) and bandwidth (RDMA WRITE streaming) per size.
//   Without `server`, nothing listens: the client alone connects to
//   `client.to`, which is how a scenario checks a refusal.
// - self: two queue pairs on one device, connected by hand (RESET, INIT,
//   RTR, RTS): the single-device hand recipe's loopback RDMA WRITE.
// With its ends on two nodes of a two-node lab, the step runs on the
// client's node and starts the server on the other as a tool, `rxerun
// __verbs-server` (sys/verbs.h); the two ends' results become one.
//
// The step turns parameters into a request and the answer into an outcome
// and facts: refused, unreachable, a completion with an error or a byte that
// differs is `fail`; no progress before the step's timeout is `timeout`.
// Like every traffic step it reports the counter deltas of every rxe device
// and of the netdevs of the namespaces it ran in (steps/common/traffic.h), and it
// warns when both ends ran on one device (docs/kernel-notes.md, "Loopback": then no
// packet crossed the wire). Changes nothing, so it has no undo.

#include <algorithm>
#include <chrono>

#include "base/try.h"
#include "engine/step.h"
#include "steps/common/tool_pair.h"
#include "steps/common/traffic.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_verbs(const Params& params, StepContext& ctx);

// rxe's largest message (max_msg_sz); each size is one message.
constexpr long long kMaxSize = 8 * 1024 * 1024;

void validate_verbs(const nlohmann::json& p, const KindSpec::Complaint& complain) {
  const bool self = p.contains("mode") && p.at("mode") == "self";
  if (self) {
    if (!p.contains("dev")) complain("", "mode self needs 'dev': the RDMA device whose two queue pairs talk");
    for (const char* k : {"server", "client"})
      if (p.contains(k)) complain(k, std::string("'") + k + "' is for mode cm; mode self uses 'dev' (and 'addr')");
  } else {
    for (const char* k : {"dev", "addr"})
      if (p.contains(k)) complain(k, std::string("'") + k + "' is for mode self; mode cm uses 'server' and 'client'");
    const bool has_server = p.contains("server");
    const bool has_to = p.contains("client") && p.at("client").is_object() && p.at("client").contains("to");
    if (!has_server && !has_to)
      complain("",
               "mode cm needs 'server: {addr: ...}' (where rxerun listens), or 'client: {to: ...}' to connect "
               "where nothing of rxerun's listens");
  }
  for (const char* k : {"ops", "sizes"})
    if (p.contains(k) && p.at(k).is_array() && p.at(k).empty()) complain(k, std::string("'") + k + "' is empty");
}

}  // namespace

Kind verbs_kind() {
  KindSpec spec;
  spec.name = "verbs";
  spec.needs = {Need::RdmaRxe};
  spec.objects = {
      {.effect = LabEffect::Uses, .object = LabObject::Netns, .param = "server.netns", .node_param = "server.node"},
      {.effect = LabEffect::Uses, .object = LabObject::Netns, .param = "client.netns", .node_param = "client.node"},
      {.effect = LabEffect::Uses, .object = LabObject::RdmaDevice, .param = "dev"}};
  spec.summary =
      "A native RDMA check (librdmacm + libibverbs): connect, SEND/RECV, RDMA WRITE and READ of a pattern verified "
      "byte for byte, latency and bandwidth per size; or two queue pairs on one device (mode self).";
  const ParamSpec netns{
      .name = "netns", .type = ParamType::NetnsName, .help = "its network namespace (default: the step's)"};
  const ParamSpec node{.name = "node",
                       .type = ParamType::String,
                       .help = "with `nodes:`: the node (lab VM) it runs on (default: the step's `node:`)"};
  spec.params = {
      {.name = "mode",
       .type = ParamType::Enum,
       .default_value = "cm",
       .help = "cm: a server and a client connected by rdma_cm; self: two queue pairs on one device, connected by hand",
       .choices = {"cm", "self"}},
      {.name = "server",
       .type = ParamType::Object,
       .help = "cm: where rxerun's server listens",
       .fields = {{.name = "addr", .type = ParamType::Address, .required = true, .help = "the address it listens on"},
                  netns,
                  node}},
      {.name = "client",
       .type = ParamType::Object,
       .help = "cm: the client",
       .fields = {{.name = "addr", .type = ParamType::Address, .help = "its source address (default: the route's)"},
                  netns,
                  node,
                  {.name = "to",
                   .type = ParamType::Address,
                   .help = "where it connects (default: the server's address); without a server nothing of "
                           "rxerun's listens there"}}},
      {.name = "port",
       .type = ParamType::Int,
       .default_value = 18515,
       .help = "cm: the rdma_cm port",
       .min = 1,
       .max = 65535},
      {.name = "dev", .type = ParamType::IfName, .help = "self: the RDMA device (rxe0)"},
      {.name = "addr",
       .type = ParamType::Address,
       .help =
           "self: the address whose GID the queue pairs use (default: the device's first IPv4-mapped RoCE v2 entry)"},
      {.name = "ops",
       .type = ParamType::List,
       .default_value = nlohmann::json::array({"send", "write", "read"}),
       .help = "the operations to verify, in this order whatever the list's: send, write, read",
       .fields =
           {{.name = "op", .type = ParamType::Enum, .help = "an operation", .choices = {"send", "write", "read"}}}},
      {.name = "sizes",
       .type = ParamType::List,
       .default_value = nlohmann::json::array({4096}),
       .help = "message sizes in bytes, each verified and measured",
       .fields = {{.name = "size",
                   .type = ParamType::Int,
                   .help = "bytes: 1 to 8 MiB (rxe's largest message)",
                   .min = 1,
                   .max = kMaxSize}}},
      {.name = "iterations",
       .type = ParamType::Int,
       .default_value = 100,
       .help = "per size: round trips for latency and RDMA WRITEs for bandwidth; 0 verifies only",
       .min = 0,
       .max = 10'000'000},
  };
  spec.facts = {
      {"mode", "cm or self"},
      {"ops_done", "the operations verified for every size, in order: send,write,read"},
      {"bytes_verified", "bytes compared with the pattern where they landed, all operations and sizes"},
      {"server_device", "the RDMA device the server's queue pair ran on (self: the device)"},
      {"client_device", "the RDMA device the client's queue pair ran on; the same as the server's: looped back"},
      {"local_gid", "the client's GID (self: the GID both queue pairs use)"},
      {"remote_gid", "the server's GID, as the client's route has it"},
      {"gid_index", "self: the GID table index used, looked up for the address"},
      {"active_mtu", "the port's active MTU in bytes"},
      {.name = "lat_min_us_SIZE",
       .help = "latency at SIZE bytes: the fastest half round trip (SEND ping-pong), microseconds",
       .names_from = "sizes"},
      {.name = "lat_avg_us_SIZE",
       .help = "latency at SIZE bytes: the mean half round trip, microseconds",
       .names_from = "sizes"},
      {.name = "lat_p99_us_SIZE",
       .help = "latency at SIZE bytes: the 99th percentile half round trip, microseconds",
       .names_from = "sizes"},
      {.name = "bw_mib_SIZE", .help = "bandwidth at SIZE bytes: RDMA WRITEs streamed, MiB/s", .names_from = "sizes"},
      {"stage", "on failure: what it was doing (connect, write 4096, ...)"},
      {"cause", "on failure: the rdma_cm event, completion status or check that ended it"},
      {"DEV.COUNTER", "deltas across the step of every rxe device's counters and of the netdevs of its namespaces"},
      {"NODE.DEV.COUNTER",
       "ends on two nodes: the same deltas on each node, named with the node in front (a.rxe0.rcvd_pkts, "
       "b.eth1.tx_packets)"},
  };
  spec.example =
      "- name: across\n"
      "  verbs:\n"
      "    server: {addr: 10.10.0.1, netns: a}\n"
      "    client: {addr: 10.10.0.2, netns: b}\n"
      "    ops: [send, write, read]\n"
      "    sizes: [64, 4096, 65536]\n"
      "  expect: {ops_done: \"send,write,read\", rxe1.sent_pkts: \"> 0\"}\n"
      "- name: loopback\n"
      "  verbs: {mode: self, dev: rxe0, ops: [write]}\n";
  spec.default_timeout = Duration{60'000};
  spec.validate = validate_verbs;
  Kind kind{std::move(spec), run_verbs, {}};
  kind.end_nodes = {"server.node", "client.node"};
  return kind;
}

namespace {

sys::VerbsEndpoint endpoint(const Params& p, const char* key) {
  sys::VerbsEndpoint e;
  if (!p.has(key)) return e;
  const Params o = p.object(key);
  if (o.has("addr")) e.addr = o.str("addr");
  if (o.has("netns")) e.netns = o.str("netns");
  if (o.has("to")) e.to = o.str("to");
  return e;
}

sys::VerbsRequest request_from(const Params& p) {
  sys::VerbsRequest r;
  r.mode = p.str("mode") == "self" ? sys::VerbsMode::Self : sys::VerbsMode::Cm;
  r.server = endpoint(p, "server");
  r.client = endpoint(p, "client");
  r.port = static_cast<unsigned>(p.integer("port"));
  if (p.has("dev")) r.dev = p.str("dev");
  if (p.has("addr")) r.addr = p.str("addr");
  r.ops.clear();
  for (const auto& op : p.at("ops")) {
    // The loader allowed only the three names.
    const auto v = sys::verbs_op_named(op.get<std::string>()).value_or(sys::VerbsOp::Send);
    if (std::find(r.ops.begin(), r.ops.end(), v) == r.ops.end()) r.ops.push_back(v);
  }
  r.sizes.clear();
  for (const auto& s : p.at("sizes")) {
    const auto v = static_cast<unsigned>(s.get<long long>());
    if (std::find(r.sizes.begin(), r.sizes.end(), v) == r.sizes.end()) r.sizes.push_back(v);
  }
  r.iterations = static_cast<unsigned>(p.integer("iterations"));
  return r;
}

nlohmann::json verbs_facts(const sys::VerbsRequest& req, const sys::VerbsResult& r) {
  std::string ops;
  for (auto op : r.ops_done) ops += (ops.empty() ? "" : ",") + sys::to_string(op);
  nlohmann::json f = {{"changed", false},
                      {"mode", req.mode == sys::VerbsMode::Self ? "self" : "cm"},
                      {"ops_done", ops},
                      {"bytes_verified", r.bytes_verified}};
  if (!r.server_device.empty()) f["server_device"] = r.server_device;
  if (!r.client_device.empty()) f["client_device"] = r.client_device;
  if (!r.local_gid.empty()) f["local_gid"] = r.local_gid;
  if (!r.remote_gid.empty()) f["remote_gid"] = r.remote_gid;
  if (r.gid_index) f["gid_index"] = *r.gid_index;
  if (r.active_mtu) f["active_mtu"] = r.active_mtu;
  for (const auto& s : r.sizes) {
    const std::string n = std::to_string(s.size);
    if (s.lat_iterations) {
      f["lat_min_us_" + n] = rounded(s.lat_min_us, 2);
      f["lat_avg_us_" + n] = rounded(s.lat_avg_us, 2);
      f["lat_p99_us_" + n] = rounded(s.lat_p99_us, 2);
    }
    if (s.bw_iterations) f["bw_mib_" + n] = rounded(s.bw_mib, 2);
  }
  if (!r.stage.empty() && r.status != sys::VerbsStatus::Ok) f["stage"] = r.stage;
  if (!r.cause.empty()) f["cause"] = r.cause;
  return f;
}

// Likely causes of a failure, from what ended it.
std::vector<std::string> verbs_hints(const sys::VerbsRequest& req, const sys::VerbsResult& r) {
  const std::string to = req.client.to.empty() ? req.server.addr : req.client.to;
  const std::string& c = r.cause;
  if (c == "RDMA_CM_EVENT_REJECTED")
    return {"nothing listens on " + to + " port " + std::to_string(req.port) +
            " (no server, another port), or the server refused the request"};
  if (c == "RDMA_CM_EVENT_UNREACHABLE") return {unanswered_hint(to)};
  if (c == "RDMA_CM_EVENT_ADDR_ERROR" || c == "rdma_resolve_addr")
    return {"the address did not resolve: no route to " + to +
            " from the client's namespace, nobody answers ARP "
            "for it, or no rxe device sits on the netdev the route leaves by"};
  if (c == "RDMA_CM_EVENT_ROUTE_ERROR")
    return {"no route to " + to + ": check the routes and rules of the client's namespace"};
  if (c.starts_with("modify QP"))
    return {"Failed to " + c + ": GID index, device/address mismatch, MTU (" + std::to_string(r.active_mtu) +
            " active), or the port not ACTIVE"};
  if (c.starts_with("IBV_WC"))
    return {
        "the peer stopped answering or refused the access: packets dropped (`block`, `netem`), its device went "
        "away, or a wrong rkey"};
  if (c == "mismatch") return {"the data changed on the way: `netem corrupt`? rxe checks the ICRC, so it should not"};
  if (c == "deadline" && (r.stage == "connect" || r.stage == "accept"))
    return {
        "a connection request without an answer is retried by the kernel for over a minute: UDP 4791 dropped on "
        "the way (a `block` on the input hook?)"};
  if (c == "port") return {"a port is ACTIVE only while its netdev is up with carrier (both ends of a veth up)"};
  return {};
}

// Across two nodes: how much longer than the client the server may run, so
// that a client that runs out of time is the one that says so; and how long
// the server is given to end by itself once the client is through (its
// goodbye).
constexpr Duration kServerGrace{5000};
constexpr Duration kVerbsServerEnd{5000};
constexpr Duration kListenPoll{50};

sys::VerbsResult ended_early(sys::VerbsStatus status, std::string message, std::string cause) {
  sys::VerbsResult r;
  r.status = status;
  r.message = std::move(message);
  r.stage = "wait for the server";
  r.cause = std::move(cause);
  return r;
}

// The server's result: the last line of its output that is a JSON object.
Result<sys::VerbsResult> server_result(const sys::RunningTool& server, const std::string& node) {
  const std::string& out = server.out();
  std::size_t end = out.size();
  while (end > 0) {
    const std::size_t start = out.rfind('\n', end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    auto line = nlohmann::json::parse(out.substr(from, end - from), nullptr, false);
    if (line.is_object()) {
      auto r = sys::verbs_result_from_json(line);
      if (!r) return make_error("the verbs server on node " + node + ": " + r.error().message, r.error().code);
      return r;
    }
    if (start == std::string::npos) break;
    end = start;
  }
  return make_error("the verbs server on node " + node + " ended without a result" +
                    (server.err().empty() ? std::string() : ": " + last_lines(server.err(), "")));
}

// Across two nodes (sys/verbs.h, docs/nodes.md): the server as a tool of
// its own node, `rxerun __verbs-server`; the client here once it listens.
Result<sys::VerbsResult> run_across(const sys::VerbsRequest& req, const std::string& server_node, StepContext& ctx) {
  sys::Clock& clock = ctx.sys().clock;
  sys::Interrupt& interrupt = ctx.sys().interrupt;
  const sys::SteadyTime deadline = ctx.deadline();
  const Duration budget =
      deadline == sys::SteadyTime::max()
          ? kMaxDuration
          : std::chrono::duration_cast<Duration>(std::max(deadline - clock.now(), sys::SteadyTime::duration{0})) +
                kServerGrace;
  const std::string at = req.server.addr + ":" + std::to_string(req.port);
  sys::ToolSpec spec;
  spec.argv = {"/proc/self/exe", "__verbs-server"};
  spec.node = server_node;
  spec.input = sys::verbs_request_json(req, budget).dump();
  spec.what = "rxerun's verbs server on " + at + " (node " + server_node + ")";
  RXERUN_TRY_ASSIGN(const auto started, ctx.sys().tools.start(spec));
  sys::RunningTool& server = *started;

  // Until it listens: a server that ends first could not listen (its result says why).
  for (;;) {
    const bool ended = server.poll().has_value();
    if (server.out().starts_with(std::string(sys::kVerbsListening) + "\n")) break;
    if (ended) return server_result(server, server_node);
    if (clock.now() >= deadline) {
      (void)server.stop(Duration(1000));
      return ended_early(sys::VerbsStatus::TimedOut,
                         "the server on node " + server_node + " did not listen on " + at + " in time", "deadline");
    }
    if (clock.wait_until(std::min(deadline, clock.now() + kListenPoll), interrupt) == sys::WaitResult::Interrupted) {
      (void)server.stop(Duration(1000));
      return ended_early(sys::VerbsStatus::Interrupted, "interrupted", "interrupt");
    }
  }

  sys::VerbsRequest client = req;
  if (client.client.to.empty()) client.client.to = req.server.addr;
  client.server = {};
  auto ran = ctx.sys().verbs.run(client, deadline, interrupt);
  // After a goodbye the server ends by itself; after a client that failed
  // it may still wait for one: it is stopped, and says how it ended.
  if (ran && ran->status == sys::VerbsStatus::Ok) (void)server.wait(clock.now() + kVerbsServerEnd, interrupt);
  if (!server.poll()) (void)server.stop(Duration(1000));
  if (!ran) return ran;
  auto served = server_result(server, server_node);
  if (!served) {
    // A client that failed says more than a server that left no result.
    if (ran->status != sys::VerbsStatus::Ok) return ran;
    return served.error();
  }
  return sys::merge_verbs_ends(*ran, *served);
}

StepResult run_verbs(const Params& params, StepContext& ctx) {
  const sys::VerbsRequest req = request_from(params);
  // Across two nodes the step runs on the client's node and starts the
  // server on its own (docs/nodes.md).
  const std::string step_node = ctx.step().node.value_or("");
  auto node_of = [&](const char* end) {
    return params.has(end) && params.object(end).has("node") ? params.object(end).str("node") : step_node;
  };
  const std::string server_node = node_of("server");
  const bool across = req.mode == sys::VerbsMode::Cm && !req.server.addr.empty() && server_node != node_of("client");
  // The counters of both ends' namespaces: here, or the server's on its node.
  const OtherNode server_side{.here = node_of("client"), .there = server_node, .netns = req.server.netns};
  RXERUN_TRY_ASSIGN(const CounterWindow window, req.mode == sys::VerbsMode::Self ? CounterWindow::open(ctx, {})
                                                : across
                                                    ? CounterWindow::open(ctx, {req.client.netns}, server_side)
                                                    : CounterWindow::open(ctx, {req.server.netns, req.client.netns}));

  RXERUN_TRY_ASSIGN(const sys::VerbsResult r, across ? run_across(req, server_node, ctx)
                                                     : ctx.sys().verbs.run(req, ctx.deadline(), ctx.sys().interrupt));
  nlohmann::json facts = verbs_facts(req, r);
  if (r.status == sys::VerbsStatus::Interrupted || ctx.sys().interrupt.requested())
    return StepResult::error("interrupted");
  RXERUN_TRY(window.close(ctx, facts));

  switch (r.status) {
    case sys::VerbsStatus::Ok: {
      StepResult ok = StepResult::ok(facts);
      if (req.mode == sys::VerbsMode::Cm && !across && !r.server_device.empty() && r.server_device == r.client_device)
        ok.hints.push_back("both ends ran on " + r.server_device +
                           ": rdma_cm looped the traffic back inside the device and nothing crossed the wire "
                           "(put the ends in two namespaces, kernel 7.3)");
      return ok;
    }
    case sys::VerbsStatus::TimedOut: {
      StepResult t = StepResult::timeout("the step's timeout ran out during " + r.stage + ": " + r.message, facts);
      t.hints = verbs_hints(req, r);
      return t;
    }
    case sys::VerbsStatus::Failed:
    case sys::VerbsStatus::Interrupted: break;
  }
  StepResult f = StepResult::fail(r.message, facts);
  f.hints = verbs_hints(req, r);
  return f;
}

}  // namespace

}  // namespace rxerun::steps
