// sysctl: set a kernel parameter under net. (rp_filter, accept_local, ...).
// Reads it first, writes only when it differs, and its undo writes back the
// value it found. Only the network tree: those keys are per namespace, so a
// step with `netns:` changes nothing of the host's.
//
// A key is shared with every other user of the namespace (two labs may set
// one rp_filter): the undo writes the value found back only while the key
// still holds the value this step wrote. Changed since by somebody else, it
// is left, and the undo fails naming the key, the value now, the value
// written and the value found. The journal also records the namespace's
// inode and, for a per-interface key, the interface's index
// (steps/common/identity.h): a namesake made since is left alone.

#include <charconv>
#include <sstream>
#include <string>
#include <string_view>

#include "base/try.h"
#include "engine/diag.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "engine/vars.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Why `key` is not a key this step may write, or "" when it is one.
std::string key_problem(const std::string& key) {
  const bool slashes = key.find('/') != std::string::npos;
  const char sep = slashes ? '/' : '.';
  const std::string prefix = std::string("net") + sep;
  if (key.rfind(prefix, 0) != 0)
    return "only keys under net. can be set ('" + excerpt(key) +
           "' is not one): rxerun changes network settings, which a namespace keeps to itself";
  std::size_t start = 0;
  while (start <= key.size()) {
    auto end = key.find(sep, start);
    if (end == std::string::npos) end = key.size();
    const std::string_view part(key.data() + start, end - start);
    if (part.empty() || part == "." || part == "..")
      return "'" + excerpt(key) + "' is not a sysctl key: it has an empty, '.' or '..' part";
    start = end + 1;
  }
  if (key.find_first_of(" \t\n\r") != std::string::npos)
    return "'" + excerpt(key) + "' is not a sysctl key: it holds whitespace";
  return {};
}

// Equal for the kernel: fields separated by any run of whitespace
// ("4096 131072 6291456" reads back with tabs), and a decimal number in any
// spelling the kernel reads back as its digits ("01", "+1" are "1").
std::string normalized(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) {
    long long n = 0;
    const char* begin = word.data() + (word.size() > 1 && word[0] == '+' ? 1 : 0);
    const char* end = word.data() + word.size();
    if (auto [p, ec] = std::from_chars(begin, end, n); ec == std::errc() && p == end) word = std::to_string(n);
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

// The interface of a per-interface key (net.ipv4.conf.DEV.rp_filter,
// net/ipv6/neigh/DEV/...); "" for every other key.
std::string interface_of(const std::string& key) {
  const char sep = key.find('/') != std::string::npos ? '/' : '.';
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (auto end = key.find(sep);; end = key.find(sep, start)) {
    parts.push_back(key.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (parts.size() == 5 && (parts[1] == "ipv4" || parts[1] == "ipv6") && (parts[2] == "conf" || parts[2] == "neigh") &&
      parts[3] != "all" && parts[3] != "default")
    return parts[3];
  return {};
}

// Defined after the spec below, which names them.
StepResult run_sysctl(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_sysctl(const nlohmann::json& args, UndoContext& ctx);
void picture_sysctl(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

// A key outside net. is refused when the scenario is loaded, not when the
// step runs.
void validate_sysctl(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  if (!params.contains("key") || !params["key"].is_string() || has_step_references(params["key"])) return;
  if (std::string why = key_problem(params["key"].get<std::string>()); !why.empty()) complain("key", std::move(why));
}

Kind sysctl_kind() {
  KindSpec spec;
  spec.name = "sysctl";
  spec.needs = {Need::NetAdmin};
  spec.validate = validate_sysctl;
  spec.summary = "Set a network kernel parameter (a key under net.); undo restores the value found.";
  spec.params = {
      {.name = "key",
       .type = ParamType::String,
       .required = true,
       .help = "the key as sysctl(8) spells it, under net.: net.ipv4.conf.vB.rp_filter (or with '/' separators, "
               "for interface names that hold a dot: net/ipv4/conf/eth0.100/rp_filter)"},
      {.name = "value",
       .type = ParamType::Scalar,
       .required = true,
       .help = "the value to write: 0, 1, \"4096 87380\""},
  };
  spec.facts = {
      {"before", "the value found"},
      {.name = "after", .help = "the value after the step", .when = kAtStep | kAtRevert},
      {"changed", "whether the step wrote the value"},
  };
  spec.example =
      "- sysctl: {key: net.ipv4.conf.all.rp_filter, value: 0}\n"
      "  expect: {after: 0}\n";
  Kind kind{std::move(spec), run_sysctl, undo_sysctl};
  kind.picture = picture_sysctl;
  return kind;
}

namespace {

// The value as the kernel reads it: YAML ints as digits, booleans as 1/0.
std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return v.dump();
}

// A per-interface key lives on its interface; every key under net. lives in
// its namespace.
Footprint footprint_of(const std::string& key, const StepContext& ctx) {
  const std::string dev = interface_of(key);
  return dev.empty() ? ctx.in_netns() : ctx.on_link(dev);
}

// What the key belongs to: the namespace, and the interface of a
// per-interface key when it exists.
Result<nlohmann::json> identity_of(const std::string& key, sys::System& sys) {
  const std::string dev = interface_of(key);
  if (!dev.empty()) {
    RXERUN_TRY_ASSIGN(const auto id, link_identity(sys, dev));
    if (!id.is_null()) return id;
  }
  return netns_identity(sys);
}

// The key the step wrote, the value found (to put back) and the value it
// wrote (to tell a change somebody made since), and what the key belongs to.
struct SysctlRecord {
  static constexpr std::string_view kOp = "sysctl";
  std::string key;
  std::string value;
  // Unset in an entry written before rxerun recorded what it wrote: the
  // value found is then put back whatever the value now.
  std::optional<std::string> wrote;
  nlohmann::json identity;  // identity_of()

  nlohmann::json to_args() const {
    nlohmann::json args = {{"op", kOp}, {"key", key}, {"value", value}, {"identity", identity}};
    if (wrote) args["wrote"] = *wrote;
    return args;
  }
  static Result<SysctlRecord> read(JournalArgs& a) {
    SysctlRecord r{a.text("key"), a.text("value")};
    if (a.has("wrote")) r.wrote = a.text("wrote");
    r.identity = a.identity();
    if (a.ok())
      if (auto why = key_problem(r.key); !why.empty()) a.refuse("key", "a key this kind may write (" + why + ")");
    if (!a.ok()) return a.error();
    return r;
  }
};

StepResult run_sysctl(const Params& params, StepContext& ctx) {
  const std::string key = params.str("key");
  if (auto why = key_problem(key); !why.empty()) return StepResult::error(params.where("key") + ": " + why);
  const std::string value = value_text(params.at("value"));
  auto& sysctl = ctx.sys().sysctl;

  RXERUN_TRY_ASSIGN(const std::string before, sysctl.read(key));
  if (normalized(before) == normalized(value))
    return StepResult::ok({{"before", before}, {"after", before}, {"changed", false}});

  RXERUN_TRY_ASSIGN(const auto identity, identity_of(key, ctx.sys()));
  const SysctlRecord record{key, before, value, identity};
  RXERUN_TRY(ctx.will_change(record.to_args(), "set " + key + " back to " + before, footprint_of(key, ctx)));
  RXERUN_TRY(sysctl.write(key, value));
  RXERUN_TRY_ASSIGN(const std::string after, sysctl.read(key));
  return StepResult::ok({{"before", before}, {"after", after}, {"changed", true}});
}

// Writes back the value found, while the key holds the value written (or
// already the value found: an undo interrupted after its write); a key that
// is gone (its interface was deleted) has nothing left to restore.
Result<nlohmann::json> undo_sysctl(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<SysctlRecord>(args, ctx));
  const std::string& key = record.key;
  const std::string& value = record.value;
  const nlohmann::json& recorded = record.identity;

  auto& sys = ctx.sys();
  RXERUN_TRY(check_netns(sys, recorded, ctx.netns()));
  if (const std::string dev = interface_of(key); !dev.empty() && recorded.contains("ifindex")) {
    RXERUN_TRY_ASSIGN(const Found found, check_link(sys, dev, recorded));
    if (found == Found::Gone) return nlohmann::json::object();
  }
  auto now = sys.sysctl.read(key);
  if (!now) {
    if (now.error().code == ENOENT) return nlohmann::json::object();
    return now.error();
  }
  if (normalized(*now) == normalized(value)) return nlohmann::json{{"after", *now}};
  if (record.wrote && normalized(*now) != normalized(*record.wrote))
    return make_error(key + " is " + excerpt(*now) + " now, not the " + excerpt(*record.wrote) +
                      " this run wrote (it was " + excerpt(value) +
                      " before the run): changed by somebody else since, so left as it is");
  RXERUN_TRY(sys.sysctl.write(key, value));
  return nlohmann::json{{"after", *now}};
}

}  // namespace

namespace {

// The interface a per-interface key names (net.ipv4.conf.vA.rp_filter,
// net/ipv6/conf/eth0.100/accept_ra); not all, default or a key of no interface.
void picture_sysctl(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  const std::string key = picture_param(p, "key");
  const bool slashes = key.find('/') != std::string::npos;
  const char sep = slashes ? '/' : '.';
  for (const char* family : {"ipv4", "ipv6"}) {
    const std::string prefix = std::string("net") + sep + family + sep + "conf" + sep;
    if (key.rfind(prefix, 0) != 0) continue;
    const auto end = key.find(sep, prefix.size());
    if (end == std::string::npos) return;
    const std::string dev = key.substr(prefix.size(), end - prefix.size());
    if (!dev.empty() && dev != "all" && dev != "default") picture.add_interface(place_of(step), dev);
  }
}

}  // namespace

}  // namespace rxerun::steps
