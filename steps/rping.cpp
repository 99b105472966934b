// rping: rdmacm-utils' rping, server and client, each in its own network
// namespace when asked (steps/common/tool_pair.h runs them: the server first, the
// client once it listens, both stopped before the step ends on every path).
//
//   LC_ALL=C [ip netns exec NS] rping -s -a SERVER -p PORT -C COUNT -S SIZE -v
//   LC_ALL=C [ip netns exec NS] rping -c -a SERVER [-I CLIENT] -p PORT -C COUNT -S SIZE -v
//
// Outcomes: the client's COUNT round trips done -> ok; still running at the
// step's timeout -> timeout (killed: a connection request that gets no
// answer, UDP 4791 dropped, is retried by the kernel for 78 s on 7.3 and
// 103 s on 6.1); refused, unreachable, a server that cannot bind -> fail,
// quoting the tool's last error lines. Facts: the round trips (one
// `ping data` line each with -v), duration, how each tool ended, and the
// counter deltas of every traffic step (steps/common/traffic.h). Changes nothing,
// so it has no undo.

#include "base/strings.h"
#include "base/try.h"
#include "engine/step.h"
#include "steps/common/tool_pair.h"
#include "steps/common/traffic.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_rping(const Params& params, StepContext& ctx);

}  // namespace

Kind rping_kind() {
  KindSpec spec;
  spec.name = "rping";
  spec.needs = {Need::RdmaRxe};
  spec.objects = {
      {.effect = LabEffect::Uses, .object = LabObject::Netns, .param = "server_netns", .node_param = "server_node"},
      {.effect = LabEffect::Uses, .object = LabObject::Netns, .param = "client_netns", .node_param = "client_node"}};
  spec.summary =
      "rdmacm-utils' rping: a server and a client (each in its own namespace when asked), COUNT round trips over "
      "rdma_cm; a stalled client is `timeout`, a refused or unreachable one `fail`.";
  spec.params = {
      {.name = "server",
       .type = ParamType::Address,
       .required = true,
       .help = "the address the server binds and the client connects to (rping -a)"},
      {.name = "client",
       .type = ParamType::Address,
       .help = "the client's source address (rping -I; default: the route's)"},
      {.name = "server_netns",
       .type = ParamType::NetnsName,
       .help = "the server's network namespace (default: the step's)"},
      {.name = "client_netns",
       .type = ParamType::NetnsName,
       .help = "the client's network namespace (default: the step's)"},
      {.name = "server_node",
       .type = ParamType::String,
       .help = "with `nodes:`: the node (lab VM) the server runs on (default: the step's `node:`)"},
      {.name = "client_node",
       .type = ParamType::String,
       .help = "with `nodes:`: the node (lab VM) the client runs on (default: the step's `node:`)"},
      {.name = "count",
       .type = ParamType::Int,
       .default_value = 5,
       .help = "round trips (rping -C)",
       .min = 1,
       .max = 1'000'000},
      {.name = "size",
       .type = ParamType::Int,
       .default_value = 64,
       .help = "bytes per ping (rping -S: 23 to 65535: rping refuses its buffer size, 65536)",
       .min = 23,
       .max = 65535},
      {.name = "port",
       .type = ParamType::Int,
       .default_value = 7174,
       .help = "the rdma_cm port (rping -p)",
       .min = 1,
       .max = 65535},
  };
  spec.facts = {
      {"iterations", "round trips the client completed (its `ping data` lines)"},
      {"server_iterations", "round trips the server saw"},
  };
  for (auto& f : tool_pair_fact_specs()) spec.facts.push_back(std::move(f));
  spec.example =
      "- name: rping\n"
      "  rping: {server: 10.10.0.1, server_netns: a, client: 10.10.0.2, client_netns: b, count: 10}\n"
      "  expect: {iterations: 10, rxe1.sent_pkts: \"> 0\", vB.tx_packets: \"> 0\"}\n"
      "- name: blocked\n"
      "  rping: {server: 10.10.0.1, server_netns: a, client_netns: b}\n"
      "  timeout: 10s\n"
      "  expect: timeout\n";
  spec.default_timeout = Duration{30'000};
  Kind kind{std::move(spec), run_rping, {}};
  kind.end_nodes = {"server_node", "client_node"};
  return kind;
}

namespace {

// rping -v prints "ping data: rdma-ping-N: ..." per round trip on the
// client, "server ping data: ..." on the server.
int count_lines(const std::string& out, const std::string& prefix) {
  int n = 0;
  std::size_t pos = 0;
  while (pos < out.size()) {
    auto nl = out.find('\n', pos);
    if (nl == std::string::npos) nl = out.size();
    if (out.compare(pos, prefix.size(), prefix) == 0) ++n;
    pos = nl + 1;
  }
  return n;
}

std::vector<std::string> rping_argv(const Params& p, ToolRole role) {
  const bool server = role == ToolRole::Server;
  std::vector<std::string> a = {"rping", server ? "-s" : "-c", "-a", p.str("server")};
  if (!server && p.has("client")) a.insert(a.end(), {"-I", p.str("client")});
  a.insert(a.end(), {"-p", std::to_string(p.integer("port")), "-C", std::to_string(p.integer("count")), "-S",
                     std::to_string(p.integer("size")), "-v"});
  return a;
}

std::optional<std::string> netns_of(const Params& p, const char* key) {
  if (p.has(key)) return p.str(key);
  return std::nullopt;
}

// Likely causes, from what the tools wrote.
std::vector<std::string> rping_hints(const ToolPairRun& r, const std::string& server) {
  const std::string all = r.output();
  if (contains(all, "rdma_bind_addr"))
    return {"the server cannot bind " + server +
            ": no such address in its namespace (server_netns?) or no rxe "
            "device on the netdev that holds it"};
  if (contains(all, "No RDMA devices"))
    return {"no RDMA device is visible: add one with an rxe step; libibverbs needs ibverbs-providers' rxe.driver"};
  if (contains(all, "REJECTED")) return {nobody_listened_hint(server, "the server")};
  if (contains(all, "UNREACHABLE")) return {unanswered_hint(server)};
  if (contains(all, "ADDR_ERROR") || contains(all, "rdma_resolve_addr") || contains(all, "ROUTE_ERROR"))
    return {"the address did not resolve: no route to " + server +
            " from the client's namespace, nobody answers "
            "ARP for it, or no rxe device on the netdev the route leaves by"};
  return {};
}

StepResult run_rping(const Params& params, StepContext& ctx) {
  const std::string server = params.str("server");
  const auto server_ns = netns_of(params, "server_netns");
  const auto client_ns = netns_of(params, "client_netns");
  const long long count = params.integer("count");
  const std::string at = server + ":" + std::to_string(params.integer("port"));

  ToolPairSpec spec;
  spec.name = "rping";
  spec.server = pair_tool(rping_argv(params, ToolRole::Server), server_ns, "rping server on " + at);
  spec.client = pair_tool(rping_argv(params, ToolRole::Client), client_ns, "rping client to " + at);
  spec.cm_port = static_cast<std::uint16_t>(params.integer("port"));
  // Across two nodes the step runs on the client's node; the server is
  // started on its own node (docs/nodes.md).
  const std::string step_node = ctx.step().node.value_or("");
  const std::string server_node = params.has("server_node") ? params.str("server_node") : step_node;
  const std::string client_node = params.has("client_node") ? params.str("client_node") : step_node;
  if (server_node != client_node) {
    spec.server.node = server_node;
    spec.server_here = false;
  }
  spec.refused = [](const std::string& out, const std::string& err) {
    return count_lines(out, "ping data:") == 0 && contains(err, "RDMA_CM_EVENT_REJECTED");
  };

  // The counters of the client's namespace, and of the server's, here or on its node.
  RXERUN_TRY_ASSIGN(
      const CounterWindow window,
      spec.server_here ? CounterWindow::open(ctx, {server_ns, client_ns})
                       : CounterWindow::open(ctx, {client_ns},
                                             OtherNode{.here = client_node, .there = server_node, .netns = server_ns}));
  RXERUN_TRY_ASSIGN(const ToolPairRun r, run_tool_pair(ctx, spec));

  const int iterations = count_lines(r.client_out, "ping data:");
  const nlohmann::json facts = {{"iterations", iterations},
                                {"server_iterations", count_lines(r.server_out, "server ping data:")}};
  ToolPairWords words;
  words.subject = "the rping";
  words.progress = " after " + std::to_string(iterations) + " of " + std::to_string(count) + " round trips";
  words.stalled_hints = {
      iterations == 0
          ? "a connection request without an answer is retried by the kernel for over a minute (78 s on 7.3): "
            "UDP 4791 dropped on the way (a `block` on the input hook?)"
          : "the round trips stalled: packets dropped mid-run (`block`, `netem`), or raise `timeout`"};
  words.failed_hints = rping_hints(r, server);
  return tool_pair_result(ctx, r, window, facts, words);
}

}  // namespace

}  // namespace rxerun::steps
