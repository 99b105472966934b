// netem: loss, delay, jitter, duplication, corruption, reordering and a rate
// limit on an interface, as a netem root qdisc (`tc qdisc add dev D root
// netem ...`). Undo removes it and reports its final statistics, so that a
// `revert` can prove what the fault hit.
//
// Spelling of the values (this parser's, documented in the parameters):
// - percentages: a number (5, 0.5) or a string with or without '%' ("5%"), 0..100;
// - delay, jitter: durations ("10ms", "1s");
// - rate: a number with tc's units: bit, kbit, mbit, gbit, tbit (powers of
//   1000), kibit, mibit, gibit, tibit (powers of 1024), and bps, kbps, mbps,
//   gbps, tbps, kibps, mibps, gibps, tibps for bytes per second; a bare number
//   is bits per second.
//
// Only a root qdisc the kernel attached by default is replaced; one somebody
// added is not rxerun's, and the step stops. A kernel without netem stops
// the step before it changes anything, naming the lab VM. Undo acts only on
// the interface the step changed (its index and namespace inode are in the
// journal, steps/common/identity.h): an interface made since under the name keeps
// its qdisc, and the undo reports it.

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "base/strings.h"
#include "base/try.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "engine/vars.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Root qdiscs the kernel attaches by itself (handle 0; net.core.default_qdisc).
bool is_default_qdisc(const std::string& kind) {
  static const char* const kDefaults[] = {"noqueue", "noop",  "pfifo_fast", "mq",   "fq_codel", "fq",
                                          "sfq",     "pfifo", "bfifo",      "cake", "fq_pie"};
  for (const char* d : kDefaults)
    if (kind == d) return true;
  return false;
}

nlohmann::json stats_facts(const sys::QdiscStats& s) {
  return {{"packets", s.packets},
          {"bytes", s.bytes},
          {"drops", s.drops},
          {"overlimits", s.overlimits},
          {"requeues", s.requeues}};
}

// Defined after the spec below, which names them.
StepResult run_netem(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_netem(const nlohmann::json& args, UndoContext& ctx);
void picture_netem(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

namespace {
std::optional<double> number_with_unit(const std::string& text, std::string* unit);
}  // namespace

// Percentages written as they are (not from {{steps.X.Y}}) are checked when
// the scenario is loaded: a loss of 250 % is a mistake of the author's.
void validate_netem(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  // netem varies, and reorders around, a delay: without one there is nothing to vary.
  for (const char* key : {"jitter", "reorder"})
    if (params.contains(key) && !params.contains("delay"))
      complain(key, fmt::format("{} needs delay: netem {} the delay it adds (add `delay: 10ms`)", key,
                                std::string_view(key) == "jitter" ? "varies" : "sends packets ahead of"));
  for (const char* key : {"loss", "duplicate", "corrupt", "reorder"}) {
    if (!params.contains(key) || has_step_references(params[key])) continue;
    const auto& v = params[key];
    std::optional<double> pct;
    if (v.is_number()) {
      pct = v.get<double>();
    } else if (v.is_string()) {
      std::string unit;
      pct = number_with_unit(v.get<std::string>(), &unit);
      if (pct && !(unit.empty() || unit == "%")) pct.reset();
    }
    if (!pct)
      complain(key, fmt::format("{} is a percentage: 5, 0.5 or \"5%\"", key));
    else if (*pct < 0 || *pct > 100)
      complain(key, fmt::format("{} is a percentage between 0 and 100, got {}", key,
                                v.is_string() ? v.get<std::string>() : v.dump()));
  }
}

Kind netem_kind() {
  KindSpec spec;
  spec.name = "netem";
  spec.needs = {Need::NetAdmin, Need::Netem};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "dev"}};
  spec.summary =
      "Loss, delay, jitter, duplication, corruption, reordering or a rate limit on an interface (a netem root qdisc); "
      "undo removes it and reports its statistics.";
  const std::string pct = " (a percentage: 5, 0.5 or \"5%\")";
  spec.params = {
      {.name = "dev", .type = ParamType::IfName, .required = true, .help = "the interface whose egress is disturbed"},
      {.name = "loss", .type = ParamType::Scalar, .help = "share of packets dropped" + pct},
      {.name = "delay", .type = ParamType::Duration, .help = "delay added to every packet: 10ms, 1s"},
      {.name = "jitter", .type = ParamType::Duration, .help = "random variation of the delay (needs delay): 2ms"},
      {.name = "duplicate", .type = ParamType::Scalar, .help = "share of packets sent twice" + pct},
      {.name = "corrupt", .type = ParamType::Scalar, .help = "share of packets with one bit flipped" + pct},
      {.name = "reorder",
       .type = ParamType::Scalar,
       .help = "share of packets sent at once, ahead of the delayed others (needs delay)" + pct},
      {.name = "rate",
       .type = ParamType::String,
       .help = "egress rate limit with tc's units: 100kbit, 1mbit, 1gbit (bits/s), 10mbps (bytes/s); a bare number "
               "is bits/s"},
  };
  spec.facts = {
      {"changed", "whether the step added the qdisc"},
      {.name = "packets",
       .help = "packets the qdisc has sent (after the step: 0; on revert: the total)",
       .when = kAtStep | kAtRevert},
      {.name = "bytes", .help = "bytes the qdisc has sent", .when = kAtStep | kAtRevert},
      {.name = "drops", .help = "packets the qdisc dropped (netem's loss shows here)", .when = kAtStep | kAtRevert},
      {.name = "overlimits", .help = "packets held back by the rate limit", .when = kAtStep | kAtRevert},
      {.name = "requeues", .help = "packets requeued", .when = kAtStep | kAtRevert},
  };
  spec.example =
      "- veth: {name: vB, peer: vA}\n"
      "- name: lossy\n"
      "  netem: {dev: vB, loss: 30%, delay: 10ms, jitter: 2ms, rate: 10mbit}\n"
      "- name: lift\n"
      "  revert: lossy\n";
  spec.validate = validate_netem;
  Kind kind{std::move(spec), run_netem, undo_netem};
  kind.picture = picture_netem;
  return kind;
}

namespace {

// A number followed by `suffix` (optional) and nothing else.
std::optional<double> number_with_unit(const std::string& text, std::string* unit) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (end == begin || errno != 0 || !std::isfinite(v)) return std::nullopt;
  std::string rest(trim(end));
  for (auto& c : rest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  *unit = rest;
  return v;
}

Result<double> percent(const Params& params, const std::string& key) {
  const auto& v = params.at(key);
  double pct = 0;
  if (v.is_number()) {
    pct = v.get<double>();
  } else {
    std::string unit;
    auto n = number_with_unit(params.str(key), &unit);
    if (!n || !(unit.empty() || unit == "%"))
      return make_error(params.where(key) + ": " + key + " is a percentage: 5, 0.5 or \"5%\" (got '" + params.str(key) +
                        "')");
    pct = *n;
  }
  if (pct < 0 || pct > 100) return make_error(params.where(key) + ": " + key + " must lie between 0 and 100 %");
  return pct;
}

// tc's rate units, as bytes per second.
Result<std::uint64_t> rate(const Params& params) {
  std::string unit;
  auto n = number_with_unit(params.str("rate"), &unit);
  struct Unit {
    const char* name;
    double bytes;  // bytes per second for one of it
  };
  static const Unit kUnits[] = {
      {"", 1 / 8.0},
      {"bit", 1 / 8.0},
      {"kbit", 1e3 / 8},
      {"mbit", 1e6 / 8},
      {"gbit", 1e9 / 8},
      {"tbit", 1e12 / 8},
      {"kibit", 1024.0 / 8},
      {"mibit", 1048576.0 / 8},
      {"gibit", 1073741824.0 / 8},
      {"tibit", 1099511627776.0 / 8},
      {"bps", 1},
      {"kbps", 1e3},
      {"mbps", 1e6},
      {"gbps", 1e9},
      {"tbps", 1e12},
      {"kibps", 1024.0},
      {"mibps", 1048576.0},
      {"gibps", 1073741824.0},
      {"tibps", 1099511627776.0},
  };
  if (n && *n > 0) {
    for (const auto& u : kUnits) {
      if (unit != u.name) continue;
      const double bytes = std::round(*n * u.bytes);
      if (bytes < 1 || bytes > 1.8e19) break;
      return static_cast<std::uint64_t>(bytes);
    }
  }
  return make_error(params.where("rate") +
                    ": rate is a positive number with a unit as tc spells it: 100kbit, 1mbit, "
                    "1gbit, 10mbps (bytes), ... (got '" +
                    params.str("rate") + "')");
}

Result<sys::NetemSpec> spec_of(const Params& params) {
  sys::NetemSpec spec;
  struct Pct {
    const char* key;
    std::optional<double> sys::NetemSpec::*field;
  };
  static const Pct kPcts[] = {{"loss", &sys::NetemSpec::loss_pct},
                              {"duplicate", &sys::NetemSpec::duplicate_pct},
                              {"corrupt", &sys::NetemSpec::corrupt_pct},
                              {"reorder", &sys::NetemSpec::reorder_pct}};
  for (const auto& p : kPcts) {
    if (!params.has(p.key)) continue;
    RXERUN_TRY_ASSIGN(spec.*(p.field), percent(params, p.key));
  }
  if (params.has("delay")) spec.delay = params.duration("delay");
  if (params.has("jitter")) spec.jitter = params.duration("jitter");
  if (params.has("rate")) {
    RXERUN_TRY_ASSIGN(spec.rate_bytes_per_s, rate(params));
  }
  const bool any = spec.loss_pct || spec.duplicate_pct || spec.corrupt_pct || spec.reorder_pct || spec.delay ||
                   spec.jitter || spec.rate_bytes_per_s;
  if (!any)
    return make_error(params.where("dev") +
                      ": netem needs at least one of loss, delay, jitter, duplicate, corrupt, reorder, rate");
  const bool has_delay = spec.delay && spec.delay->count() > 0;
  if (spec.jitter && !has_delay) return make_error(params.where("jitter") + ": jitter needs a delay");
  if (spec.reorder_pct && !has_delay)
    return make_error(params.where("reorder") +
                      ": reorder needs a delay (netem reorders by sending some packets "
                      "at once and delaying the others)");
  return spec;
}

// The netem qdisc the step put at the root of the interface (its identity,
// when it exists).
struct NetemRecord {
  static constexpr std::string_view kOp = "netem";
  std::string dev;
  nlohmann::json identity;  // null when not recorded

  nlohmann::json to_args() const {
    nlohmann::json args = {{"op", kOp}, {"dev", dev}};
    if (!identity.is_null()) args["identity"] = identity;
    return args;
  }
  static Result<NetemRecord> read(JournalArgs& a) {
    NetemRecord r{a.ifname("dev"), a.identity()};
    if (!a.ok()) return a.error();
    return r;
  }
};

StepResult run_netem(const Params& params, StepContext& ctx) {
  const std::string dev = params.str("dev");
  RXERUN_TRY_ASSIGN(const sys::NetemSpec spec, spec_of(params));
  auto& qdiscs = ctx.sys().qdiscs;

  RXERUN_TRY_ASSIGN(const bool available, qdiscs.netem_available());
  if (!available) {
    StepResult r = StepResult::error(
        "netem is not available in this kernel (CONFIG_NET_SCH_NETEM); run the scenario in the lab VM: rxerun --vm "
        "...");
    r.hints.push_back("rxerun vm setup prepares the lab VM once; rxerun --vm SCENARIO runs the scenario there");
    return r;
  }
  auto root = qdiscs.root_kind(dev);
  if (!root) {
    if (root.error().code == ENODEV) return StepResult::error("no interface " + dev + " (create it first)");
    return StepResult::error(root.error());
  }
  if (*root && !is_default_qdisc(**root))
    return StepResult::error(
        dev + " has a root qdisc '" + **root +
        "' that rxerun did not add; rxerun will not replace it (remove it with `tc qdisc del dev " + dev +
        " root` if it is a leftover, or use another interface)");

  RXERUN_TRY_ASSIGN(const auto identity, link_identity(ctx.sys(), dev));
  RXERUN_TRY(ctx.will_change(NetemRecord{dev, identity}.to_args(), "remove netem from " + dev, ctx.on_link(dev)));
  if (auto r = qdiscs.add_netem(dev, spec); !r) {
    if (r.error().code == EEXIST)
      return StepResult::error(dev + " has a root qdisc that somebody added (" + r.error().message +
                               "); rxerun will not replace it");
    return StepResult::error(r.error());
  }
  RXERUN_TRY_ASSIGN(const auto stats, qdiscs.root_stats(dev));
  nlohmann::json facts = stats_facts(stats);
  facts["changed"] = true;
  return StepResult::ok(facts);
}

// Removes the root qdisc when it is a netem; reports its last statistics. A
// default root means it is gone already; any other kind is not rxerun's.
Result<nlohmann::json> undo_netem(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<NetemRecord>(args, ctx));
  const std::string& dev = record.dev;
  if (!record.identity.is_null()) {
    RXERUN_TRY_ASSIGN(const Found found, check_link(ctx.sys(), dev, record.identity));
    if (found == Found::Gone) return nlohmann::json::object();  // the interface went, and its qdisc with it
  }
  auto& qdiscs = ctx.sys().qdiscs;
  auto root = qdiscs.root_kind(dev);
  if (!root) {
    if (root.error().code == ENODEV) return nlohmann::json::object();  // the interface went, and its qdisc with it
    return root.error();
  }
  if (!*root || is_default_qdisc(**root)) return nlohmann::json::object();
  if (**root != "netem")
    return make_error("the root qdisc of " + dev + " is '" + **root + "', not rxerun's netem: left alone");
  nlohmann::json facts = nlohmann::json::object();
  if (auto stats = qdiscs.root_stats(dev)) facts = stats_facts(*stats);
  if (auto r = qdiscs.remove_root(dev); !r && r.error().code != ENOENT && r.error().code != ENODEV) return r.error();
  return facts;
}

}  // namespace

namespace {

// A fault on the interface's egress: each setting the step gives, as written.
void picture_netem(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  PictureFault f{.kind = "netem", .step = step.name, .place = place_of(step), .dev = picture_param(p, "dev")};
  auto percent = [](std::string v) { return v.empty() || v.back() == '%' ? v : v + "%"; };
  for (const char* key : {"loss", "duplicate", "corrupt", "reorder"})
    if (const std::string v = picture_param(p, key); !v.empty()) f.details.push_back(key + (" " + percent(v)));
  if (const std::string delay = picture_param(p, "delay"); !delay.empty()) {
    const std::string jitter = picture_param(p, "jitter");
    f.details.push_back("delay " + delay + (jitter.empty() ? "" : " jitter " + jitter));
  }
  if (const std::string rate = picture_param(p, "rate"); !rate.empty()) f.details.push_back("rate " + rate);
  f.details.push_back("egress");
  picture.add_fault(std::move(f));
}

}  // namespace

}  // namespace rxerun::steps
