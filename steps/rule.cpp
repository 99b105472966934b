// rule: a policy-routing rule (`ip rule add` / `ip rule del`), over
// rtnetlink. `action: add` adds the rule unless one with exactly its
// selectors, priority and table is there (changed=false, no undo); undo
// deletes exactly that rule. `action: delete` takes an existing rule away,
// the kernel's own included (the forced wire moves `pref 0 lookup local` to
// 1000): the rule as the kernel lists it, protocol and all, goes into the
// journal BEFORE it is deleted, and cleanup puts it back exactly, like a
// sysctl restored to the value found. A rule rxerun could not put back
// (a selector it does not model) is never deleted, nor is the last rule
// that looks up the local table: without one a namespace no longer knows
// its own addresses.
//
// A rule names its interfaces (iif, oif) by name and outlives them: the
// kernel applies it to whichever interface takes the name. So the rule, not
// an interface, is what an undo deletes or puts back; what the journal
// records to tell it from a namesake is its namespace's inode
// (steps/common/identity.h): in a namespace made again under the name, the rule is
// left alone and reported.

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <charconv>
#include <optional>

#include "base/try.h"
#include "engine/step.h"
#include "engine/vars.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

std::optional<std::uint32_t> parse_mark(const std::string& s) {
  unsigned long long n = 0;
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char* begin = s.data() + (hex ? 2 : 0);
  auto [end, ec] = std::from_chars(begin, s.data() + s.size(), n, hex ? 16 : 10);
  if (begin == s.data() + s.size() || ec != std::errc() || end != s.data() + s.size() || n > 0xffffffffull)
    return std::nullopt;
  return static_cast<std::uint32_t>(n);
}

struct ParsedRule {
  std::optional<sys::Rule> rule;
  std::string path, why;
};

// The rule the parameters name, or the parameter at fault and why.
ParsedRule parse_rule_spec(const nlohmann::json& p) {
  auto fail = [](std::string path, std::string why) {
    return ParsedRule{std::nullopt, std::move(path), std::move(why)};
  };
  sys::Rule r;
  r.action = FR_ACT_TO_TBL;
  r.pref = static_cast<unsigned>(p.at("pref").get<long long>());
  int family = 0;
  if (p.contains("family")) family = p.at("family").get<std::string>() == "inet6" ? AF_INET6 : AF_INET;
  for (const char* key : {"from", "to"}) {
    if (!p.contains(key)) continue;
    const std::string text = p.at(key).get<std::string>();
    if (text == "all") continue;
    std::string why;
    auto prefix = sys::parse_prefix(text, &why);
    if (!prefix)
      return fail(key, std::string("'") + key + "' must be a prefix such as 10.10.0.2/32, an address or 'all': " + why);
    if (family && family != prefix->family)
      return fail(key, std::string("'") + key + "' is " + sys::family_name(prefix->family) + ", the rule " +
                           sys::family_name(family) + (p.contains("family") ? " ('family')" : " (the other address)"));
    family = prefix->family;
    if (prefix->length == 0) continue;  // a /0 selects every address: the kernel stores no selector
    (std::string(key) == "from" ? r.from : r.to) = prefix->text;
  }
  r.family = family ? family : AF_INET;
  if (p.contains("iif")) r.iif = p.at("iif").get<std::string>();
  if (p.contains("oif")) r.oif = p.at("oif").get<std::string>();
  if (p.contains("fwmark")) {
    const std::string text = scalar_text(p.at("fwmark"));
    const auto slash = text.find('/');
    auto mark = parse_mark(text.substr(0, slash));
    auto mask =
        slash == std::string::npos ? std::optional<std::uint32_t>(0xffffffffu) : parse_mark(text.substr(slash + 1));
    if (!mark || !mask || (*mark == 0 && *mask == 0))
      return fail("fwmark", "'fwmark' must be MARK or MARK/MASK (numbers, 0x for hex, not both 0), got '" + text + "'");
    r.fwmark = *mark;
    r.fwmask = *mask;
  }
  const std::string table = scalar_text(p.at("table"));
  auto t = sys::parse_table(table);
  if (!t) return fail("table", "'table' must be a number 1..4294967295 or main, local, default, got '" + table + "'");
  r.table = *t;
  return ParsedRule{r, "", ""};
}

// Defined after the spec below, which names them.
StepResult run_rule(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_rule(const nlohmann::json& args, UndoContext& ctx);

void validate_rule(const nlohmann::json& p, const KindSpec::Complaint& complain) {
  if (has_step_references(p)) return;  // checked at run time, when the facts are known
  auto parsed = parse_rule_spec(p);
  if (!parsed.rule) complain(parsed.path, parsed.why);
}

}  // namespace

Kind rule_kind() {
  KindSpec spec;
  spec.name = "rule";
  spec.needs = {Need::NetAdmin};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "iif"},
                  {.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "oif"}};
  spec.summary =
      "Add a policy-routing rule (ip rule add), or delete one (action: delete) that cleanup puts back exactly; to "
      "move a rule, add the new one first.";
  spec.params = {
      {.name = "pref",
       .type = ParamType::Int,
       .required = true,
       .help = "the priority (ip rule's pref): lower is looked at first; with the selectors and the table it "
               "names the rule exactly",
       .min = 0,
       .max = 4294967295LL},
      {.name = "table",
       .type = ParamType::Scalar,
       .required = true,
       .help = "the table to look up: a number 1..4294967295, or local, main, default"},
      {.name = "from", .type = ParamType::String, .help = "source prefix (10.10.0.1/32, an address, or all)"},
      {.name = "to", .type = ParamType::String, .help = "destination prefix (10.10.0.2/32, an address, or all)"},
      {.name = "iif", .type = ParamType::IfName, .help = "incoming interface; lo selects what the host itself sends"},
      {.name = "oif", .type = ParamType::IfName, .help = "outgoing interface (of sockets bound to one)"},
      {.name = "fwmark", .type = ParamType::Scalar, .help = "firewall mark: MARK or MARK/MASK (0x10, 0x10/0xff)"},
      {.name = "family",
       .type = ParamType::Enum,
       .help = "inet or inet6; default: the family of from/to, else inet",
       .choices = {"inet", "inet6"}},
      {.name = "action",
       .type = ParamType::Enum,
       .default_value = "add",
       .help = "add the rule, or delete the rule that has exactly these selectors (cleanup puts it back as it "
               "was); a rule that is not there is left so (changed=false). To move a rule (the forced wire moves "
               "pref 0 lookup local to 1000), add the new one FIRST, then delete the old: the namespace must never "
               "be without a rule that looks up the local table, and rxerun refuses to delete the last one",
       .choices = {"add", "delete"}},
  };
  spec.facts = {
      {"changed", "whether the step added (or deleted) the rule"},
      {.name = "rule",
       .help = "the rule as ip(8) writes it: pref 100 iif lo to 10.10.0.2/32 lookup 100",
       .when = kAtStep | kAtRevert},
      {"table", "its table: local, main, default or the number"},
      {"family", "inet or inet6"},
      {.name = "removed", .help = "at its revert: whether the rule it added was deleted", .when = kAtRevert},
      {.name = "restored", .help = "at the revert of a delete: whether the rule was put back", .when = kAtRevert},
  };
  spec.example =
      "# The forced wire (docs/kernel-notes.md): what the host sends to 10.10.0.2 looks up\n"
      "# table 100 first; the local table moves behind it, added before deleted.\n"
      "- rule: {pref: 100, iif: lo, to: 10.10.0.2/32, table: 100}\n"
      "- rule: {pref: 1000, table: local}\n"
      "- rule: {pref: 0, table: local, action: delete}\n";
  spec.validate = validate_rule;
  return Kind{std::move(spec), run_rule, undo_rule};
}

namespace {

// A rule as the journal holds it (every field; as the kernel listed it, its
// protocol included), in the namespace of its identity.
struct JournalledRule {
  sys::Rule rule;
  nlohmann::json identity;  // {"netns_inode"}

  nlohmann::json to_args(std::string_view op) const {
    const sys::Rule& r = rule;
    return {{"op", op},
            {"rule",
             {{"family", sys::family_name(r.family)},
              {"pref", r.pref},
              {"from", r.from},
              {"to", r.to},
              {"iif", r.iif},
              {"oif", r.oif},
              {"fwmark", r.fwmark},
              {"fwmask", r.fwmask},
              {"action", r.action},
              {"table", r.table},
              {"protocol", r.protocol}}},
            {"identity", identity}};
  }
  // Every field checked.
  static Result<JournalledRule> read(JournalArgs& a) {
    JournalledRule out{{}, a.identity()};
    const nlohmann::json fields = a.object("rule");
    if (!a.ok()) return a.error();
    JournalArgs in_rule = a.part(fields, "rule");
    sys::Rule& r = out.rule;
    const std::string family = in_rule.text("family");
    if (in_rule.ok() && family != "inet" && family != "inet6") in_rule.refuse("family", "inet or inet6");
    r.family = family == "inet6" ? AF_INET6 : AF_INET;
    r.pref = static_cast<unsigned>(in_rule.number("pref", UINT32_MAX));
    for (auto [key, field] : {std::pair{"from", &r.from}, std::pair{"to", &r.to}}) {
      *field = in_rule.text(key);
      if (in_rule.ok() && !field->empty() && !sys::parse_prefix(*field)) in_rule.refuse(key, "a prefix or \"\"");
    }
    r.iif = in_rule.ifname("iif", true);
    r.oif = in_rule.ifname("oif", true);
    r.fwmark = static_cast<std::uint32_t>(in_rule.number("fwmark", UINT32_MAX));
    r.fwmask = static_cast<std::uint32_t>(in_rule.number("fwmask", UINT32_MAX));
    r.action = static_cast<int>(in_rule.number("action", 255));
    r.table = static_cast<unsigned>(in_rule.number("table", UINT32_MAX));
    r.protocol = static_cast<unsigned>(in_rule.number("protocol", 255));
    a.merge(in_rule);
    if (!a.ok()) return a.error();
    return out;
  }
};

// The rule the step added: the undo deletes exactly that rule.
struct AddedRuleRecord : JournalledRule {
  static constexpr std::string_view kOp = "delete";
  nlohmann::json to_args() const { return JournalledRule::to_args(kOp); }
};

// The rule the step deleted: the undo puts it back.
struct DeletedRuleRecord : JournalledRule {
  static constexpr std::string_view kOp = "add";
  nlohmann::json to_args() const { return JournalledRule::to_args(kOp); }
};

nlohmann::json rule_facts(const sys::Rule& r, bool changed) {
  return {{"changed", changed},
          {"rule", sys::rule_args(r)},
          {"table", sys::table_name(r.table)},
          {"family", sys::family_name(r.family)}};
}

// A rule that sends every packet to the local table: what a namespace needs
// to recognise its own addresses.
bool plain_local_lookup(const sys::Rule& r) {
  return r.action == FR_ACT_TO_TBL && r.table == sys::kTableLocal && r.from.empty() && r.to.empty() && r.iif.empty() &&
         r.oif.empty() && !r.fwmark && !r.fwmask && r.other.empty();
}

StepResult add_rule(const sys::Rule& want, StepContext& ctx, const std::vector<sys::Rule>& present) {
  for (const auto& have : present)
    if (sys::same_rule(have, want)) return StepResult::ok(rule_facts(want, false));
  RXERUN_TRY_ASSIGN(const auto identity, netns_identity(ctx.sys()));
  RXERUN_TRY(ctx.will_change(AddedRuleRecord{{want, identity}}.to_args(), "delete rule " + sys::rule_args(want),
                             ctx.in_netns()));
  if (auto r = ctx.sys().routes.add_rule(want); !r) {
    if (r.error().code == EEXIST)
      return StepResult::error(r.error().message +
                               " (the kernel counts a rule with this priority, table and "
                               "interfaces as present, whatever its addresses: give this one "
                               "another pref)");
    return StepResult::error(r.error());
  }
  return StepResult::ok(rule_facts(want, true));
}

StepResult delete_rule(const sys::Rule& want, StepContext& ctx, const std::vector<sys::Rule>& present) {
  const sys::Rule* found = nullptr;
  for (const auto& have : present)
    if (sys::same_rule(have, want)) found = &have;
  if (!found) {
    StepResult r = StepResult::ok(rule_facts(want, false));
    std::string at_pref;
    for (const auto& have : present)
      if (have.pref == want.pref) at_pref += (at_pref.empty() ? "" : "; ") + sys::rule_args(have);
    if (!at_pref.empty())
      r.hints.push_back("no rule is exactly " + sys::rule_args(want) + ", so none was deleted; at pref " +
                        std::to_string(want.pref) + " there is: " + at_pref);
    return r;
  }
  if (plain_local_lookup(*found)) {
    bool another = false;
    for (const auto& have : present) another = another || (&have != found && plain_local_lookup(have));
    if (!another)
      return StepResult::error(
          "will not delete " + sys::rule_args(*found) +
          ": it is the last rule that looks up the local table, "
          "and without one the namespace no longer recognises its own addresses; add the new one first (rule: "
          "{pref: 1000, table: local}), then delete this one");
  }
  const sys::Rule gone = *found;  // as the kernel lists it, protocol included
  RXERUN_TRY_ASSIGN(const auto identity, netns_identity(ctx.sys()));
  RXERUN_TRY(ctx.will_change(DeletedRuleRecord{{gone, identity}}.to_args(), "put back rule " + sys::rule_args(gone),
                             ctx.in_netns()));
  RXERUN_TRY(ctx.sys().routes.remove_rule(gone));
  return StepResult::ok(rule_facts(gone, true));
}

StepResult run_rule(const Params& params, StepContext& ctx) {
  auto parsed = parse_rule_spec(params.raw());
  if (!parsed.rule)
    return StepResult::error((parsed.path.empty() ? std::string() : params.where(parsed.path) + ": ") + parsed.why);
  const sys::Rule want = *parsed.rule;
  RXERUN_TRY_ASSIGN(const auto present, ctx.sys().routes.rules(want.family));
  if (params.str("action") == "delete") return delete_rule(want, ctx, present);
  return add_rule(want, ctx, present);
}

// "delete": the undo of an add, deletes exactly that rule (gone is
// success). "add": the undo of a deletion, puts the rule back unless it is
// there already.
Result<nlohmann::json> undo_rule(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  const std::string op = record_op(a, {AddedRuleRecord::kOp, DeletedRuleRecord::kOp}, {});
  RXERUN_TRY_ASSIGN(const auto record, JournalledRule::read(a));
  const sys::Rule& rule = record.rule;
  RXERUN_TRY(check_netns(ctx.sys(), record.identity, ctx.netns()));
  auto& routes = ctx.sys().routes;
  if (op == AddedRuleRecord::kOp) {
    auto r = routes.remove_rule(rule);
    if (!r && r.error().code != ENOENT) return r.error();
    return nlohmann::json{{"rule", sys::rule_args(rule)}, {"removed", r.ok()}};
  }
  RXERUN_TRY_ASSIGN(const auto present, routes.rules(rule.family));
  for (const auto& have : present)
    if (sys::same_rule(have, rule)) return nlohmann::json{{"rule", sys::rule_args(rule)}, {"restored", false}};
  auto r = routes.add_rule(rule);
  if (!r && r.error().code != EEXIST) return r.error();
  return nlohmann::json{{"rule", sys::rule_args(rule)}, {"restored", r.ok()}};
}

}  // namespace

}  // namespace rxerun::steps
