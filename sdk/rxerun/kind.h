#pragma once
// rxerun plugin SDK. A step kind declares its parameters, facts and an
// example as data: the loader checks a scenario against it (FILE:LINE:COL
// errors), `rxerun steps` prints it and `rxerun schema` is generated from it.
// A step returns a StepResult: an outcome, facts, and a message when it did
// not succeed. Built-in kinds and plugin kinds share these declarations.

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rxerun/duration.h"
#include "rxerun/result.h"

namespace rxerun {

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

// How a step ended: it did what it does (Ok), it ran and what it checks did
// not hold (Fail), it ran out of time (Timeout), it could not run (Error:
// permission, a missing module).
enum class Outcome { Ok, Fail, Timeout, Error };

struct StepResult {
  Outcome outcome = Outcome::Ok;
  nlohmann::json facts = nlohmann::json::object();
  std::string message;  // one line: why it failed or erred
  // Likely causes of a failure; on a step that succeeded, warnings. Both are
  // shown under the step.
  std::vector<std::string> hints;

  static StepResult ok(nlohmann::json facts = nlohmann::json::object()) {
    return {Outcome::Ok, std::move(facts), {}, {}};
  }
  static StepResult fail(std::string message, nlohmann::json facts = nlohmann::json::object()) {
    return {Outcome::Fail, std::move(facts), std::move(message), {}};
  }
  static StepResult timeout(std::string message, nlohmann::json facts = nlohmann::json::object()) {
    return {Outcome::Timeout, std::move(facts), std::move(message), {}};
  }
  static StepResult error(std::string message) {
    return {Outcome::Error, nlohmann::json::object(), std::move(message), {}};
  }
  // The error's message, with its errno's text when it does not say it yet.
  static StepResult error(const Error& e) {
    if (e.code == 0) return error(e.message);
    const std::string text = std::strerror(e.code);
    return error(e.message.find(text) == std::string::npos ? e.message + ": " + text : e.message);
  }
};

// How a wait ended: its time was up, the step's deadline came first, or the
// user pressed Ctrl-C.
enum class WaitStatus { Done, Deadline, Interrupted };

}  // namespace rxerun
