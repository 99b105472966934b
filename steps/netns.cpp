// netns: a named network namespace, as `ip netns add` makes it (visible to
// `ip netns`), its loopback up. A namespace has no alias of its own, so
// rxerun marks its loopback: lo's alias is the scenario's mark. That is how
// the step recognises a leftover of this scenario (adopted), and how its undo
// knows that the namespace it is about to delete is rxerun's: an unmarked
// namespace is never deleted, except one the user replaced with --force.
// The journal also records the namespace's inode: a namespace deleted and
// made again under the name (by somebody else) is left alone, marked or not.

#include "base/try.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_netns(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_netns(const nlohmann::json& args, UndoContext& ctx);
void picture_netns(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

Kind netns_kind() {
  KindSpec spec;
  spec.name = "netns";
  spec.needs = {Need::NetAdmin};
  spec.objects = {{.effect = LabEffect::Makes, .object = LabObject::Netns, .param = "name"}};
  spec.summary = "Create a named network namespace (as `ip netns add`), its loopback up; undo deletes it.";
  spec.params = {
      {.name = "name",
       .type = ParamType::NetnsName,
       .required = true,
       .help = "the namespace's name, as `ip netns` lists it (/run/netns/NAME); other steps enter it with `netns:`"},
  };
  spec.facts = {
      {"changed", "whether the step created the namespace (false: this scenario's own was there already)"},
  };
  spec.example =
      "- netns: {name: lab}\n"
      "- link: {dev: lo, up: true}\n"
      "  netns: lab\n";
  Kind kind{std::move(spec), run_netns, undo_netns};
  kind.picture = picture_netns;
  return kind;
}

namespace {

// The namespace the step made (or adopted); its identity: its inode.
struct NetnsRecord {
  static constexpr std::string_view kOp = "netns";
  std::string name;
  nlohmann::json identity;  // {"netns_inode"}; null when not recorded

  nlohmann::json to_args() const { return {{"op", kOp}, {"name", name}}; }
  static Result<NetnsRecord> read(JournalArgs& a) {
    NetnsRecord r{a.netns_name("name"), a.identity()};
    if (!a.ok()) return a.error();
    return r;
  }
};

// lo's alias inside `name`; "" when it has none (or no lo).
Result<std::string> loopback_alias(sys::System& sys, const std::string& name) {
  RXERUN_TRY_ASSIGN(const auto scope, sys.netns.enter(name));
  RXERUN_TRY_ASSIGN(const auto lo, sys.links.get("lo"));
  return lo ? lo->alias : std::string();
}

Result<void> mark_loopback(sys::System& sys, const std::string& name, const std::string& mark) {
  RXERUN_TRY_ASSIGN(const auto scope, sys.netns.enter(name));
  return sys.links.set_alias("lo", mark);
}

// Records the namespace's inode for the undo (steps/common/identity.h).
Result<void> identify(StepContext& ctx, const std::string& name) {
  RXERUN_TRY_ASSIGN(const std::uint64_t inode, ctx.sys().netns.inode(name));
  return ctx.identify({{"netns_inode", inode}});
}

StepResult run_netns(const Params& params, StepContext& ctx) {
  const std::string name = params.str("name");
  const std::string mark = mark_for(ctx.scenario());
  auto& sys = ctx.sys();
  const nlohmann::json args = NetnsRecord{name, nullptr}.to_args();
  const std::string summary = "delete network namespace " + name;
  const Footprint footprint{.makes = {netns_object(name)}};

  RXERUN_TRY_ASSIGN(const bool exists, sys.netns.exists(name));
  if (exists) {
    RXERUN_TRY_ASSIGN(const std::string alias, loopback_alias(sys, name));
    if (alias == mark) {
      // This scenario's own (an earlier step of this run, or a leftover the
      // journal lost): adopt it, and make sure cleanup removes it.
      RXERUN_TRY(ctx.will_change(args, summary, footprint));
      RXERUN_TRY(identify(ctx, name));
      return StepResult::ok({{"changed", false}});
    }
    if (!ctx.force())
      return StepResult::error("network namespace " + name +
                               " exists; rxerun will not take over what it did not create (delete it with `ip netns "
                               "del " +
                               name + "`, choose another name, or run with --force to replace it)");
    if (auto r = sys.netns.remove(name); !r && r.error().code != ENOENT) return StepResult::error(r.error());
  }

  RXERUN_TRY(ctx.will_change(args, summary, footprint));
  RXERUN_TRY(sys.netns.create(name));
  RXERUN_TRY(mark_loopback(sys, name, mark));
  // After the mark: a crash before this journal write leaves a namespace
  // its undo still knows by the mark.
  RXERUN_TRY(identify(ctx, name));
  return StepResult::ok({{"changed", true}});
}

// Deletes the marked interfaces in namespace `name`, unless it does not
// carry the mark itself. False: the namespace went meanwhile.
Result<bool> remove_marked_links(sys::System& sys, const std::string& name, const std::string& mark) {
  auto scope = sys.netns.enter(name);
  if (!scope) {
    if (scope.error().code == ENOENT) return false;
    return scope.error();
  }
  RXERUN_TRY_ASSIGN(const auto links, sys.links.list());
  std::optional<std::string> lo_alias;  // every namespace has a lo; `plan` models none
  std::vector<std::string> marked;
  for (const auto& l : links) {
    if (l.name == "lo")
      lo_alias = l.alias;
    else if (l.alias == mark)
      marked.push_back(l.name);
  }
  if (lo_alias && *lo_alias != mark)
    return make_error("network namespace " + name + " does not carry rxerun's mark (lo's alias is '" + *lo_alias +
                      "', not '" + mark + "'): left alone");
  if (!marked.empty()) RXERUN_TRY(sys.links.remove(marked));
  return true;
}

// Deletes the namespace when it is the one the run made (its inode, when
// recorded) and carries the mark. The marked interfaces in it go first, in
// one kernel operation: a veth whose other end sits in another namespace
// then disappears at once, not whenever the kernel gets round to freeing
// the namespace.
Result<nlohmann::json> undo_netns(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<NetnsRecord>(args, ctx));
  const std::string& name = record.name;
  const nlohmann::json& recorded = record.identity;
  auto& sys = ctx.sys();
  RXERUN_TRY_ASSIGN(const bool exists, sys.netns.exists(name));
  if (!exists) return nlohmann::json::object();
  if (auto inode = sys.netns.inode(name); !inode) {
    if (inode.error().code == ENOENT) return nlohmann::json::object();
    return inode.error();
  } else if (differs(recorded, {{"netns_inode", *inode}})) {
    return make_error(
        "network namespace " + name + " is another one than the one this run made: the journal recorded inode " +
        std::to_string(recorded.at("netns_inode").get<std::uint64_t>()) + ", /run/netns/" + name + " is now inode " +
        std::to_string(*inode) + " (deleted and made again under its name since): left alone, with everything in it");
  }
  RXERUN_TRY_ASSIGN(const bool there, remove_marked_links(sys, name, mark_for(ctx.scenario())));
  if (!there) return nlohmann::json::object();
  if (auto r = sys.netns.remove(name); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

}  // namespace

namespace {

void picture_netns(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  picture.add_namespace({place_of(step).node, picture_param(p, "name")}, step.name);
}

}  // namespace

}  // namespace rxerun::steps
