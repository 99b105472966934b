// sysctl: set a kernel parameter under net. (rp_filter, accept_local, ...).
// Reads it first, writes only when it differs, and its undo writes back the
// value it found. Only the network tree: those keys are per namespace, so a
// step with `netns:` changes nothing of the host's.

#include <sstream>
#include <string>
#include <string_view>

#include "engine/diag.h"
#include "engine/step.h"
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

// The value as the kernel reads it: YAML ints as digits, booleans as 1/0.
std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return v.dump();
}

// Equal for the kernel: fields separated by any run of whitespace
// ("4096 131072 6291456" reads back with tabs).
std::string normalized(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

// A per-interface key (net.ipv4.conf.DEV.rp_filter, net/ipv6/neigh/DEV/...)
// lives on its interface; every key under net. lives in its namespace.
Footprint footprint_of(const std::string& key, const StepContext& ctx) {
  const char sep = key.find('/') != std::string::npos ? '/' : '.';
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (auto end = key.find(sep); ; end = key.find(sep, start)) {
    parts.push_back(key.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (parts.size() == 5 && (parts[1] == "ipv4" || parts[1] == "ipv6") && (parts[2] == "conf" || parts[2] == "neigh") &&
      parts[3] != "all" && parts[3] != "default")
    return ctx.on_link(parts[3]);
  return ctx.in_netns();
}

StepResult run_sysctl(const Params& params, StepContext& ctx) {
  const std::string key = params.str("key");
  if (auto why = key_problem(key); !why.empty()) return StepResult::error(params.where("key") + ": " + why);
  const std::string value = value_text(params.at("value"));
  auto& sysctl = ctx.sys().sysctl;

  auto before = sysctl.read(key);
  if (!before) return StepResult::error(before.error());
  if (normalized(*before) == normalized(value))
    return StepResult::ok({{"before", *before}, {"after", *before}, {"changed", false}});

  if (auto r = ctx.will_change({{"key", key}, {"value", *before}}, "set " + key + " back to " + *before,
                               footprint_of(key, ctx));
      !r)
    return StepResult::error(r.error());
  if (auto r = sysctl.write(key, value); !r) return StepResult::error(r.error());
  auto after = sysctl.read(key);
  if (!after) return StepResult::error(after.error());
  return StepResult::ok({{"before", *before}, {"after", *after}, {"changed", true}});
}

// Writes back the value found; a key that is gone (its interface was
// deleted) has nothing left to restore.
Result<nlohmann::json> undo_sysctl(const nlohmann::json& args, UndoContext& ctx) {
  const std::string key = args.at("key").get<std::string>();
  const std::string value = args.at("value").get<std::string>();
  auto& sysctl = ctx.sys().sysctl;
  auto now = sysctl.read(key);
  if (!now) {
    if (now.error().code == ENOENT) return nlohmann::json::object();
    return now.error();
  }
  if (normalized(*now) != normalized(value))
    if (auto r = sysctl.write(key, value); !r) return r.error();
  return nlohmann::json{{"after", *now}};
}

}  // namespace

Kind sysctl_kind() {
  KindSpec spec;
  spec.name = "sysctl";
  spec.needs = {Need::NetAdmin};
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
      {"after", "the value after the step"},
      {"changed", "whether the step wrote the value"},
  };
  spec.example =
      "- sysctl: {key: net.ipv4.conf.all.rp_filter, value: 0}\n"
      "  expect: {after: 0}\n";
  return Kind{std::move(spec), run_sysctl, undo_sysctl};
}

}  // namespace rxerun::steps
