// offload: turn netdev features (what `ethtool -K` sets) on or off. Takes
// ethtool's short and long names (gro, generic-receive-offload) and the
// kernel's feature strings (rx-gro); reads the features first, changes only
// those that differ, and its undo puts back the values it found: on the
// interface the step changed (steps/common/identity.h), and only for features that
// still hold the value the step set (one changed since by somebody else is
// left, and reported).

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "base/try.h"
#include "engine/diag.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

std::string on_off(bool on) {
  return on ? "on" : "off";
}

using Features = std::map<std::string, sys::Feature>;

// One name the user asked for and the kernel features behind it.
struct Request {
  std::string name;  // as written: gro, tso, rx-gro
  bool on = false;
  std::vector<std::string> members;  // kernel feature names
};

// The changeable members of a group, when it has any: those are what `ethtool
// -K` acts on (tx-checksum-fcoe-crc stays off on a veth whatever `tx` says).
std::vector<std::string> considered(const Request& r, const Features& f) {
  std::vector<std::string> out;
  for (const auto& m : r.members)
    if (!f.at(m).fixed) out.push_back(m);
  return out.empty() ? r.members : out;
}

// A name's value as `ethtool -k` shows a group: on when any member is on.
std::string feature_value(const Request& r, const Features& f) {
  for (const auto& m : considered(r, f))
    if (f.at(m).active) return "on";
  return "off";
}

// Defined after the spec below, which names them.
StepResult run_offload(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_offload(const nlohmann::json& args, UndoContext& ctx);
void picture_offload(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

Kind offload_kind() {
  KindSpec spec;
  spec.name = "offload";
  spec.needs = {Need::NetAdmin};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "dev"}};
  spec.summary = "Turn netdev offload features on or off (what `ethtool -K` does); undo restores the values found.";
  spec.params = {
      {.name = "dev", .type = ParamType::IfName, .required = true, .help = "the interface"},
  };
  spec.extra = ParamSpec{.name = "FEATURE",
                         .type = ParamType::OnOff,
                         .help =
                             "on or off for a feature: ethtool's names (gro, gso, tso, sg, rx, tx, lro, rxvlan, "
                             "txvlan, ntuple, rxhash, or their long forms) or the kernel's (rx-gro, "
                             "tx-tcp-segmentation, rx-gro-hw, ...)"};
  spec.facts = {
      {.name = "NAME.before",
       .help = "on or off: the feature as found, for each NAME the step names (a group is on when any of its "
               "changeable features is)",
       .when = kAtStep,
       .names_from = "*"},
      {.name = "NAME.after",
       .help = "on or off: the feature after the step",
       .when = kAtStep | kAtRevert,
       .names_from = "*"},
      {"changed", "whether the step changed any feature"},
  };
  spec.example =
      "- veth: {name: vA, peer: vB}\n"
      "- offload: {dev: vB, gro: off, gso: off, tso: off}\n"
      "  expect: {gro.after: \"off\"}\n";
  Kind kind{std::move(spec), run_offload, undo_offload};
  kind.picture = picture_offload;
  return kind;
}

namespace {

// ethtool's off_flag_def: the names `ethtool -K` takes for groups of kernel
// features, with a pattern (at most one '*') of the features they stand for.
struct Alias {
  std::string_view short_name;
  std::string_view long_name;
  std::string_view pattern;
};

constexpr Alias kAliases[] = {
    {"rx", "rx-checksumming", "rx-checksum"},
    {"tx", "tx-checksumming", "tx-checksum-*"},
    {"sg", "scatter-gather", "tx-scatter-gather*"},
    {"tso", "tcp-segmentation-offload", "tx-tcp*-segmentation"},
    {"ufo", "udp-fragmentation-offload", "tx-udp-fragmentation"},
    {"gso", "generic-segmentation-offload", "tx-generic-segmentation"},
    {"gro", "generic-receive-offload", "rx-gro"},
    {"lro", "large-receive-offload", "rx-lro"},
    {"rxvlan", "rx-vlan-offload", "rx-vlan-hw-parse"},
    {"txvlan", "tx-vlan-offload", "tx-vlan-hw-insert"},
    {"ntuple", "ntuple-filters", "rx-ntuple-filter"},
    {"rxhash", "receive-hashing", "rx-hashing"},
    // rxerun's shorthands for two kernel features ethtool names only in full.
    {"gro-hw", "", "rx-gro-hw"},
    {"gro-list", "", "rx-gro-list"},
};

const Alias* find_alias(std::string_view name) {
  for (const auto& a : kAliases)
    if (name == a.short_name || (!a.long_name.empty() && name == a.long_name)) return &a;
  return nullptr;
}

// As ethtool matches them: a literal name, or prefix*suffix.
bool pattern_match(std::string_view name, std::string_view pattern) {
  const auto star = pattern.find('*');
  if (star == std::string_view::npos) return name == pattern;
  const auto prefix = pattern.substr(0, star);
  const auto suffix = pattern.substr(star + 1);
  return name.size() >= prefix.size() + suffix.size() && name.starts_with(prefix) && name.ends_with(suffix);
}

Result<std::vector<Request>> resolve(const Params& params, const std::string& dev, const Features& features) {
  std::vector<Request> out;
  for (const auto& [key, value] : params.raw().items()) {
    if (key == "dev" || value.is_null()) continue;
    Request r{.name = key, .on = value.get<bool>()};
    if (const Alias* a = find_alias(key)) {
      for (const auto& [name, _] : features)
        if (pattern_match(name, a->pattern)) r.members.push_back(name);
    } else if (features.count(key)) {
      r.members.push_back(key);
    } else {
      std::vector<std::string> known;
      for (const auto& a : kAliases) {
        known.emplace_back(a.short_name);
        if (!a.long_name.empty()) known.emplace_back(a.long_name);
      }
      for (const auto& [name, _] : features) known.push_back(name);
      return make_error(params.where(key) + ": " + dev + " has no offload feature '" + excerpt(key) + "'" +
                        did_you_mean(key, known) + "; `ethtool -k " + dev + "` lists them, or use gro, gso, tso, " +
                        "sg, rx, tx, lro, ...");
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) return make_error("offload on " + dev + " names no feature: add one, such as 'gro: off'");
  return out;
}

// What must change, kernel name -> value; an error when a feature the
// request needs changed is fixed, or when two names disagree on one feature.
Result<std::map<std::string, bool>> changes_for(const std::vector<Request>& requests, const std::string& dev,
                                                const Features& features) {
  std::map<std::string, std::pair<bool, std::string>> asked;  // kernel name -> value, and the name that asked
  std::map<std::string, bool> change;
  for (const auto& r : requests) {
    if (r.members.empty()) {
      // A group this kernel has no feature for (ufo): off holds already.
      if (r.on) return make_error(dev + ": this kernel has no feature behind '" + r.name + "', so it cannot be on");
      continue;
    }
    std::vector<std::string> fixed;
    for (const auto& m : considered(r, features)) {
      if (auto [it, fresh] = asked.try_emplace(m, r.on, r.name); !fresh && it->second.first != r.on)
        return make_error("offload on " + dev + ": '" + it->second.second + "' and '" + r.name +
                          "' ask for different values of " + m);
      const sys::Feature& f = features.at(m);
      if (f.active == r.on) continue;
      if (f.fixed) {
        fixed.push_back(m);
        continue;
      }
      change[m] = r.on;
    }
    if (!fixed.empty())
      return make_error(dev + ": " + join(fixed, ", ") + (fixed.size() == 1 ? " is" : " are") +
                        " fixed by the driver (" + on_off(!r.on) + "), so '" + r.name + ": " + on_off(r.on) +
                        "' cannot be done; leave it out of the step");
  }
  return change;
}

// What the step changed on the interface (its identity, when it exists):
// each feature's value found, to put back, and the value it set, to tell a
// change somebody made since; and the features behind each name it was
// given, for the facts of the undo.
struct OffloadRecord {
  static constexpr std::string_view kOp = "offload";
  std::string dev;
  std::map<std::string, bool> restore;
  std::map<std::string, std::vector<std::string>> names;
  // Unset in an entry written before rxerun recorded what it set (and in
  // a plan): the values found are then put back whatever the values now.
  std::optional<std::map<std::string, bool>> wrote;
  nlohmann::json identity;  // null when not recorded

  nlohmann::json to_args() const {
    nlohmann::json args = {{"op", kOp}, {"dev", dev}, {"restore", restore}, {"names", names}};
    if (wrote) args["wrote"] = *wrote;
    if (!identity.is_null()) args["identity"] = identity;
    return args;
  }
  static Result<OffloadRecord> read(JournalArgs& a) {
    OffloadRecord r{a.ifname("dev")};
    const nlohmann::json restore = a.object("restore", true);
    const nlohmann::json names = a.object("names", true);
    const nlohmann::json wrote = a.object("wrote", true);
    r.identity = a.identity();
    JournalArgs in_restore = a.part(restore, "restore"), in_wrote = a.part(wrote, "wrote"),
                in_names = a.part(names, "names");
    for (const auto& [name, _] : restore.items()) r.restore[name] = in_restore.flag(name);
    if (a.has("wrote")) r.wrote.emplace();
    for (const auto& [name, _] : wrote.items()) (*r.wrote)[name] = in_wrote.flag(name);
    for (const auto& [name, _] : names.items()) r.names[name] = in_names.texts(name);
    for (const auto* part : {&in_restore, &in_wrote, &in_names}) a.merge(*part);
    if (!a.ok()) return a.error();
    return r;
  }
};

StepResult run_offload(const Params& params, StepContext& ctx) {
  const std::string dev = params.str("dev");
  auto& ethtool = ctx.sys().ethtool;
  RXERUN_TRY_ASSIGN(Features found, ethtool.features(dev));

  if (found.empty()) {
    // Planning: the plan's model knows no features of the host's interfaces; show the request as written.
    std::map<std::string, bool> wanted;
    nlohmann::json facts = {{"changed", true}};
    std::vector<std::string> names;
    for (const auto& [key, value] : params.raw().items()) {
      if (key == "dev" || value.is_null()) continue;
      wanted[key] = value.get<bool>();
      facts[key + ".after"] = on_off(value.get<bool>());
      names.push_back(key);
    }
    RXERUN_TRY(ctx.will_change(OffloadRecord{dev}.to_args(),
                               "restore " + join(names, ", ") + " on " + dev + " to the values found",
                               ctx.on_link(dev)));
    RXERUN_TRY(ethtool.set_features(dev, wanted));
    return StepResult::ok(facts);
  }

  RXERUN_TRY_ASSIGN(const auto requests, resolve(params, dev, found));
  RXERUN_TRY_ASSIGN(const auto change, changes_for(requests, dev, found));

  nlohmann::json facts = nlohmann::json::object();
  for (const auto& r : requests) facts[r.name + ".before"] = feature_value(r, found);
  if (change.empty()) {
    for (const auto& r : requests) facts[r.name + ".after"] = feature_value(r, found);
    facts["changed"] = false;
    return StepResult::ok(facts);
  }

  OffloadRecord record{dev};
  record.wrote.emplace();
  for (const auto& [name, on] : change) {
    record.restore[name] = found.at(name).active;
    (*record.wrote)[name] = on;
  }
  std::vector<std::string> asked;
  for (const auto& r : requests) {
    record.names[r.name] = r.members;
    asked.push_back(r.name);
  }
  RXERUN_TRY_ASSIGN(record.identity, link_identity(ctx.sys(), dev));
  RXERUN_TRY(ctx.will_change(record.to_args(), "restore " + join(asked, ", ") + " on " + dev + " to the values found",
                             ctx.on_link(dev)));
  RXERUN_TRY_ASSIGN(const auto changed, ethtool.set_features(dev, change));

  // The features now: those found, with what the kernel says changed (the
  // features asked for, and any that followed them).
  Features now = std::move(found);
  for (const auto& [name, on] : changed)
    if (auto it = now.find(name); it != now.end()) it->second.active = on;
  for (const auto& r : requests) facts[r.name + ".after"] = feature_value(r, now);
  facts["changed"] = true;
  return StepResult::ok(facts);
}

// Puts back the values found, for the features the step changed and that
// still hold the value it set; a device that is gone has nothing left to
// restore.
Result<nlohmann::json> undo_offload(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<OffloadRecord>(args, ctx));
  const std::string& dev = record.dev;
  auto& ethtool = ctx.sys().ethtool;
  if (!record.identity.is_null()) {
    RXERUN_TRY_ASSIGN(const Found found, check_link(ctx.sys(), dev, record.identity));
    if (found == Found::Gone) return nlohmann::json::object();
  }
  auto now = ethtool.features(dev);
  if (!now) {
    if (now.error().code == ENODEV) return nlohmann::json::object();
    return now.error();
  }
  nlohmann::json facts = nlohmann::json::object();
  for (const auto& [name, members] : record.names) {
    Request r{.name = name, .members = members};
    if (std::all_of(r.members.begin(), r.members.end(), [&](const auto& m) { return now->count(m); }))
      facts[name + ".after"] = feature_value(r, *now);
  }
  const std::map<std::string, bool> set_by_step = record.wrote.value_or(std::map<std::string, bool>{});
  std::map<std::string, bool> back;
  std::vector<std::string> conflicts;
  for (const auto& [name, want] : record.restore) {
    auto it = now->find(name);
    // Planning (no features known) restores blindly; otherwise only what differs.
    if (!now->empty() && (it == now->end() || it->second.active == want)) continue;
    if (auto w = set_by_step.find(name); !now->empty() && w != set_by_step.end() && it->second.active != w->second) {
      conflicts.push_back(name + " is " + on_off(it->second.active) + " now, not the " + on_off(w->second) +
                          " this run set (it was " + on_off(want) + " before the run)");
      continue;
    }
    back[name] = want;
  }
  if (!back.empty()) RXERUN_TRY(ethtool.set_features(dev, back));
  if (!conflicts.empty())
    return make_error("offload features of " + dev + ": " + join(conflicts, ", ") +
                      ": changed by somebody else since, so left as they are");
  // A plan cannot know the values found; say what cleanup will do instead of nothing.
  if (now->empty() && record.restore.empty() && ctx.sys().recorder)
    ctx.sys().recorder->record({"restore the offload features of " + dev + " to the values found", ""});
  return facts;
}

}  // namespace

namespace {

void picture_offload(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  picture.add_interface(place_of(step), picture_param(p, "dev"));
}

}  // namespace

}  // namespace rxerun::steps
