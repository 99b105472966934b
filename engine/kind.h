#pragma once
// A step kind declares its parameters, facts and an example as data (venom
// habit): the loader validates against it, `rxerun steps` prints it and
// `rxerun schema` is generated from it. One source of truth.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/result.h"

namespace rxerun {

class Params;
class StepContext;
class UndoContext;
struct StepResult;

enum class ParamType {
  String,       // any string
  Int,          // integer, optionally bounded by min/max
  Bool,         // true/false
  OnOff,        // on/off (or true/false); stored as bool
  Duration,     // "500ms", "5s"
  Size,         // bytes: an integer, or a string with a binary unit ("64MiB", "1GiB"); stored as an integer
  IfName,       // interface name: 1..15 bytes, no '/', no whitespace
  NetnsName,    // namespace name: a file name under /run/netns
  Address,      // IPv4 or IPv6 address
  Cidr,         // address/prefix
  AddressList,  // YAML list of addresses
  Enum,         // one of `choices`
  Scalar,       // string, number or bool, kept as written (sysctl values)
  StepRef,      // the name of an earlier step
  Object,       // a map with its own `fields`
  List,         // a YAML list; each item is checked as `fields[0]` says (a list of sizes, of names)
  Map,          // a mapping with keys of the user's (env, extract); each value checked as `fields[0]` says
};

std::string_view to_string(ParamType t);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::String;
  bool required = false;
  nlohmann::json default_value;  // null when none
  std::string help;
  std::vector<std::string> choices;  // Enum
  std::vector<ParamSpec> fields;     // Object; List and Map: one spec, for every item
  std::optional<long long> min;      // Int, Size (bytes)
  std::optional<long long> max;      // Int, Size (bytes)
};

struct FactSpec {
  std::string name;  // "sent", or a pattern such as "DEV.COUNTER"
  std::string help;
};

// What a kind needs from the machine it runs on; placement (host or lab VM)
// reads it before anything runs.
enum class Need {
  NetAdmin,  // root (CAP_NET_ADMIN): changes network settings
  Netem,     // the kernel's sch_netem
  RdmaRxe,   // the kernel's rdma_rxe
  RdmaSiw,   // the kernel's siw (soft-iWARP)
};

struct KindSpec {
  std::string name;
  std::string summary;
  std::vector<ParamSpec> params;    // a map of named parameters...
  std::optional<ParamSpec> scalar;  // ...or, instead, a single scalar value (revert: NAME)
  std::optional<ParamSpec> extra;   // type of any further key (offload features); unset: unknown keys are errors
  std::vector<FactSpec> facts;
  bool dynamic_facts = false;               // facts named at run time (DEV.COUNTER); matchers on any name allowed
  bool facts_of_target = false;             // revert: the facts are those of the step it reverts
  std::string example;                      // a YAML step, shown by `rxerun steps KIND`
  std::optional<Duration> default_timeout;  // unset: the engine's default; Duration::zero(): none
  std::vector<Need> needs;
  // Optional: rules that span parameters ("index or find, not both"), run
  // at load time after each parameter was checked on its own. It reports
  // each problem with the path of the parameter to point at ("" for the
  // step itself), so that it reads FILE:LINE:COL like every other error.
  using Complaint = std::function<void(const std::string& path, std::string message)>;
  std::function<void(const nlohmann::json& params, const Complaint& complain)> validate;
};

// What a kind does. `run` acts through ctx.sys() only; `undo` receives the
// arguments the kind recorded with ctx.will_change() and must be idempotent
// ("already gone" is success). It runs in a later process after a crash, so
// it may rely on nothing but those arguments. It returns the facts observed
// just before undoing (a fault's final counters), which `revert` reports.
struct Kind {
  KindSpec spec;
  std::function<StepResult(const Params&, StepContext&)> run;
  std::function<Result<nlohmann::json>(const nlohmann::json& args, UndoContext&)> undo;

  // Optional. Undoes several of this kind's changes at once (the kernel
  // deletes many links in one grace period where one at a time costs one
  // each). Cleanup gathers such undos and runs them after the others: legal
  // because nothing a later undo does needs the thing to be gone. When the
  // batch fails, cleanup falls back to undo() one by one.
  std::function<Result<void>(const std::vector<nlohmann::json>& args, UndoContext&)> undo_batch;

  // Optional. Removes leftovers of a crashed run that the journal does not
  // know (things that carry the scenario's mark); run by preclean and by
  // `rxerun cleanup` in rxerun's own namespace and in every namespace the
  // scenario names. Returns what it removed, in words.
  std::function<Result<std::vector<std::string>>(UndoContext&)> preclean;
};

}  // namespace rxerun
