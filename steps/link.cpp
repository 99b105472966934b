// link: an interface's administrative state and/or MTU. It reads both first
// and changes only what differs; undo restores what it found, and only what
// the step changed.

#include "engine/step.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

nlohmann::json facts_of(const sys::LinkInfo& now, const sys::LinkInfo& before, bool changed) {
  return {{"changed", changed},     {"up", now.up},           {"mtu", now.mtu},
          {"carrier", now.carrier}, {"up_before", before.up}, {"mtu_before", before.mtu}};
}

StepResult run_link(const Params& params, StepContext& ctx) {
  const std::string dev = params.str("dev");
  if (!params.has("up") && !params.has("mtu"))
    return StepResult::error(params.where("dev") + ": link needs `up` and/or `mtu`: nothing to set");
  auto& links = ctx.sys().links;
  auto found = links.get(dev);
  if (!found) return StepResult::error(found.error());
  if (!*found) return StepResult::error("no interface " + dev + " (create it first)");
  const sys::LinkInfo before = **found;

  const bool set_up = params.has("up") && params.flag("up") != before.up;
  const bool set_mtu = params.has("mtu") && static_cast<unsigned>(params.integer("mtu")) != before.mtu;
  if (!set_up && !set_mtu) return StepResult::ok(facts_of(before, before, false));

  nlohmann::json args = {{"dev", dev}};
  std::string summary;
  if (set_mtu) {
    args["mtu"] = before.mtu;
    summary = "set the MTU of " + dev + " back to " + std::to_string(before.mtu);
  }
  if (set_up) {
    args["up"] = before.up;
    summary += (summary.empty() ? "bring " + dev : " and bring it") + (before.up ? " up" : " down") + " again";
  }
  if (auto r = ctx.will_change(args, summary, ctx.on_link(dev)); !r) return StepResult::error(r.error());
  // MTU first: an interface that comes up does so with the MTU asked for.
  if (set_mtu)
    if (auto r = links.set_mtu(dev, static_cast<unsigned>(params.integer("mtu"))); !r)
      return StepResult::error(r.error());
  if (set_up)
    if (auto r = links.set_up(dev, params.flag("up")); !r) return StepResult::error(r.error());

  auto after = links.get(dev);
  if (!after) return StepResult::error(after.error());
  if (!*after) return StepResult::error("interface " + dev + " disappeared");
  return StepResult::ok(facts_of(**after, before, true));
}

Result<nlohmann::json> undo_link(const nlohmann::json& args, UndoContext& ctx) {
  const std::string dev = args.at("dev").get<std::string>();
  auto& links = ctx.sys().links;
  auto now = links.get(dev);
  if (!now) return now.error();
  if (!*now) return nlohmann::json::object();  // gone: nothing left to restore
  nlohmann::json facts = {{"up", (*now)->up}, {"mtu", (*now)->mtu}};
  if (args.contains("up") && (*now)->up != args.at("up").get<bool>())
    if (auto r = links.set_up(dev, args.at("up").get<bool>()); !r) return r.error();
  if (args.contains("mtu") && (*now)->mtu != args.at("mtu").get<unsigned>())
    if (auto r = links.set_mtu(dev, args.at("mtu").get<unsigned>()); !r) return r.error();
  return facts;
}

}  // namespace

Kind link_kind() {
  KindSpec spec;
  spec.name = "link";
  spec.needs = {Need::NetAdmin};
  spec.summary = "Bring an interface up or down and/or set its MTU; undo restores what it found.";
  spec.params = {
      {.name = "dev", .type = ParamType::IfName, .required = true, .help = "the interface"},
      {.name = "up", .type = ParamType::Bool, .help = "true: bring it up; false: bring it down; unset: leave it"},
      {.name = "mtu", .type = ParamType::Int, .help = "the MTU to set; unset: leave it", .min = 68, .max = 65536},
  };
  spec.facts = {
      {"changed", "whether the step changed anything"},
      {"up", "the administrative state after the step"},
      {"mtu", "the MTU after the step"},
      {"carrier", "whether the interface has a carrier after the step (IFF_LOWER_UP)"},
      {"up_before", "the administrative state found"},
      {"mtu_before", "the MTU found"},
  };
  spec.example =
      "- veth: {name: vB, peer: vA}\n"
      "- link: {dev: vB, up: true, mtu: 9000}\n"
      "  expect: {up: true, mtu: 9000}\n";
  return Kind{std::move(spec), run_link, undo_link};
}

}  // namespace rxerun::steps
