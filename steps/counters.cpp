// counters: reads the counters of RDMA devices (rxe's hw_counters and the
// port counters) and of netdevs (their statistics), named `DEV.COUNTER`
// (`rxe0.sent_pkts`, `vB.rx_packets`), so that expectations can say where
// packets went. Three forms:
// - plain: the values now (a mark for a later step to start from);
// - `since: STEP`: the deltas since an earlier counters step's values, a
//   window around the steps between them;
// - `window: 2s`: the deltas across that long a wait.
// Reads only. Every traffic step (rping, perftest, verbs) reports such
// deltas by itself (steps/common/traffic.h); this kind covers the rest.

#include <algorithm>
#include <cerrno>
#include <set>

#include "base/try.h"
#include "engine/step.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_counters(const Params& params, StepContext& ctx);

void validate_counters(const nlohmann::json& p, const KindSpec::Complaint& complain) {
  if (p.contains("since") && p.contains("window"))
    complain("window",
             "'counters' takes 'since' (deltas from an earlier counters step) or 'window' (deltas across "
             "a wait), not both");
}

}  // namespace

Kind counters_kind() {
  KindSpec spec;
  spec.name = "counters";
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "devs", .either = true}};
  spec.summary =
      "Read RDMA device counters (hw_counters, port counters) and netdev statistics as DEV.COUNTER facts: values, "
      "or deltas since an earlier counters step or across a window.";
  spec.params = {
      {.name = "devs",
       .type = ParamType::List,
       .help = "the rxe devices and netdevs (of the step's namespace) to read; all of them when absent",
       .fields = {{.name = "dev", .type = ParamType::IfName}}},
      {.name = "since", .type = ParamType::StepRef, .help = "an earlier counters step: report deltas from its values"},
      {.name = "window", .type = ParamType::Duration, .help = "report the deltas across this long a wait"},
  };
  spec.facts = {
      {"DEV.COUNTER",
       "a counter's value or delta: rxe0.sent_pkts, rxe0.rcvd_pkts, rxe0.port_xmit_data, vA.tx_packets, vA.rx_bytes, "
       "..."},
  };
  spec.example =
      "- name: before\n"
      "  counters: {devs: [rxe0, rxe1, vA, vB]}\n"
      "- ping: {to: 10.10.0.2, from: vA, count: 5}\n"
      "- counters: {devs: [rxe0, rxe1, vA, vB], since: before}\n"
      "  expect: {vA.tx_packets: \">= 5\", rxe0.sent_pkts: 0}\n";
  spec.validate = validate_counters;
  return Kind{std::move(spec), run_counters, {}};
}

namespace {

// `devs` split into RDMA devices and netdevs of the step's namespace; every
// one of each kind when `devs` is absent. An unknown name is an error.
// `siw_read`, when given, gets the siw devices read: they have no counters.
Result<std::map<std::string, std::uint64_t>> read(StepContext& ctx, const std::vector<std::string>& devs,
                                                  std::vector<std::string>* siw_read = nullptr) {
  std::map<std::string, std::uint64_t> out;
  RXERUN_TRY_ASSIGN(const auto rdma, ctx.sys().rdma.soft_devices());
  RXERUN_TRY_ASSIGN(const auto links, ctx.sys().links.statistics());
  std::set<std::string> wanted(devs.begin(), devs.end());
  const bool all = wanted.empty();
  for (const auto& d : rdma) {
    if (!all && !wanted.erase(d.name)) continue;
    if (siw_read && d.type == sys::kSiwType) siw_read->push_back(d.name);
    RXERUN_TRY_ASSIGN(const auto counters, ctx.sys().rdma.counters(d.name, sys::kRxePort));
    for (const auto& [name, v] : counters) out[d.name + "." + name] = v;
  }
  for (const auto& l : links) {
    if (!all && !wanted.erase(l.name)) continue;
    for (const auto& [name, v] : l.counters) out[l.name + "." + name] = v;
  }
  if (!wanted.empty()) {
    std::string names;
    for (const auto& n : wanted) names += (names.empty() ? "" : ", ") + n;
    const std::string where = ctx.step().netns ? " in netns " + *ctx.step().netns : "";
    return make_error("no RDMA device or netdev " + names + where, ENODEV);
  }
  return out;
}

nlohmann::json deltas(const std::map<std::string, std::uint64_t>& before,
                      const std::map<std::string, std::uint64_t>& after) {
  nlohmann::json facts = nlohmann::json::object();
  for (const auto& [name, v] : after) {
    auto it = before.find(name);
    // A counter that was not there (a device added since) or went back
    // (re-created) counts from zero.
    facts[name] = v - (it == before.end() || it->second > v ? 0 : it->second);
  }
  return facts;
}

StepResult run_counters(const Params& params, StepContext& ctx) {
  std::vector<std::string> devs;
  if (params.has("devs")) devs = params.at("devs").get<std::vector<std::string>>();

  std::map<std::string, std::uint64_t> start;
  if (params.has("since")) {
    const std::string since = params.str("since");
    const nlohmann::json* earlier = ctx.facts_of(since);
    if (!earlier) return StepResult::error("step '" + since + "' has not run: no counters to start from");
    for (const auto& [k, v] : earlier->items())
      if (v.is_number_unsigned()) start[k] = v.get<std::uint64_t>();
  }
  if (params.has("window")) {
    RXERUN_TRY_ASSIGN(start, read(ctx, devs));
    switch (ctx.sleep_for(params.duration("window"))) {
      case WaitStatus::Done: break;
      case WaitStatus::Deadline: return StepResult::error("the window is longer than the step's timeout");
      case WaitStatus::Interrupted: return StepResult::error("interrupted");
    }
  }
  std::vector<std::string> siw;
  RXERUN_TRY_ASSIGN(const auto now, read(ctx, devs, &siw));
  StepResult r;
  if (!params.has("since") && !params.has("window")) {
    nlohmann::json facts = nlohmann::json::object();
    for (const auto& [k, v] : now) facts[k] = v;
    r = StepResult::ok(std::move(facts));
  } else {
    r = StepResult::ok(deltas(start, now));
  }
  // siw keeps no counters: say so rather than leave its facts silently out.
  for (const auto& name : siw)
    r.hints.push_back(name + " is a siw device: soft-iWARP keeps no counters, so there are no " + name +
                      ".COUNTER facts (its netdev's counters show its traffic)");
  return r;
}

}  // namespace

}  // namespace rxerun::steps
