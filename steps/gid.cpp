// gid: checks an entry of an RDMA port's GID table, or finds the entry for an
// address (and type) and reports its index, so that no scenario hard-codes
// `-x 1`: rxe puts the IPv6 link-local address at index 0 and the
// IPv4-mapped address at 1, hardware NICs order them otherwise
// (docs/kernel-notes.md, "GID table"). Reads only.
//
// The kernel fills the table shortly after an address is added; the step
// polls until the entry is there or its timeout ends, then fails with the
// table it saw.

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engine/step.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_gid(const Params& params, StepContext& ctx);

void validate_gid(const nlohmann::json& p, const KindSpec::Complaint& complain) {
  const bool has_index = p.contains("index"), has_find = p.contains("find");
  if (has_index == has_find) {
    complain(has_find ? "find" : "",
             "'gid' takes either 'index' (check that entry) or 'find' (an address: look "
             "its entry up), not " +
                 std::string(has_index ? "both" : "neither"));
    return;
  }
  if (has_find && p.contains("equals")) complain("equals", "'equals' checks the entry at 'index'; 'find' looks one up");
}

}  // namespace

Kind gid_kind() {
  KindSpec spec;
  spec.name = "gid";
  spec.needs = {Need::RdmaRxe};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::RdmaDevice, .param = "dev"},
                  {.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "netdev"}};
  spec.summary =
      "Check an entry of an RDMA port's GID table, or find the entry for an address and report its index (for "
      "perftest's -x).";
  spec.params = {
      {.name = "dev", .type = ParamType::IfName, .required = true, .help = "the RDMA device: rxe0"},
      {.name = "port", .type = ParamType::Int, .default_value = 1, .help = "the port number", .min = 1, .max = 255},
      {.name = "index", .type = ParamType::Int, .help = "the entry to check", .min = 0, .max = 65535},
      {.name = "find",
       .type = ParamType::Address,
       .help = "an address whose entry to look up (IPv4 is looked up as IPv4-mapped: ::ffff:10.10.0.1)"},
      {.name = "equals", .type = ParamType::Address, .help = "with index: the address or GID the entry must hold"},
      {.name = "type",
       .type = ParamType::Enum,
       .help = "the entry's type: RoCEv2 (UDP/IP, what rxe uses) or RoCEv1",
       .choices = {"RoCEv2", "RoCEv1"}},
      {.name = "netdev", .type = ParamType::IfName, .help = "the netdev the entry must belong to"},
  };
  spec.facts = {
      {"index", "the entry's index (what perftest's -x and verbs' sgid_index take)"},
      {"gid", "the GID, as an IPv6 address: ::ffff:10.10.0.1"},
      {"type", "the kernel's name of its type: RoCE v2, IB/RoCE v1"},
      {"netdev", "the netdev it belongs to"},
  };
  spec.example =
      "- name: gid-a\n"
      "  gid: {dev: rxe0, find: 10.10.0.1, type: RoCEv2}\n"
      "  expect: {index: 1}\n";
  spec.default_timeout = Duration{5'000};
  spec.validate = validate_gid;
  return Kind{std::move(spec), run_gid, {}};
}

namespace {

constexpr Duration kGidPoll{50};

// An address as a GID: IPv4 becomes IPv4-mapped IPv6, everything in
// inet_ntop's form; nullopt when it is no address.
std::optional<std::string> as_gid(const std::string& text) {
  in6_addr a6{};
  in_addr a4{};
  if (::inet_pton(AF_INET, text.c_str(), &a4) == 1) {
    a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
    std::memcpy(&a6.s6_addr[12], &a4, 4);
  } else if (::inet_pton(AF_INET6, text.c_str(), &a6) != 1) {
    return std::nullopt;
  }
  char out[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET6, &a6, out, sizeof(out));
  return std::string(out);
}

// The kernel's names ("RoCE v2", "IB/RoCE v1") for what a scenario writes.
std::string kernel_type(const std::string& written) {
  return written == "RoCEv2" ? "RoCE v2" : "IB/RoCE v1";
}

std::string describe_gids(const std::vector<sys::GidEntry>& table) {
  if (table.empty()) return "the table is empty";
  std::string out;
  for (const auto& g : table)
    out += (out.empty() ? "" : "; ") + std::to_string(g.index) + ": " + g.gid + " (" + g.type +
           (g.netdev.empty() ? "" : ", " + g.netdev) + ")";
  return out;
}

nlohmann::json gid_facts(const sys::GidEntry& g) {
  return {{"index", g.index}, {"gid", g.gid}, {"type", g.type}, {"netdev", g.netdev}};
}

// Why `g` does not match what the step asks; "" when it does.
std::string gid_mismatch(const sys::GidEntry& g, const std::optional<std::string>& gid, const std::string& type,
                         const std::string& netdev) {
  if (gid && g.gid != *gid) return "holds " + g.gid + ", not " + *gid;
  if (!type.empty() && g.type != type) return "is of type " + g.type + ", not " + type;
  if (!netdev.empty() && g.netdev != netdev) return "belongs to " + g.netdev + ", not " + netdev;
  return "";
}

StepResult run_gid(const Params& params, StepContext& ctx) {
  const std::string dev = params.str("dev");
  const auto port = static_cast<unsigned>(params.integer("port"));
  const std::string type = params.has("type") ? kernel_type(params.str("type")) : "";
  const std::string netdev = params.has("netdev") ? params.str("netdev") : "";
  const bool finding = params.has("find");
  std::optional<std::string> gid;
  if (finding)
    gid = as_gid(params.str("find"));
  else if (params.has("equals"))
    gid = as_gid(params.str("equals"));
  std::optional<unsigned> index;
  if (params.has("index")) index = static_cast<unsigned>(params.integer("index"));

  std::string why;
  for (;;) {
    auto table = ctx.sys().rdma.gids(dev, port);
    if (!table) {
      if (table.error().code == ENODEV)
        return StepResult::error("no RDMA device " + dev + " (add it with an rxe step first)");
      if (table.error().code == ENOENT) return StepResult::error(dev + " has no port " + std::to_string(port));
      return StepResult::error(table.error());
    }
    if (index) {
      auto it = std::find_if(table->begin(), table->end(), [&](const sys::GidEntry& g) { return g.index == *index; });
      if (it == table->end()) {
        why = dev + " GID " + std::to_string(*index) + " is empty; " + describe_gids(*table);
      } else if (auto m = gid_mismatch(*it, gid, type, netdev); !m.empty()) {
        why = dev + " GID " + std::to_string(*index) + " " + m + "; " + describe_gids(*table);
      } else {
        return StepResult::ok(gid_facts(*it));
      }
    } else {
      auto it = std::find_if(table->begin(), table->end(),
                             [&](const sys::GidEntry& g) { return gid_mismatch(g, gid, type, netdev).empty(); });
      if (it != table->end()) return StepResult::ok(gid_facts(*it));
      why = dev + " has no GID " + *gid + (type.empty() ? "" : " of type " + type) +
            (netdev.empty() ? "" : " on " + netdev) + "; " + describe_gids(*table);
    }
    switch (ctx.sleep_for(kGidPoll)) {
      case WaitStatus::Done: continue;
      case WaitStatus::Interrupted: return StepResult::error("interrupted");
      case WaitStatus::Deadline: {
        StepResult r = StepResult::fail(why);
        if (finding)
          r.hints.push_back(
              "a GID entry appears once the address is on the rxe device's netdev (address step) "
              "and the netdev is up");
        return r;
      }
    }
  }
}

}  // namespace

}  // namespace rxerun::steps
