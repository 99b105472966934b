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

// The {"nftables": [...]} items of a listing; empty for null output.
const nlohmann::json& items_of(const nlohmann::json& listing) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (listing.is_object() && listing.contains("nftables") && listing["nftables"].is_array()) return listing["nftables"];
  return kEmpty;
}

struct Counted {
  long long packets = 0;
  long long bytes = 0;
};

Counted counter_of(const nlohmann::json& rule) {
  Counted c;
  if (!rule.contains("expr") || !rule["expr"].is_array()) return c;
  for (const auto& e : rule["expr"]) {
    if (!e.is_object() || !e.contains("counter") || !e["counter"].is_object()) continue;
    c.packets += e["counter"].value("packets", 0LL);
    c.bytes += e["counter"].value("bytes", 0LL);
  }
  return c;
}

// What a listing of the run's table holds.
struct TableView {
  bool exists = false;
  std::vector<std::string> chains;
  std::vector<nlohmann::json> rules;  // the "rule" objects
  int others = 0;                     // sets, maps, objects: anything not ours to reason about

  static TableView of(const nlohmann::json& listing) {
    TableView v;
    for (const auto& item : items_of(listing)) {
      if (!item.is_object() || item.empty()) continue;
      const std::string what = item.begin().key();
      if (what == "metainfo") continue;
      if (what == "table") {
        v.exists = true;
      } else if (what == "chain") {
        v.chains.push_back(item["chain"].value("name", ""));
      } else if (what == "rule") {
        v.rules.push_back(item["rule"]);
      } else {
        ++v.others;
      }
    }
    return v;
  }

  bool has_chain(const std::string& name) const {
    return std::find(chains.begin(), chains.end(), name) != chains.end();
  }
  std::vector<const nlohmann::json*> rules_with(const std::string& chain, const std::string& comment) const {
    std::vector<const nlohmann::json*> out;
    for (const auto& r : rules)
      if (r.value("chain", "") == chain && r.value("comment", "") == comment) out.push_back(&r);
    return out;
  }
  std::size_t rules_in(const std::string& chain) const {
    return std::count_if(rules.begin(), rules.end(),
                         [&](const nlohmann::json& r) { return r.value("chain", "") == chain; });
  }
};

// Lists the run's table; a table that is not there lists as empty.
Result<TableView> read_table(sys::Nft& nft, const std::string& table) {
  auto listed = nft.run(std::string("list table ") + kFamily + " " + table);
  if (!listed) {
    if (is_enoent(listed.error())) return TableView{};
    return listed.error();
  }
  return TableView::of(*listed);
}

// Defined after the spec below, which names them.
StepResult run_block(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_block(const nlohmann::json& args, UndoContext& ctx);
Result<std::vector<std::string>> preclean_block(UndoContext& ctx);

// nftables reads a `*` at the end of an interface name as a wildcard
// (`iifname "v*"` matches every v-interface): a block meant for one
// interface would hit others, which rxerun did not make.
void validate_block(const nlohmann::json& p, const KindSpec::Complaint& complain) {
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
      {"packets", "packets the rule counted: 0 when added; a `revert` reports the final count"},
      {"bytes", "bytes the rule counted: 0 when added; a `revert` reports the final count"},
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

// The nft match for the protocol: `meta l4proto` names it for both families
// of an inet table.
std::string proto_match(const std::string& proto) {
  if (proto == "icmpv6") return "meta l4proto ipv6-icmp";
  return "meta l4proto " + proto;
}

// The handle of the rule an `add rule` echoed back; 0 when not echoed (plan).
long long echoed_handle(const nlohmann::json& echo) {
  for (const auto& item : items_of(echo)) {
    const nlohmann::json* rule = nullptr;
    if (item.contains("add") && item["add"].contains("rule")) rule = &item["add"]["rule"];
    if (item.contains("rule")) rule = &item["rule"];
    if (rule && rule->contains("handle")) return (*rule)["handle"].get<long long>();
  }
  return 0;
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

  if (has_port && proto.empty())
    return StepResult::error(params.where("port") + ": `port` needs `proto` (udp, tcp, sctp, dccp or udplite)");
  if (proto.empty() && dev.empty())
    return StepResult::error(params.where("") +
                             ": block needs `proto` or `dev` (or both): blocking everything "
                             "on a hook would cut the host off");
  if (has_port && !has_ports(proto))
    return StepResult::error(params.where("port") + ": " + proto +
                             " has no ports: leave out `port`, or use udp, "
                             "tcp, sctp, dccp or udplite");
  if (dev.find_first_of("\"\\") != std::string::npos)
    return StepResult::error(params.where("dev") +
                             ": an interface name with a quote or backslash cannot be "
                             "matched by nftables");

  std::string match;
  if (!dev.empty()) match += std::string(hook == "output" ? "oifname" : "iifname") + " \"" + dev + "\" ";
  if (has_port) {
    match += proto + " dport " + std::to_string(params.integer("port")) + " ";
  } else if (!proto.empty()) {
    match += proto_match(proto) + " ";
  }
  const std::string table = table_for(ctx.scenario());
  const std::string comment = comment_for(ctx.step().name);
  const std::string rule_text = match + "counter " + action + " comment \"" + comment + "\"";

  StepResult result;
  if (hook == "output" && has_port && params.integer("port") == 4791 && (proto == "udp" || proto == "udplite")) {
    result.hints.push_back(
        "dropping UDP 4791 on the output hook wedges rxe: it retries the send about 100,000 times a second, a CPU "
        "spins and rping hangs (a killed client stays a zombie) until the rule goes; block on the input hook of "
        "the receiving side instead");
  }

  auto& nft = ctx.sys().nft;
  RXERUN_TRY_ASSIGN(const TableView view, read_table(nft, table));

  const std::string where = std::string(kFamily) + " " + table + " " + hook;
  auto found = view.rules_with(hook, comment);
  const bool changed = found.empty();
  RXERUN_TRY_ASSIGN(const auto identity, netns_identity(ctx.sys()));
  // The table is the run's own: whatever carries this step's comment there
  // goes at cleanup, found or made now.
  RXERUN_TRY(ctx.will_change(
      BlockRecord{kFamily, table, hook, comment, identity}.to_args(),
      "delete the nftables rule '" + comment + "' from " + where + " (then the chain and the table when empty)",
      ctx.in_netns()));

  long long handle = 0;
  Counted counted;
  if (!changed) {
    handle = found.front()->value("handle", 0LL);
    for (const auto* r : found) {
      Counted c = counter_of(*r);
      counted.packets += c.packets;
      counted.bytes += c.bytes;
    }
  } else {
    if (!view.exists) RXERUN_TRY(nft.run(std::string("add table ") + kFamily + " " + table));
    if (!view.has_chain(hook))
      RXERUN_TRY(nft.run("add chain " + where + " { type filter hook " + hook + " priority 0 ; policy accept ; }"));
    auto added = nft.run("add rule " + where + " " + rule_text);
    if (!added && added.error().code == EINTR) {
      // Interrupted: the kernel may have added it. Look before adding again.
      RXERUN_TRY_ASSIGN(const TableView now, read_table(nft, table));
      if (auto there = now.rules_with(hook, comment); !there.empty()) {
        handle = there.front()->value("handle", 0LL);
      } else {
        added = nft.run("add rule " + where + " " + rule_text);
      }
    }
    if (!handle) {
      if (!added) return StepResult::error(added.error());
      handle = echoed_handle(*added);
    }
  }

  result.outcome = Outcome::Ok;
  result.facts = {{"changed", changed},
                  {"table", std::string(kFamily) + " " + table},
                  {"chain", hook},
                  {"rule", rule_text},
                  {"packets", counted.packets},
                  {"bytes", counted.bytes}};
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

  auto listed = nft.run("list table " + family + " " + table);
  if (!listed) {
    if (is_enoent(listed.error())) return nlohmann::json::object();  // the table is gone: nothing left to undo
    return listed.error();
  }
  const TableView view = TableView::of(*listed);
  if (!view.exists) return nlohmann::json::object();

  nlohmann::json facts = nlohmann::json::object();
  auto mine = view.rules_with(chain, comment);
  Counted counted;
  for (const auto* rule : mine) {
    Counted c = counter_of(*rule);
    counted.packets += c.packets;
    counted.bytes += c.bytes;
    auto r = nft.run("delete rule " + family + " " + table + " " + chain + " handle " +
                     std::to_string(rule->value("handle", 0LL)));
    if (!r && !is_enoent(r.error())) return r.error();
  }
  if (!mine.empty()) facts = {{"packets", counted.packets}, {"bytes", counted.bytes}};

  // Other steps' rules keep the chain; other chains (or anything else) keep the table.
  const bool chain_empty = view.rules_in(chain) == mine.size();
  bool chain_gone = !view.has_chain(chain);
  if (!chain_gone && chain_empty) {
    auto r = nft.run("delete chain " + family + " " + table + " " + chain);
    if (!r && !is_enoent(r.error())) return r.error();
    chain_gone = true;
  }
  const std::size_t chains_left = view.chains.size() - (view.has_chain(chain) && chain_gone ? 1 : 0);
  if (chain_gone && chains_left == 0 && view.others == 0) {
    auto r = nft.run("delete table " + family + " " + table);
    if (!r && !is_enoent(r.error())) return r.error();
  }
  return facts;
}

// The run's table belongs to the run by its name: a crashed run's leftover
// goes whole.
Result<std::vector<std::string>> preclean_block(UndoContext& ctx) {
  const std::string table = table_for(ctx.scenario());
  auto& nft = ctx.sys().nft;
  RXERUN_TRY_ASSIGN(const TableView view, read_table(nft, table));
  if (!view.exists) return std::vector<std::string>{};
  auto r = nft.run(std::string("delete table ") + kFamily + " " + table);
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
