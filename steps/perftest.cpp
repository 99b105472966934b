// perftest: ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_read_lat,
// ib_send_lat between a server and a client (each in its own network
// namespace when asked; steps/common/tool_pair.h runs them: the server first, the
// client once it listens, both stopped before the step ends on every path).
//
//   LC_ALL=C [ip netns exec NS] ib_write_bw -d rxe0 -x 1 -F [-R] -p 18515 [-s S] [-n N | -D SECS] [-m MTU]
//   LC_ALL=C [ip netns exec NS] ib_write_bw -d rxe1 -x 1 -F [-R] -p 18515 ... SERVER_ADDRESS
//
// The GID index is a parameter or, when absent, found per side: the RoCE v2
// entry holding an IPv4-mapped address (the server's: the one of the address
// the client connects to), never assumed to be 1 (docs/kernel-notes.md, "GID
// table"). Without rdma_cm perftest swaps its queue pair data over TCP on
// the port; with it, rdma_cm listens there. The result table is parsed
// (steps/common/perftest_output.h) into facts; a failure quotes the tool's own
// error lines with a hint. Changes nothing, so it has no undo.

#include <arpa/inet.h>

#include <cerrno>
#include <set>
#include <string>

#include "base/strings.h"
#include "base/try.h"
#include "engine/step.h"
#include "steps/common/perftest_output.h"
#include "steps/common/tool_pair.h"
#include "steps/common/traffic.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_perftest(const Params& params, StepContext& ctx);

void validate_perftest(const nlohmann::json& p, const KindSpec::Complaint& complain) {
  if (p.contains("iterations") && p.contains("duration"))
    complain("duration", "'iterations' and 'duration' exclude each other (perftest -n or -D)");
}

}  // namespace

Kind perftest_kind() {
  KindSpec spec;
  spec.name = "perftest";
  spec.needs = {Need::RdmaRxe};
  spec.objects = {
      {.effect = LabEffect::Uses, .object = LabObject::Netns, .param = "server.netns", .node_param = "server.node"},
      {.effect = LabEffect::Uses, .object = LabObject::Netns, .param = "client.netns", .node_param = "client.node"},
      {.effect = LabEffect::Uses,
       .object = LabObject::RdmaDevice,
       .param = "server.dev",
       .netns_param = "server.netns",
       .node_param = "server.node"},
      {.effect = LabEffect::Uses,
       .object = LabObject::RdmaDevice,
       .param = "client.dev",
       .netns_param = "client.netns",
       .node_param = "client.node"}};
  spec.summary =
      "perftest (ib_write_bw, ib_read_lat, ...) between a server and a client, each in its own namespace when "
      "asked; the result table as facts (LC_ALL=C), the GID index found rather than assumed.";
  const ParamSpec netns{
      .name = "netns", .type = ParamType::NetnsName, .help = "its network namespace (default: the step's)"};
  const ParamSpec node{.name = "node",
                       .type = ParamType::String,
                       .help = "with `nodes:`: the node (lab VM) it runs on (default: the step's `node:`)"};
  spec.params = {
      {.name = "test",
       .type = ParamType::Enum,
       .required = true,
       .help = "the perftest program without `ib_`: write_bw runs ib_write_bw",
       .choices = {"write_bw", "read_bw", "send_bw", "write_lat", "read_lat", "send_lat"}},
      {.name = "server",
       .type = ParamType::Object,
       .required = true,
       .help = "the server",
       .fields = {{.name = "dev", .type = ParamType::IfName, .required = true, .help = "its RDMA device (-d)"},
                  netns,
                  node}},
      {.name = "client",
       .type = ParamType::Object,
       .required = true,
       .help = "the client",
       .fields = {{.name = "dev", .type = ParamType::IfName, .required = true, .help = "its RDMA device (-d)"},
                  {.name = "to", .type = ParamType::Address, .required = true, .help = "the server's address"},
                  netns,
                  node}},
      {.name = "gid_index",
       .type = ParamType::Int,
       .help = "the GID index of both ends (-x); default: per device, the RoCE v2 entry of its IPv4 address (the "
               "server's: the one of client.to)",
       .min = 0,
       .max = 255},
      {.name = "rdma_cm",
       .type = ParamType::Bool,
       .default_value = false,
       .help = "connect with rdma_cm (-R) instead of swapping queue pair data over TCP"},
      {.name = "size",
       .type = ParamType::Int,
       .help = "message size in bytes (-s; perftest's default: 65536 for bw, 2 for lat)",
       .min = 1,
       .max = 8 * 1024 * 1024},
      {.name = "iterations",
       .type = ParamType::Int,
       .help = "iterations (-n; perftest's default: 5000 for bw, 1000 for lat)",
       .min = 5,
       .max = 100'000'000},
      {.name = "duration",
       .type = ParamType::Duration,
       .help = "run for this long instead of a count (-D, whole seconds)"},
      {.name = "mtu",
       .type = ParamType::Enum,
       .help = "the IB MTU (-m; default: the port's active MTU)",
       .choices = {"256", "512", "1024", "2048", "4096"}},
      {.name = "port",
       .type = ParamType::Int,
       .default_value = 18515,
       .help = "the TCP or rdma_cm port (-p)",
       .min = 1,
       .max = 65535},
  };
  spec.facts = {
      {"test", "the test run: write_bw, ..."},
      {"bytes", "message size of the result row"},
      {"iterations", "iterations of the result row"},
      {"bw_peak_mib_s", "bw tests: peak bandwidth, MiB/s (perftest's MB/sec, which is 2^20 bytes)"},
      {"bw_avg_mib_s", "bw tests: average bandwidth, MiB/s"},
      {"msg_rate_mpps", "bw tests: message rate, millions per second"},
      {"lat_min_us", "lat tests: the fastest iteration, microseconds"},
      {"lat_max_us", "lat tests: the slowest"},
      {"lat_typical_us", "lat tests: the typical (median)"},
      {"lat_avg_us", "lat tests: the mean"},
      {"lat_stdev_us", "lat tests: the standard deviation"},
      {"lat_p99_us", "lat tests: the 99th percentile"},
      {"lat_p999_us", "lat tests: the 99.9th percentile"},
      {"clock_calibrated",
       "false when perftest could not calibrate its cycle counter (under software emulation): it printed 0 for "
       "every rate and time, so only bytes and iterations are reported"},
      {"local_gid", "the client's GID, from perftest's banner"},
      {"remote_gid", "the server's GID, from the banner; equal to local_gid: looped back inside one device"},
      {"server_gid_index", "the GID index the server used (-x)"},
      {"client_gid_index", "the GID index the client used (-x)"},
  };
  for (auto& f : tool_pair_fact_specs()) spec.facts.push_back(std::move(f));
  spec.example =
      "- name: write-bw\n"
      "  perftest:\n"
      "    test: write_bw\n"
      "    server: {dev: rxe0, netns: a}\n"
      "    client: {dev: rxe1, to: 10.10.0.1, netns: b}\n"
      "    rdma_cm: true\n"
      "    size: 4096\n"
      "    iterations: 2000\n"
      "  expect: {bw_avg_mib_s: \"> 0\", rxe1.sent_pkts: \"> 0\"}\n";
  spec.default_timeout = Duration{60'000};
  spec.validate = validate_perftest;
  Kind kind{std::move(spec), run_perftest, {}};
  kind.end_nodes = {"server.node", "client.node"};
  return kind;
}

namespace {

struct PerftestSide {
  std::string dev;
  std::optional<std::string> netns;
  std::string to;    // the client's: the server's address
  std::string node;  // in a two-node lab: the node it runs on ("" for the step's)
};

PerftestSide side_of(const Params& p, const char* key) {
  const Params o = p.object(key);
  PerftestSide s{o.str("dev"), std::nullopt, "", ""};
  if (o.has("netns")) s.netns = o.str("netns");
  if (o.has("node")) s.node = o.str("node");
  if (o.has("to")) s.to = o.str("to");
  return s;
}

// "::ffff:10.0.0.1" for 10.0.0.1, as inet_ntop writes IPv4-mapped GIDs.
std::string mapped(const std::string& ipv4) {
  in_addr a{};
  if (::inet_pton(AF_INET, ipv4.c_str(), &a) != 1) return "";
  return "::ffff:" + ipv4;
}

// The siw devices among the software devices (one netlink dump for all the step asks).
std::set<std::string> siw_devices(StepContext& ctx) {
  std::set<std::string> out;
  if (auto devs = ctx.sys().rdma.soft_devices())
    for (const auto& d : *devs)
      if (d.type == sys::kSiwType) out.insert(d.name);
  return out;
}

// The GID index of `dev`: the RoCE v2 entry whose value is the IPv4-mapped
// address `prefer` when given and present, else the first IPv4-mapped RoCE
// v2 entry. Fails (with the table) when there is none.
Result<unsigned> find_gid_index(StepContext& ctx, const std::string& dev, const std::string& prefer) {
  auto table = ctx.sys().rdma.gids(dev, sys::kRxePort);
  if (!table) {
    if (table.error().code == ENODEV)
      return make_error("no RDMA device " + dev + " (add it with an rxe step first)", ENODEV);
    return table.error();
  }
  const std::string want = prefer.empty() ? "" : mapped(prefer);
  const sys::GidEntry* first = nullptr;
  std::string seen;
  for (const auto& g : *table) {
    seen += (seen.empty() ? "" : "; ") + std::to_string(g.index) + ": " + g.gid + " (" + g.type + ")";
    if (g.type != "RoCE v2" || g.gid.rfind("::ffff:", 0) != 0) continue;
    if (!want.empty() && g.gid == want) return g.index;
    if (!first) first = &g;
  }
  if (first) return first->index;
  return make_error(dev + " has no RoCE v2 GID with an IPv4 address (" + (seen.empty() ? "the table is empty" : seen) +
                        "): put an IPv4 address on its netdev, or give gid_index",
                    ENOENT);
}

std::vector<std::string> perftest_argv(const Params& p, ToolRole role, const PerftestSide& side, unsigned gid_index) {
  std::vector<std::string> a = {"ib_" + p.str("test"), "-d", side.dev, "-x", std::to_string(gid_index), "-F"};
  if (p.flag("rdma_cm")) a.push_back("-R");
  a.insert(a.end(), {"-p", std::to_string(p.integer("port"))});
  if (p.has("size")) a.insert(a.end(), {"-s", std::to_string(p.integer("size"))});
  if (p.has("iterations")) a.insert(a.end(), {"-n", std::to_string(p.integer("iterations"))});
  if (p.has("duration")) {
    const long long secs = std::max<long long>(1, (p.duration("duration").count() + 999) / 1000);
    a.insert(a.end(), {"-D", std::to_string(secs)});
  }
  if (p.has("mtu")) a.insert(a.end(), {"-m", p.str("mtu")});
  if (role == ToolRole::Client) a.push_back(side.to);
  return a;
}

// The client found nobody listening: perftest's TCP exchange was refused, or
// rdma_cm answered REJECTED (event 8).
bool refused(const std::string& out, const std::string& err) {
  const std::string all = out + err;
  return contains(all, "Couldn't connect to") || contains(all, "Unexpected CM event bl blka 8") ||
         contains(all, "RDMA_CM_EVENT_REJECTED");
}

std::vector<std::string> perftest_hints(const ToolPairRun& r, const PerftestSide& server, const PerftestSide& client,
                                        unsigned server_gid, unsigned client_gid) {
  const std::string all = r.output();
  if (contains(all, "to RTR") || contains(all, "to RTS") || contains(all, "Unable to Connect the HCA"))
    return {"likely causes: the GID index (server " + std::to_string(server_gid) + ", client " +
            std::to_string(client_gid) + "), a device/address mismatch (" + client.dev +
            " must own the address the route to " + client.to +
            " leaves from: two addresses in one namespace "
            "need rdma_cm or the forced wire), the MTU, or the start order"};
  if (contains(all, "Couldn't connect to") || contains(all, "blka 8"))
    return {nobody_listened_hint(client.to, "the server (" + server.dev + ")")};
  if (contains(all, "blka 7") || contains(all, "UNREACHABLE")) return {unanswered_hint(client.to)};
  if (contains(all, "Unable to find the Infiniband/RoCE device") || contains(all, "Did not detect devices"))
    return {"no such RDMA device (" + server.dev + ", " + client.dev +
            ") visible: add it with an rxe step; "
            "libibverbs needs ibverbs-providers' rxe.driver"};
  if (contains(all, "Completion with error") || contains(all, "Failed status"))
    return {"the transfer broke off: packets dropped on the way (`block`, `netem`), or the peer went away"};
  return {};
}

StepResult run_perftest(const Params& params, StepContext& ctx) {
  const std::string test = params.str("test");
  PerftestSide server = side_of(params, "server");
  PerftestSide client = side_of(params, "client");
  // Across two nodes the step runs on the client's node and starts the
  // server there (docs/nodes.md): the server's device, its GID table and
  // its listener are in the other kernel.
  if (server.node.empty()) server.node = ctx.step().node.value_or("");
  if (client.node.empty()) client.node = ctx.step().node.value_or("");
  const bool across = server.node != client.node;
  if (across && !params.has("gid_index"))
    return StepResult::error("across two nodes, give gid_index: the server's GID table (" + server.dev +
                             ") is in node " + server.node + "'s kernel, which this step cannot read");

  const std::set<std::string> siw = siw_devices(ctx);
  const bool server_siw = siw.count(server.dev) > 0, client_siw = siw.count(client.dev) > 0;
  if (!params.flag("rdma_cm"))
    for (const auto* dev : {&server.dev, &client.dev})
      if (siw.count(*dev))
        return StepResult::error(*dev + " is a siw device: iWARP connects only through rdma_cm; set rdma_cm: true");

  // iWARP (siw) has one GID, made of the netdev's MAC: index 0.
  unsigned server_gid = 0, client_gid = 0;
  if (params.has("gid_index")) {
    server_gid = client_gid = static_cast<unsigned>(params.integer("gid_index"));
  } else {
    if (!server_siw) {
      auto s = find_gid_index(ctx, server.dev, client.to);
      if (!s) return s.error().code == ENOENT ? StepResult::fail(s.error().message) : StepResult::error(s.error());
      server_gid = *s;
    }
    if (!client_siw) {
      auto c = find_gid_index(ctx, client.dev, "");
      if (!c) return c.error().code == ENOENT ? StepResult::fail(c.error().message) : StepResult::error(c.error());
      client_gid = *c;
    }
  }

  const std::string bin = "ib_" + test;
  const std::string at = client.to + ":" + std::to_string(params.integer("port"));
  ToolPairSpec spec;
  spec.name = bin;
  spec.server = pair_tool(perftest_argv(params, ToolRole::Server, server, server_gid), server.netns,
                          bin + " server on " + server.dev + ", port " + std::to_string(params.integer("port")));
  spec.client = pair_tool(perftest_argv(params, ToolRole::Client, client, client_gid), client.netns,
                          bin + " client on " + client.dev + " to " + at);
  spec.refused = refused;
  if (params.flag("rdma_cm")) spec.cm_port = static_cast<std::uint16_t>(params.integer("port"));
  if (across) {
    spec.server.node = server.node;
    spec.server_here = false;
  }

  // The counters of the client's namespace, and of the server's, here or on its node.
  RXERUN_TRY_ASSIGN(
      const CounterWindow window,
      across ? CounterWindow::open(ctx, {client.netns},
                                   OtherNode{.here = client.node, .there = server.node, .netns = server.netns})
             : CounterWindow::open(ctx, {server.netns, client.netns}));
  RXERUN_TRY_ASSIGN(const ToolPairRun r, run_tool_pair(ctx, spec));

  nlohmann::json facts = nlohmann::json::object();
  facts["test"] = test;
  facts["server_gid_index"] = server_gid;
  facts["client_gid_index"] = client_gid;
  auto report = parse_perftest_output(r.client_out, r.client_err);
  if (report) {
    for (const auto& [name, value] : report->figures)
      facts[name] = (name == "bytes" || name == "iterations") ? nlohmann::json(static_cast<long long>(value))
                                                              : rounded(value, name == "msg_rate_mpps" ? 6 : 2);
    if (!report->local_gid.empty()) facts["local_gid"] = report->local_gid;
    if (!report->remote_gid.empty()) facts["remote_gid"] = report->remote_gid;
    facts["clock_calibrated"] = report->uncalibrated.empty();
  }

  ToolPairWords words;
  words.subject = bin;
  words.quote_stalled = true;
  words.stalled_hints = {
      "with rdma_cm a connection request without an answer is retried by the kernel for over a minute; without "
      "it a dropped UDP 4791 stalls the transfer: a `block` on the way? Or raise `timeout`"};
  words.failed_hints = perftest_hints(r, server, client, server_gid, client_gid);
  if (server_siw && r.output().find("rdma_listen failed") != std::string::npos)
    words.failed_hints.push_back(
        "perftest's rdma_cm server listens on every RDMA device; siw refuses that beside another siw device (the "
        "kernel logs \"cma_listen_on_dev, error -98\"); rping, which binds its address, works on siw");
  words.done = [&](const nlohmann::json& all) {
    if (!report)
      return StepResult::fail(bin + " ended well but its output has no result: " + report.error().message, all);
    StepResult result = StepResult::ok(all);
    if (!report->uncalibrated.empty())
      result.hints.push_back("perftest could not calibrate its cycle counter (\"" + report->uncalibrated +
                             "\", common under software emulation) and printed 0 for every rate and time: only "
                             "bytes and iterations are reported");
    if (!report->local_gid.empty() && report->local_gid == report->remote_gid)
      result.hints.push_back("both ends used GID " + report->local_gid +
                             ": rdma_cm looped the traffic back inside one device and nothing crossed the wire "
                             "(put the ends in two namespaces, kernel 7.3)");
    return result;
  };
  return tool_pair_result(ctx, r, window, std::move(facts), words);
}

}  // namespace

}  // namespace rxerun::steps
