// veth: a pair of virtual Ethernet interfaces, optionally with the peer in
// another namespace. Both ends carry the scenario's mark as their alias
// (docs/cleanup.md); undo deletes `name` and the peer goes with it.
//
// An interface already there under one of the two names:
// - marked with this scenario's mark, a veth, and matching (both ends there,
//   the MTU asked for): adopted, changed=false, its undo recorded again;
// - marked but not matching: a leftover of this scenario, deleted and made anew;
// - unmarked: the step stops (exit 3) and deletes nothing, unless --force, in
//   which case it is deleted and ours created.
//
// Undo never deletes a link whose alias is not the mark, nor one that is
// not the interface the run made or adopted: the journal records the index
// and the namespace's inode of both ends (steps/common/identity.h), and a namesake
// made since, even one that copied the mark, is left alone and reported.
// Only the first end is compared: a veth's peer is fixed for its life, so
// when the first end is the one recorded, so is the other. Many veths are
// deleted in one kernel operation (undo_batch), and preclean deletes every
// veth in the namespace that carries the mark.

#include <algorithm>

#include "base/try.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

std::string left_alone(const std::string& name, const sys::LinkInfo& l, const std::string& mark) {
  return "interface " + name + " does not carry rxerun's mark (its alias is '" + l.alias + "', not '" + mark +
         "'): left alone";
}

// The pair the step made (or adopted): the undo deletes the first end, and
// the peer goes with it. Its identity: both ends' index and namespace inode.
struct VethRecord {
  static constexpr std::string_view kOp = "veth";
  std::string name;
  std::string peer;
  std::string peer_netns;   // "": beside the first end
  nlohmann::json identity;  // null when not recorded

  nlohmann::json to_args() const { return {{"op", kOp}, {"name", name}, {"peer", peer}, {"peer_netns", peer_netns}}; }
  static Result<VethRecord> read(JournalArgs& a) {
    VethRecord r{a.ifname("name"), {}, {}, a.identity()};
    // Checked, though the undo goes by the first end alone.
    r.peer = a.ifname("peer");
    if (a.has("peer_netns")) r.peer_netns = a.netns_name("peer_netns", true);
    if (!a.ok()) return a.error();
    return r;
  }
};

// Defined after the spec below, which names them.
StepResult run_veth(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_veth(const nlohmann::json& args, UndoContext& ctx);
Result<void> undo_veth_batch(const std::vector<nlohmann::json>& all, UndoContext& ctx);
Result<std::vector<std::string>> preclean_veth(UndoContext& ctx);
void picture_veth(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

Kind veth_kind() {
  KindSpec spec;
  spec.name = "veth";
  spec.needs = {Need::NetAdmin};
  spec.objects = {
      {.effect = LabEffect::Makes, .object = LabObject::Interface, .param = "name"},
      {.effect = LabEffect::Uses, .object = LabObject::Netns, .param = "peer_netns"},
      {.effect = LabEffect::Makes, .object = LabObject::Interface, .param = "peer", .netns_param = "peer_netns"}};
  spec.summary = "Create a veth pair, optionally with the peer in another namespace; undo deletes it.";
  spec.params = {
      {.name = "name", .type = ParamType::IfName, .required = true, .help = "the first end, where the step runs"},
      {.name = "peer", .type = ParamType::IfName, .required = true, .help = "the other end"},
      {.name = "peer_netns",
       .type = ParamType::NetnsName,
       .help = "a namespace (made by a netns step, or `ip netns add`) to put the peer in; unset: beside the first end"},
      {.name = "mtu",
       .type = ParamType::Int,
       .help = "MTU of both ends; unset: the kernel's default (1500)",
       .min = 68,
       .max = 65535},
  };
  spec.facts = {
      {"changed", "whether the step created the pair (false: this scenario's own pair was there already)"},
      {"mtu", "the MTU of the first end after the step"},
      {"replaced", "whether an interface without rxerun's mark was deleted to make room (only with --force)"},
  };
  spec.example =
      "- netns: {name: lab}\n"
      "- veth: {name: vB, peer: vA, peer_netns: lab, mtu: 1500}\n";
  Kind kind{std::move(spec), run_veth, undo_veth, undo_veth_batch, preclean_veth};
  kind.picture = picture_veth;
  return kind;
}

namespace {

struct End {
  std::string name;
  std::string netns;  // "" where the step runs
};

// The link of that name in that namespace ("" for the step's own).
Result<std::optional<sys::LinkInfo>> look(sys::System& sys, const End& end) {
  std::unique_ptr<sys::NetnsScope> scope;
  if (!end.netns.empty()) {
    auto entered = sys.netns.enter(end.netns);
    if (!entered) {
      if (entered.error().code == ENOENT)
        return make_error("network namespace " + end.netns + " does not exist (create it first with a netns step)",
                          ENOENT);
      return entered.error();
    }
    scope = std::move(entered).value();
  }
  return sys.links.get(end.name);
}

Result<void> delete_link(sys::System& sys, const End& end) {
  std::unique_ptr<sys::NetnsScope> scope;
  if (!end.netns.empty()) {
    RXERUN_TRY_ASSIGN(scope, sys.netns.enter(end.netns));
  }
  return sys.links.remove({end.name});
}

// What identifies the pair: both ends' index and namespace inode.
Result<nlohmann::json> pair_identity(sys::System& sys, const sys::LinkInfo& self, const End& peer) {
  RXERUN_TRY_ASSIGN(nlohmann::json id, link_identity(sys, self));
  RXERUN_TRY_ASSIGN(const auto other, look(sys, peer));
  if (!other) return id;
  RXERUN_TRY_ASSIGN(const std::uint64_t inode,
                    peer.netns.empty() ? sys.netns.current_inode() : sys.netns.inode(peer.netns));
  id["peer_ifindex"] = other->ifindex;
  id["peer_netns_inode"] = inode;
  return id;
}

// Records the pair's identity once it exists (after the journal entry).
Result<void> identify_pair(StepContext& ctx, const sys::LinkInfo& self, const End& peer) {
  RXERUN_TRY_ASSIGN(const auto id, pair_identity(ctx.sys(), self, peer));
  return ctx.identify(id);
}

std::string end_text(const End& end) {
  return end.netns.empty() ? end.name : end.name + " (netns " + end.netns + ")";
}

std::string not_ours(const End& end, const sys::LinkInfo& l) {
  return "interface " + end_text(end) + " exists and does not carry rxerun's mark (its alias is '" + l.alias +
         "'); rxerun will not take over or delete what it did not create: delete or rename it, choose another "
         "name, or run with --force to replace it";
}

StepResult run_veth(const Params& params, StepContext& ctx) {
  auto& sys = ctx.sys();
  const std::string mark = mark_for(ctx.scenario());
  const End self{params.str("name"), ""};
  const End peer{params.str("peer"), params.has("peer_netns") ? params.str("peer_netns") : ""};
  const unsigned mtu = params.has("mtu") ? static_cast<unsigned>(params.integer("mtu")) : 0;
  if (peer.netns.empty() && self.name == peer.name)
    return StepResult::error(params.where("peer") + ": the peer needs a name of its own (" + peer.name +
                             " is the first end's)");

  const nlohmann::json args = VethRecord{self.name, peer.name, peer.netns, nullptr}.to_args();
  const std::string summary = "delete veth pair " + self.name + "/" + peer.name;
  // The pair lives in the step's namespace and the peer's; removing either
  // namespace takes it along.
  const std::string here = ctx.step().netns.value_or("");
  const std::string there = peer.netns.empty() ? here : peer.netns;
  Footprint footprint{.makes = {link_object(here, self.name), link_object(there, peer.name)}};
  for (const auto& ns : {here, there})
    if (!ns.empty() && std::find(footprint.on.begin(), footprint.on.end(), netns_object(ns)) == footprint.on.end())
      footprint.on.push_back(netns_object(ns));

  RXERUN_TRY_ASSIGN(const auto found_self, look(sys, self));
  RXERUN_TRY_ASSIGN(const auto found_peer, look(sys, peer));

  auto ours = [&](const std::optional<sys::LinkInfo>& l) { return l && l->alias == mark && l->kind == "veth"; };
  auto fits = [&](const std::optional<sys::LinkInfo>& l) { return ours(l) && (mtu == 0 || l->mtu == mtu); };
  if (fits(found_self) && fits(found_peer)) {
    RXERUN_TRY(ctx.will_change(args, summary, footprint));
    RXERUN_TRY(identify_pair(ctx, *found_self, peer));
    return StepResult::ok({{"changed", false}, {"mtu", found_self->mtu}, {"replaced", false}});
  }

  // Decide about both ends before deleting anything.
  bool replaced = false;
  for (const auto* pair : {&found_self, &found_peer}) {
    const auto& l = *pair;
    const End& end = pair == &found_self ? self : peer;
    if (!l || l->alias == mark) continue;
    if (!ctx.force()) return StepResult::error(not_ours(end, *l));
    replaced = true;
  }
  if (found_self) RXERUN_TRY(delete_link(sys, self));
  if (found_peer) {
    // Gone already when it was the first end's peer.
    RXERUN_TRY_ASSIGN(const auto still, look(sys, peer));
    if (still) RXERUN_TRY(delete_link(sys, peer));
  }

  RXERUN_TRY(ctx.will_change(args, summary, footprint));
  RXERUN_TRY(sys.links.add_veth(sys::VethSpec{self.name, peer.name, peer.netns, mtu, mark}));
  RXERUN_TRY_ASSIGN(const auto made, sys.links.get(self.name));
  if (made) RXERUN_TRY(identify_pair(ctx, *made, peer));
  const unsigned now_mtu = made ? made->mtu : mtu;
  return StepResult::ok({{"changed", true}, {"mtu", now_mtu}, {"replaced", replaced}});
}

Result<nlohmann::json> undo_veth(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto recorded, read_record<VethRecord>(args, ctx));
  const std::string& name = recorded.name;
  const std::string mark = mark_for(ctx.scenario());
  std::optional<sys::LinkInfo> l;
  RXERUN_TRY_ASSIGN(const Found found, check_link(ctx.sys(), name, recorded.identity, &l));
  if (found == Found::Gone) return nlohmann::json::object();  // gone (a deleted namespace takes its links along)
  if (l->alias != mark) return make_error(left_alone(name, *l, mark));
  RXERUN_TRY(ctx.sys().links.remove({name}));
  return nlohmann::json::object();
}

// Many pairs in one kernel operation: the kernel waits one grace period per
// operation, not per link. Only marked links that are still the ones
// recorded are deleted; any other is left and reported (cleanup then undoes
// the entries one by one, which names it).
Result<void> undo_veth_batch(const std::vector<nlohmann::json>& all, UndoContext& ctx) {
  const std::string mark = mark_for(ctx.scenario());
  auto& links = ctx.sys().links;
  RXERUN_TRY_ASSIGN(const auto present, links.list());
  std::vector<std::string> names;
  std::string problems;
  for (const auto& args : all) {
    auto recorded = read_record<VethRecord>(args, ctx);
    if (!recorded) {
      problems += (problems.empty() ? "" : "; ") + recorded.error().message;
      continue;
    }
    const std::string& name = recorded->name;
    auto it = std::find_if(present.begin(), present.end(), [&](const sys::LinkInfo& l) { return l.name == name; });
    if (it == present.end()) continue;
    if (!recorded->identity.is_null()) {
      RXERUN_TRY_ASSIGN(const auto id, link_identity(ctx.sys(), *it));
      if (differs(recorded->identity, id)) {
        problems += (problems.empty() ? "" : "; ") + name + " is another interface than the one this run made";
        continue;
      }
    }
    if (it->alias != mark) {
      problems += (problems.empty() ? "" : "; ") + left_alone(name, *it, mark);
      continue;
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (!names.empty()) RXERUN_TRY(links.remove(names));
  if (!problems.empty()) return make_error(problems);
  return {};
}

// Leftovers of a crashed run that the journal does not know: every veth here
// that carries this scenario's mark.
Result<std::vector<std::string>> preclean_veth(UndoContext& ctx) {
  const std::string mark = mark_for(ctx.scenario());
  auto& links = ctx.sys().links;
  RXERUN_TRY_ASSIGN(const auto present, links.list());
  std::vector<std::string> names, removed;
  for (const auto& l : present)
    if (l.alias == mark && l.kind == "veth") names.push_back(l.name);
  if (names.empty()) return removed;
  RXERUN_TRY(links.remove(names));
  for (const auto& n : names) removed.push_back("deleted interface " + n + " (marked " + mark + ")");
  return removed;
}

}  // namespace

namespace {

// Both ends, the peer in `peer_netns` when given, and the wire between them.
void picture_veth(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  const PicturePlace here = place_of(step);
  PicturePlace there = here;
  if (const std::string ns = picture_param(p, "peer_netns"); !ns.empty()) there.netns = ns;
  const std::string name = picture_param(p, "name"), peer = picture_param(p, "peer"), mtu = picture_param(p, "mtu");
  for (const auto& [place, end] : {std::pair{here, name}, std::pair{there, peer}}) {
    auto& i = picture.add_interface(place, end);
    i.kind = "veth";
    if (!mtu.empty()) i.mtu = mtu;
  }
  picture.links.push_back({"veth", step.name, here, name, there, peer});
}

}  // namespace

}  // namespace rxerun::steps
