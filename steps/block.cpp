// block: failure injection with nftables. Every rule of a run lives in one
// table that belongs to the run, `inet rxerun-SCENARIO`, in one base chain
// per hook; the host's own ruleset is never listed, flushed or changed. The
// rule counts what it hit; undo reads that count (what `revert` reports, the
// proof that a fault was hit), deletes the rule, then the chain and the
// table once nothing else of the run is left in them. The journal records
// the namespace's inode (steps/common/identity.h): in a namespace made again under
// its name, the undo leaves everything alone and reports it.

#include <algorithm>
#include <cerrno>
#include <optional>

#include "base/try.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "engine/vars.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

constexpr const char* kFamily = "inet";

std::string table_for(const std::string& scenario) {
  return "rxerun-" + scenario;
}

bool is_enoent(const Error& e) {
  return e.code == ENOENT;
}

// The rules of `chain` that carry `comment`.
std::vector<const sys::NftRule*> rules_with(const sys::NftTable& t, const std::string& chain,
                                            const std::string& comment) {
  std::vector<const sys::NftRule*> out;
  for (const auto& r : t.rules)
    if (r.chain == chain && r.comment == comment) out.push_back(&r);
  return out;
}

bool has_chain(const sys::NftTable& t, const std::string& name) {
  return std::find(t.chains.begin(), t.chains.end(), name) != t.chains.end();
}

std::size_t rules_in(const sys::NftTable& t, const std::string& chain) {
  return std::count_if(t.rules.begin(), t.rules.end(), [&](const sys::NftRule& r) { return r.chain == chain; });
}

struct Counted {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
};

Counted counted(const std::vector<const sys::NftRule*>& rules) {
  Counted c;
  for (const auto* r : rules) {
    c.packets += r->packets;
    c.bytes += r->bytes;
  }
  return c;
}

// Defined after the spec below, which names them.
StepResult run_block(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_block(const nlohmann::json& args, UndoContext& ctx);
Result<std::vector<std::string>> preclean_block(UndoContext& ctx);

// nftables reads a `*` at the end of an interface name as a wildcard
// (`iifname "v*"` matches every v-interface): a block meant for one
// interface would hit others, which rxerun did not make.
// What is wrong with a `port` beside `proto` (empty: no proto); nullopt when nothing.
std::optional<std::string> port_problem(const std::string& proto);

void validate_block(const nlohmann::json& p, const KindSpec::Complaint& complain) {
  // The rules that need no run-time fact, checked before anything runs (the
  // step checks them again, for values that are such facts).
  const bool proto_known = !p.contains("proto") || (p.at("proto").is_string() && !has_step_references(p.at("proto")));
  if (p.contains("port") && proto_known)
    if (auto why = port_problem(p.contains("proto") ? p.at("proto").get<std::string>() : "")) complain("port", *why);
  if (!p.contains("dev") || !p.at("dev").is_string() || has_step_references(p.at("dev"))) return;
  const auto& dev = p.at("dev").get_ref<const std::string&>();
  if (dev.find('*') != std::string::npos)
    complain("dev", "'" + dev +
                        "' holds '*', which nftables reads as a wildcard matching other interfaces: name one "
                        "interface");
}
void picture_block(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

Kind block_kind() {
  KindSpec spec;
  spec.name = "block";
  spec.needs = {Need::NetAdmin};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "dev"}};
  spec.summary =
      "Drop or reject packets with an nftables rule in the run's own table (inet rxerun-SCENARIO); the rule "
      "counts what it hit. Warning: dropping UDP 4791 on the output hook wedges rxe until the rule goes.";
  spec.params = {
      {.name = "proto",
       .type = ParamType::Enum,
       .help = "the protocol to block; with `dev` alone, everything on that interface",
       .choices = {"dccp", "icmp", "icmpv6", "sctp", "tcp", "udp", "udplite"}},
      {.name = "port",
       .type = ParamType::Int,
       .help = "destination port (udp, tcp, sctp, dccp, udplite only): 4791 is RoCEv2",
       .min = 1,
       .max = 65535},
      {.name = "hook",
       .type = ParamType::Enum,
       .default_value = "input",
       .help = "where: input (arriving for this host), output (leaving it; UDP 4791 there wedges rxe), forward",
       .choices = {"forward", "input", "output"}},
      {.name = "dev",
       .type = ParamType::IfName,
       .help = "only packets arriving on (input, forward) or leaving by (output) this interface (no `*`: nftables "
               "reads it as a wildcard)"},
      {.name = "action",
       .type = ParamType::Enum,
       .default_value = "drop",
       .help = "drop (silently) or reject (answer with ICMP port unreachable)",
       .choices = {"drop", "reject"}},
  };
  spec.facts = {
      {"changed", "whether the rule was added now (false: this step's rule was already there)"},
      {"table", "the run's nftables table, `inet rxerun-SCENARIO`"},
      {"chain", "the base chain, named after its hook"},
      {"rule", "the rule as nft prints it"},
      {"handle", "the rule's nftables handle"},
      {.name = "packets",
       .help = "packets the rule counted: 0 when added; a `revert` reports the final count",
       .when = kAtStep | kAtRevert},
      {.name = "bytes",
       .help = "bytes the rule counted: 0 when added; a `revert` reports the final count",
       .when = kAtStep | kAtRevert},
      {"warning", "set when the rule is known to hurt more than the test (UDP 4791 on output)"},
  };
  spec.example =
      "- name: no-roce\n"
      "  block: {proto: udp, port: 4791, hook: input}\n"
      "- revert: no-roce\n"
      "  expect: {packets: \">= 0\"}   # the count the rule reached\n";
  spec.validate = validate_block;
  Kind kind{std::move(spec), run_block, undo_block, {}, preclean_block};
  kind.picture = picture_block;
  return kind;
}

namespace {

// Names the step, so that undo finds the rule again in a later process (the
// handle is known only after the rule exists, too late for the journal).
std::string comment_for(const std::string& step) {
  std::string c = "rxerun step " + step;
  if (c.size() > 127) c.resize(127);  // NFT_USERDATA_MAXLEN is 256; comments are kept short
  return c;
}

bool has_ports(const std::string& proto) {
  return proto == "udp" || proto == "tcp" || proto == "sctp" || proto == "dccp" || proto == "udplite";
}

std::optional<std::string> port_problem(const std::string& proto) {
  if (proto.empty()) return "`port` needs `proto` (udp, tcp, sctp, dccp or udplite)";
  if (!has_ports(proto)) return proto + " has no ports: leave out `port`, or use udp, tcp, sctp, dccp or udplite";
  return std::nullopt;
}

// What an undo may touch: the run's own table, a base chain of a hook this
// kind uses, a rule with a comment this kind writes (the text goes into nft
// commands and is matched against listings, never quoted by a shell).
void check_names(JournalArgs& a, const std::string& scenario, const std::string& family, const std::string& table,
                 const std::string& chain, const std::string& comment) {
  if (!a.ok()) return;
  if (family != kFamily) a.refuse("family", "inet, the family of the run's table");
  if (table != table_for(scenario)) a.refuse("table", "this scenario's table, " + table_for(scenario));
  if (chain != "input" && chain != "output" && chain != "forward") a.refuse("chain", "input, output or forward");
  const bool plain = std::none_of(comment.begin(), comment.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"' || c == '\\';
  });
  if (comment.rfind("rxerun step ", 0) != 0 || comment.size() > 127 || !plain)
    a.refuse("comment", "a comment this kind writes (rxerun step NAME)");
}

// The rule the step added (or found) in the run's table, known by its
// comment; the namespace it is in (its identity).
struct BlockRecord {
  static constexpr std::string_view kOp = "block";
  std::string family;
  std::string table;
  std::string chain;  // the hook's base chain
  std::string comment;
  nlohmann::json identity;  // {"netns_inode"}

  nlohmann::json to_args() const {
    return {{"op", kOp},      {"family", family},   {"table", table},
            {"chain", chain}, {"comment", comment}, {"identity", identity}};
  }
  static Result<BlockRecord> read(JournalArgs& a) {
    BlockRecord r{a.has("family") ? a.text("family") : kFamily, a.text("table"), a.text("chain"), a.text("comment"),
                  a.identity()};
    check_names(a, a.scenario(), r.family, r.table, r.chain, r.comment);
    if (!a.ok()) return a.error();
    return r;
  }
};

StepResult run_block(const Params& params, StepContext& ctx) {
  const std::string proto = params.has("proto") ? params.str("proto") : "";
  const std::string hook = params.str("hook");
  const std::string action = params.str("action");
  const std::string dev = params.has("dev") ? params.str("dev") : "";
  const bool has_port = params.has("port");

  if (auto why = has_port ? port_problem(proto) : std::nullopt)
    return StepResult::error(params.where("port") + ": " + *why);
  if (proto.empty() && dev.empty())
    return StepResult::error(params.where("") +
                             ": block needs `proto` or `dev` (or both): blocking everything "
                             "on a hook would cut the host off");
  if (dev.find_first_of("\"\\") != std::string::npos)
    return StepResult::error(params.where("dev") +
                             ": an interface name with a quote or backslash cannot be "
                             "matched by nftables");

  const std::string table = table_for(ctx.scenario());
  sys::NftRule rule{.chain = hook, .proto = proto, .verdict = action, .comment = comment_for(ctx.step().name)};
  (hook == "output" ? rule.oifname : rule.iifname) = dev;
  if (has_port) rule.dport = static_cast<std::uint16_t>(params.integer("port"));
  const std::string& comment = rule.comment;
  const std::string rule_text = sys::nft_rule_text(rule);

  StepResult result;
  if (hook == "output" && has_port && params.integer("port") == 4791 && (proto == "udp" || proto == "udplite")) {
    result.hints.push_back(
        "dropping UDP 4791 on the output hook wedges rxe: it retries the send about 100,000 times a second, a CPU "
        "spins and rping hangs (a killed client stays a zombie) until the rule goes; block on the input hook of "
        "the receiving side instead");
  }

  auto& nft = ctx.sys().nft;
  RXERUN_TRY_ASSIGN(const auto listed, nft.table(kFamily, table));
  const sys::NftTable view = listed.value_or(sys::NftTable{});

  const std::string where = std::string(kFamily) + " " + table + " " + hook;
  auto found = rules_with(view, hook, comment);
  const bool changed = found.empty();
  RXERUN_TRY_ASSIGN(const auto identity, netns_identity(ctx.sys()));
  // The table is the run's own: whatever carries this step's comment there
  // goes at cleanup, found or made now.
  RXERUN_TRY(ctx.will_change(
      BlockRecord{kFamily, table, hook, comment, identity}.to_args(),
      "delete the nftables rule '" + comment + "' from " + where + " (then the chain and the table when empty)",
      ctx.in_netns()));

  std::uint64_t handle = 0;
  Counted count;
  if (!changed) {
    handle = found.front()->handle;
    count = counted(found);
  } else {
    if (!listed) RXERUN_TRY(nft.add_table(kFamily, table));
    if (!has_chain(view, hook)) RXERUN_TRY(nft.add_base_chain(kFamily, table, hook));
    auto added = nft.add_rule(kFamily, table, rule);
    if (!added && added.error().code == EINTR) {
      // Interrupted: the kernel may have added it. Look before adding again.
      RXERUN_TRY_ASSIGN(const auto now, nft.table(kFamily, table));
      auto there = rules_with(now.value_or(sys::NftTable{}), hook, comment);
      added = there.empty() ? nft.add_rule(kFamily, table, rule) : Result<std::uint64_t>(there.front()->handle);
    }
    RXERUN_TRY_ASSIGN(handle, std::move(added));
  }

  result.outcome = Outcome::Ok;
  result.facts = {{"changed", changed},
                  {"table", std::string(kFamily) + " " + table},
                  {"chain", hook},
                  {"rule", rule_text},
                  {"packets", count.packets},
                  {"bytes", count.bytes}};
  if (handle) result.facts["handle"] = handle;
  if (!result.hints.empty()) result.facts["warning"] = result.hints.front();
  return result;
}

Result<nlohmann::json> undo_block(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<BlockRecord>(args, ctx));
  const std::string& family = record.family;
  const std::string& table = record.table;
  const std::string& chain = record.chain;
  const std::string& comment = record.comment;
  RXERUN_TRY(check_netns(ctx.sys(), record.identity, ctx.netns()));
  auto& nft = ctx.sys().nft;

  RXERUN_TRY_ASSIGN(const auto listed, nft.table(family, table));
  if (!listed) return nlohmann::json::object();  // the table is gone: nothing left to undo
  const sys::NftTable& view = *listed;

  nlohmann::json facts = nlohmann::json::object();
  auto mine = rules_with(view, chain, comment);
  for (const auto* rule : mine) {
    auto r = nft.delete_rule(family, table, chain, rule->handle);
    if (!r && !is_enoent(r.error())) return r.error();
  }
  if (!mine.empty()) {
    const Counted c = counted(mine);
    facts = {{"packets", c.packets}, {"bytes", c.bytes}};
  }

  // Other steps' rules keep the chain; other chains (or anything else) keep the table.
  const bool chain_empty = rules_in(view, chain) == mine.size();
  bool chain_gone = !has_chain(view, chain);
  if (!chain_gone && chain_empty) {
    auto r = nft.delete_chain(family, table, chain);
    if (!r && !is_enoent(r.error())) return r.error();
    chain_gone = true;
  }
  const std::size_t chains_left = view.chains.size() - (has_chain(view, chain) && chain_gone ? 1 : 0);
  if (chain_gone && chains_left == 0 && view.others == 0) {
    auto r = nft.delete_table(family, table);
    if (!r && !is_enoent(r.error())) return r.error();
  }
  return facts;
}

// The run's table belongs to the run by its name: a crashed run's leftover
// goes whole.
Result<std::vector<std::string>> preclean_block(UndoContext& ctx) {
  const std::string table = table_for(ctx.scenario());
  auto& nft = ctx.sys().nft;
  RXERUN_TRY_ASSIGN(const auto listed, nft.table(kFamily, table));
  if (!listed) return std::vector<std::string>{};
  auto r = nft.delete_table(kFamily, table);
  if (!r && !is_enoent(r.error())) return r.error();
  return std::vector<std::string>{"nftables table " + std::string(kFamily) + " " + table};
}

}  // namespace

namespace {

// A fault on the interface it names, or on its whole namespace: what it
// matches, where and what it does.
void picture_block(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  PictureFault f{.kind = "block", .step = step.name, .place = place_of(step), .dev = picture_param(p, "dev")};
  const std::string proto = picture_param(p, "proto"), port = picture_param(p, "port");
  f.details.push_back(proto.empty() ? "all packets" : port.empty() ? proto : proto + " dport " + port);
  f.details.push_back("hook " + picture_param(p, "hook") + ": " + picture_param(p, "action"));
  picture.add_fault(std::move(f));
}

}  // namespace

}  // namespace rxerun::steps
