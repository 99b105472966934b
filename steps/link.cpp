// link: an interface's administrative state and/or MTU. It reads both first
// and changes only what differs; undo restores what it found, and only what
// the step changed, on the interface the step changed (steps/common/identity.h).
// A setting is shared with whoever else uses the interface: the undo puts
// the value found back only while the setting still holds the value the step
// wrote; one changed since by somebody else is left, and the undo fails
// naming the setting, its value now, the value written and the value found.

#include <optional>

#include "base/try.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_link(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_link(const nlohmann::json& args, UndoContext& ctx);
void picture_link(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

Kind link_kind() {
  KindSpec spec;
  spec.name = "link";
  spec.needs = {Need::NetAdmin};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "dev"}};
  spec.summary = "Bring an interface up or down and/or set its MTU; undo restores what it found.";
  spec.params = {
      {.name = "dev", .type = ParamType::IfName, .required = true, .help = "the interface"},
      {.name = "up", .type = ParamType::Bool, .help = "true: bring it up; false: bring it down; unset: leave it"},
      {.name = "mtu", .type = ParamType::Int, .help = "the MTU to set; unset: leave it", .min = 68, .max = 65536},
  };
  spec.facts = {
      {"changed", "whether the step changed anything"},
      {.name = "up", .help = "the administrative state after the step", .when = kAtStep | kAtRevert},
      {.name = "mtu", .help = "the MTU after the step", .when = kAtStep | kAtRevert},
      {"carrier", "whether the interface has a carrier after the step (IFF_LOWER_UP)"},
      {"up_before", "the administrative state found"},
      {"mtu_before", "the MTU found"},
  };
  spec.example =
      "- veth: {name: vB, peer: vA}\n"
      "- link: {dev: vB, up: true, mtu: 9000}\n"
      "  expect: {up: true, mtu: 9000}\n";
  Kind kind{std::move(spec), run_link, undo_link};
  kind.picture = picture_link;
  return kind;
}

namespace {

// What the step changed on the interface (its identity): the values found,
// to put back, and the values it wrote, to tell a change somebody made since.
// An entry written before rxerun recorded what it wrote has no "wrote": the
// value found is then put back whatever the value now.
struct LinkRecord {
  static constexpr std::string_view kOp = "link";
  std::string dev;
  nlohmann::json identity;  // {"ifindex", "netns_inode"}
  std::optional<bool> up;   // found; unset: the step left the state alone
  std::optional<unsigned> mtu;
  std::optional<bool> wrote_up;
  std::optional<unsigned> wrote_mtu;

  nlohmann::json to_args() const {
    nlohmann::json args = {{"op", kOp}, {"dev", dev}, {"identity", identity}, {"wrote", nlohmann::json::object()}};
    if (mtu) args["mtu"] = *mtu;
    if (wrote_mtu) args["wrote"]["mtu"] = *wrote_mtu;
    if (up) args["up"] = *up;
    if (wrote_up) args["wrote"]["up"] = *wrote_up;
    return args;
  }
  static Result<LinkRecord> read(JournalArgs& a) {
    LinkRecord r{a.ifname("dev"), a.identity()};
    const nlohmann::json wrote = a.object("wrote", true);
    if (a.has("up")) r.up = a.flag("up");
    if (a.has("mtu")) r.mtu = static_cast<unsigned>(a.number("mtu", UINT32_MAX));
    JournalArgs w = a.part(wrote, "wrote");
    if (wrote.contains("up")) r.wrote_up = w.flag("up");
    if (wrote.contains("mtu")) r.wrote_mtu = static_cast<unsigned>(w.number("mtu", UINT32_MAX));
    a.merge(w);
    if (!a.ok()) return a.error();
    return r;
  }
};

nlohmann::json link_facts(const sys::LinkInfo& now, const sys::LinkInfo& before, bool changed) {
  return {{"changed", changed},     {"up", now.up},           {"mtu", now.mtu},
          {"carrier", now.carrier}, {"up_before", before.up}, {"mtu_before", before.mtu}};
}

StepResult run_link(const Params& params, StepContext& ctx) {
  const std::string dev = params.str("dev");
  if (!params.has("up") && !params.has("mtu"))
    return StepResult::error(params.where("dev") + ": link needs `up` and/or `mtu`: nothing to set");
  auto& links = ctx.sys().links;
  RXERUN_TRY_ASSIGN(const auto found, links.get(dev));
  if (!found) return StepResult::error("no interface " + dev + " (create it first)");
  const sys::LinkInfo before = *found;

  const bool set_up = params.has("up") && params.flag("up") != before.up;
  const bool set_mtu = params.has("mtu") && static_cast<unsigned>(params.integer("mtu")) != before.mtu;
  if (!set_up && !set_mtu) return StepResult::ok(link_facts(before, before, false));

  RXERUN_TRY_ASSIGN(const auto identity, link_identity(ctx.sys(), before));
  LinkRecord record{dev, identity};
  std::string summary;
  if (set_mtu) {
    record.mtu = before.mtu;
    record.wrote_mtu = static_cast<unsigned>(params.integer("mtu"));
    summary = "set the MTU of " + dev + " back to " + std::to_string(before.mtu);
  }
  if (set_up) {
    record.up = before.up;
    record.wrote_up = params.flag("up");
    summary += (summary.empty() ? "bring " + dev : " and bring it") + (before.up ? " up" : " down") + " again";
  }
  RXERUN_TRY(ctx.will_change(record.to_args(), summary, ctx.on_link(dev)));
  // MTU first: an interface that comes up does so with the MTU asked for.
  if (set_mtu) RXERUN_TRY(links.set_mtu(dev, *record.wrote_mtu));
  if (set_up) RXERUN_TRY(links.set_up(dev, *record.wrote_up));

  RXERUN_TRY_ASSIGN(const auto after, links.get(dev));
  if (!after) return StepResult::error("interface " + dev + " disappeared");
  return StepResult::ok(link_facts(*after, before, true));
}

std::string state(bool up) {
  return up ? "up" : "down";
}

Result<nlohmann::json> undo_link(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<LinkRecord>(args, ctx));
  const std::string& dev = record.dev;
  const auto& up = record.up;
  const auto& mtu = record.mtu;
  const auto& wrote_up = record.wrote_up;
  const auto& wrote_mtu = record.wrote_mtu;

  auto& links = ctx.sys().links;
  std::optional<sys::LinkInfo> now;
  RXERUN_TRY_ASSIGN(const Found found, check_link(ctx.sys(), dev, record.identity, &now));
  if (found == Found::Gone) return nlohmann::json::object();  // gone: nothing left to restore
  nlohmann::json facts = {{"up", now->up}, {"mtu", now->mtu}};
  std::string conflicts;
  auto conflict = [&](const std::string& setting, const std::string& is, const std::string& written,
                      const std::string& found_before) {
    conflicts += (conflicts.empty() ? "" : "; ") + setting + " of " + dev + " is " + is + " now, not the " + written +
                 " this run set (it was " + found_before + " before the run)";
  };
  bool restore_up = up && now->up != *up;
  if (restore_up && wrote_up && now->up != *wrote_up) {
    conflict("the state", state(now->up), state(*wrote_up), state(*up));
    restore_up = false;
  }
  bool restore_mtu = mtu && now->mtu != *mtu;
  if (restore_mtu && wrote_mtu && now->mtu != *wrote_mtu) {
    conflict("the MTU", std::to_string(now->mtu), std::to_string(*wrote_mtu), std::to_string(*mtu));
    restore_mtu = false;
  }
  if (restore_up) RXERUN_TRY(links.set_up(dev, *up));
  if (restore_mtu) RXERUN_TRY(links.set_mtu(dev, *mtu));
  if (!conflicts.empty()) return make_error(conflicts + ": changed by somebody else since, so left as it is");
  return facts;
}

}  // namespace

namespace {

void picture_link(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  auto& i = picture.add_interface(place_of(step), picture_param(p, "dev"));
  if (const std::string mtu = picture_param(p, "mtu"); !mtu.empty()) i.mtu = mtu;
}

}  // namespace

}  // namespace rxerun::steps
