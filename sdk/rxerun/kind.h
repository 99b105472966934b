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

// When a step reports a fact (FactSpec::when, a set of these bits). A step
// of a kind that runs in the background (KindSpec::background) reports its
// kAtStart facts when it starts and its kAtEnd facts at the `wait` or the
// `revert` that ends it; any other step reports its kAtStep facts when it
// runs and its kAtRevert facts at a `revert` of it (what its undo found).
inline constexpr unsigned kAtStep = 1;
inline constexpr unsigned kAtStart = 2;
inline constexpr unsigned kAtEnd = 4;
inline constexpr unsigned kAtRevert = 8;

// A fact a kind reports. Its name is a name ("sent") or a pattern whose
// upper-case words stand for names ("NAME.after", "DEV.COUNTER"). What a
// pattern's word may be: one of `names` (capture's OPCODE); a key of the
// map parameter `names_from` ("extract": exec's FACT; "*": the keys the
// kind's `extra` takes, offload's NAME); for "DEV.COUNTER" and
// "NODE.DEV.COUNTER", a device the lab has at that step and one of its
// counters; otherwise anything. `validate` checks every expectation and
// {{steps.X.Y}} reference against these.
struct FactSpec {
  std::string name;  // "sent", or a pattern such as "DEV.COUNTER"
  std::string help;
  unsigned when = kAtStep;         // kAtStep, kAtStart, kAtEnd, kAtRevert bits
  std::string only_with;           // reported only when this parameter is set (exec's stdout_file: "output")
  std::vector<std::string> names;  // what the pattern's word stands for, when it is a fixed set
  std::string names_from;          // ... or the keys of this map parameter ("*": the keys `extra` takes)
};

// The objects of a lab that `validate` follows from step to step: network
// namespaces, interfaces (in a namespace), RDMA devices (one name per
// machine, over an interface).
enum class LabObject { Netns, Interface, RdmaDevice };

// What a step does to an object: makes it (an error when it is there
// already), uses it (an error when it is not there yet, or gone), or
// removes it.
enum class LabEffect { Makes, Uses, Removes };

// One object a step of the kind makes, uses or removes, named by the value
// of a parameter (a dotted path: "name", "server.dev"; a list of names is
// one object per item). An unset optional parameter names nothing.
struct LabObjectSpec {
  LabEffect effect = LabEffect::Uses;
  LabObject object = LabObject::Interface;
  std::string param;
  std::string netns_param;  // the parameter naming its namespace; "" the step's `netns:`
  std::string node_param;   // the parameter naming its node (a pair kind's end); "" the step's `node:`
  std::string over_param;   // RdmaDevice made: the parameter naming the interface it runs over
  std::string device_type;  // RdmaDevice made: "rxe", "siw" (which counters it has, what kernels allow)
  // The object may be either an interface or an RDMA device (counters'
  // `devs`); `object` is then ignored.
  bool either = false;
  // Skip the check when this parameter has this value (port's `state:
  // ABSENT` waits for the device to be gone).
  std::string unless_param;
  std::string unless_value;
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
  // What its steps do to the lab's objects, for `validate` (engine/lab_check.h).
  std::vector<LabObjectSpec> objects;
  // A boolean parameter that, when true, makes the step run in the
  // background until a `wait` or `revert` ends it (exec's "background").
  std::string background;
  // A `revert` of a step of this kind has something to undo: always
  // (kind with an undo), or, when this list is not empty, only when one of
  // these parameters is set (exec: "background", "undo").
  std::vector<std::string> undo_with;
  // Its scalar names a background step that it ends (wait).
  bool ends_background = false;
  // Whether `netns:` means something for it (false: the kind works on the
  // machine as a whole, configfs for instance, and `netns:` is an error).
  bool takes_netns = true;
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
