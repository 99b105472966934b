#pragma once
// rxerun plugin SDK: step kinds of your own, in a shared object that rxerun
// loads with --plugin PATH or a scenario's `plugins: [PATH]`.
//
//   #include <rxerun/plugin.h>
//
//   RXERUN_PLUGIN(registrar) {
//     rxerun::sdk::Kind kind;
//     kind.spec = {.name = "hello", .summary = "say hello", ...};
//     kind.run = [](const rxerun::sdk::Params& p, rxerun::sdk::StepContext& ctx) {
//       return rxerun::StepResult::ok({{"greeting", "hello " + p.str("who")}});
//     };
//     registrar.add(std::move(kind));
//   }
//
// The plugin and rxerun talk through the virtual interfaces below and
// exchange the types of rxerun/kind.h and rxerun/result.h; nothing else of
// rxerun is linked into a plugin. Any change to these headers changes
// RXERUN_SDK_VERSION, and rxerun refuses a plugin built for another version
// before it runs anything. Build the plugin with the compiler and the
// nlohmann_json rxerun was built with (on Debian: the system's g++ and
// nlohmann-json3-dev). docs/plugins.md says more.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rxerun/duration.h"
#include "rxerun/kind.h"
#include "rxerun/result.h"

// The version of this SDK: of the headers and of the interfaces in them.
#define RXERUN_SDK_VERSION 2

namespace rxerun::sdk {

inline constexpr unsigned kVersion = RXERUN_SDK_VERSION;

// A step's parameters, checked against the kind's declaration: types right,
// defaults filled in, variables expanded. The accessors assume the value is
// there (a required parameter, or one with a default); has() says whether an
// optional one was given.
class Params {
 public:
  virtual const nlohmann::json& raw() const = 0;  // every parameter, as a JSON object
  virtual bool has(std::string_view key) const = 0;
  virtual std::string str(std::string_view key) const = 0;
  virtual long long integer(std::string_view key) const = 0;
  virtual bool flag(std::string_view key) const = 0;           // Bool and OnOff
  virtual Duration duration(std::string_view key) const = 0;   // Duration
  virtual std::uint64_t size(std::string_view key) const = 0;  // Size: bytes
  virtual std::string where(std::string_view key) const = 0;   // "FILE:LINE:COL" of that value, for messages

 protected:
  ~Params() = default;
};

// What a running step may ask of rxerun.
class StepContext {
 public:
  virtual const std::string& scenario() const = 0;  // the scenario's name
  virtual const std::string& step() const = 0;      // this step's name
  // The network namespace the step runs in (its `netns:`), "" for rxerun's
  // own. rxerun has entered it before run() is called.
  virtual const std::string& netns() const = 0;
  // When the step's time is up; steady_clock's max() when it has no timeout.
  virtual std::chrono::steady_clock::time_point deadline() const = 0;

  // Records the inverse of a change in rxerun's cleanup journal BEFORE the
  // change is made. `args` is what the kind's undo will receive, also in a
  // later rxerun after a crash (with the plugin's path, which that rxerun
  // loads); `summary` says in words what the undo does. An error means the
  // change must not be made: return it as the step's error.
  virtual Result<void> will_change(nlohmann::json args, std::string summary) = 0;
  // Once the thing the last will_change() was for exists: what identifies it
  // beyond its name (an inode, an index). The undo receives it as
  // args["identity"] and should act only while the thing still matches.
  virtual Result<void> identify(nlohmann::json identity) = 0;

  // The facts an earlier step of this run reported; null when it has not run.
  virtual const nlohmann::json* facts_of(const std::string& step) const = 0;
  // Where a file this step writes goes: a relative `file` under the run's
  // --output-dir (the only place that comes back from the lab VM).
  virtual Result<std::string> output_path(const std::string& file) const = 0;
  // Waits `d`, cut short by the step's deadline or by Ctrl-C.
  virtual WaitStatus sleep_for(Duration d) = 0;
  // Whether the user asked the run to stop (Ctrl-C, SIGTERM, SIGHUP).
  virtual bool interrupted() const = 0;

 protected:
  ~StepContext() = default;
};

// What an undo may ask of rxerun. An undo may run in a later rxerun than
// the one that made the change (`rxerun cleanup` after a crash): it relies
// on its args only.
class UndoContext {
 public:
  virtual const std::string& scenario() const = 0;
  virtual const std::string& step() const = 0;   // the step whose change is undone
  virtual const std::string& netns() const = 0;  // where the change was made (entered already); "" for rxerun's own

 protected:
  ~UndoContext() = default;
};

// A step kind of a plugin. `run` does the step; a kind that changes
// something calls ctx.will_change() first, and `undo` takes the change back:
// idempotent ("already gone" is success), returning what it observed just
// before undoing (facts, often none). A kind that changes nothing has no
// undo. An exception thrown by either is that step's (or undo's) error.
struct Kind {
  KindSpec spec;
  std::function<StepResult(const Params& params, StepContext& ctx)> run;
  std::function<Result<nlohmann::json>(const nlohmann::json& args, UndoContext& ctx)> undo;
};

// Takes the plugin's kinds. A name a built-in kind or another plugin already
// has refuses the whole plugin, with a message that says which.
class Registrar {
 public:
  virtual void add(Kind kind) = 0;

 protected:
  ~Registrar() = default;
};

// The plugin's one entry point, found by its name (rxerun_plugin): the SDK
// version it was built for, read before anything of the plugin runs, and the
// function that registers its kinds. Its layout never changes.
struct PluginEntry {
  unsigned sdk_version;
  void (*register_kinds)(Registrar& registrar);
};

}  // namespace rxerun::sdk

// Defines the entry point; the block that follows registers the kinds:
//   RXERUN_PLUGIN(registrar) { registrar.add(...); }
#define RXERUN_PLUGIN(registrar)                                                                     \
  static void rxerun_plugin_register_kinds(::rxerun::sdk::Registrar& registrar);                     \
  extern "C" __attribute__((visibility("default")))                                                  \
  const ::rxerun::sdk::PluginEntry rxerun_plugin{RXERUN_SDK_VERSION, &rxerun_plugin_register_kinds}; \
  static void rxerun_plugin_register_kinds(::rxerun::sdk::Registrar& registrar)
