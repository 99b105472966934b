#pragma once
// The interface between the engine and a step kind: what a kind receives
// (its checked parameters and a context) and what it returns (an outcome
// and facts). Steps include this header; the engine implements the contexts.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/result.h"
#include "engine/journal.h"
#include "engine/kind.h"
#include "engine/model.h"
#include "sys/system.h"

namespace rxerun {

// A scalar parameter as written: a string as it is, a number or a boolean as
// JSON spells it (`table: 100` and `table: main` alike).
std::string scalar_text(const nlohmann::json& v);

// A step's parameters after loading: types checked, defaults filled in,
// variables expanded. Accessors assume the loader's checks passed.
class Params {
 public:
  Params(const nlohmann::json& values, const StepSpec& step, std::string file, std::string prefix = "");

  const nlohmann::json& raw() const { return values_; }
  bool has(std::string_view key) const;
  const nlohmann::json& at(std::string_view key) const;
  std::string str(std::string_view key) const;
  long long integer(std::string_view key) const;
  bool flag(std::string_view key) const;  // Bool and OnOff
  Duration duration(std::string_view key) const;
  std::uint64_t size(std::string_view key) const;  // Size: bytes
  Params object(std::string_view key) const;       // a nested Object parameter
  std::string scalar_str() const;                  // scalar kinds (revert: NAME)
  std::string where(std::string_view key) const;   // "FILE:LINE:COL" of that value

 private:
  const nlohmann::json& values_;
  const StepSpec& step_;
  std::string file_;
  std::string prefix_;  // "server." for nested objects
};

class StepContext {
 public:
  virtual ~StepContext() = default;
  virtual sys::System& sys() = 0;
  virtual const std::string& scenario() const = 0;  // the scenario's name: journal, lock, marks
  virtual const StepSpec& step() const = 0;
  virtual sys::SteadyTime deadline() const = 0;  // SteadyTime::max() when unbounded

  // Records the inverse of a change in the journal BEFORE the
  // change is made. `args` is what this kind's undo() will receive, also in
  // a later process; `summary` says in words what the undo does; `footprint`
  // what the change lives on and creates (journal.h), so that cleanup can
  // leave out undos that a removal of the run's own takes care of.
  virtual Result<void> will_change(nlohmann::json args, std::string summary, Footprint footprint = {}) = 0;

  // Once the object the last will_change() was for exists: records what
  // identifies it beyond its name ({"ifindex": 7, "netns_inode": ...}). Its
  // undo receives it as args["identity"] and acts only while the object still
  // matches, so that a namesake someone made in between is left alone.
  virtual Result<void> identify(nlohmann::json /*identity*/) { return {}; }

  // The footprint of a change to interface `dev` in this step's namespace
  // (it also lives on that namespace, when there is one).
  Footprint on_link(const std::string& dev) const;
  // The footprint of a change that lives inside this step's namespace; none
  // in rxerun's own.
  Footprint in_netns() const;

  // Undoes an earlier step now (the `revert` kind) and returns the facts its
  // undo observed.
  virtual Result<nlohmann::json> revert(const std::string& step_name) = 0;

  // The facts an earlier step of this run reported; null when it has not
  // run (or there is no such step).
  virtual const nlohmann::json* facts_of(const std::string& /*step_name*/) const { return nullptr; }

  // Where a file the step writes (a capture) goes: a relative `file` under
  // the run's output directory (--output-dir, default the current one).
  // Errors when the path cannot be used (an absolute path in the lab VM,
  // where only the output directory comes back to the host).
  // `path` is where to write it; `shown` how to name it to the user (in the
  // lab VM: where it lands on the host, relative to --output-dir).
  struct OutputPath {
    std::string path;
    std::string shown;
  };
  virtual Result<OutputPath> output_path(const std::string& file) const { return OutputPath{file, file}; }

  // --force: the user allows replacing an existing interface that does not
  // carry rxerun's mark.
  virtual bool force() const { return false; }

  // A program this step leaves running (exec with background): the run
  // holds it under the step's name until a later step takes it (wait) or
  // the step's undo stops it; whatever is left ends with the run.
  virtual void keep_running(std::unique_ptr<sys::RunningTool> /*tool*/) {}
  // The program step `step_name` left running; null when there is none (any
  // more): it was taken, or never kept.
  virtual std::unique_ptr<sys::RunningTool> take_running(const std::string& /*step_name*/) { return nullptr; }

  // Waits `d`, cut short by the step's deadline or by Ctrl-C.
  WaitStatus sleep_for(Duration d);
};

// A cleanup's undo may be put off: an error with EAGAIN on its first try
// has it tried once more after every other undo (a module held by something
// a later undo takes away). Only an undo of what is the whole kernel's (a
// module) asks: on its last try its namespace may be gone, and it then runs
// in rxerun's own. A revert's undo is tried once.
enum class UndoTry { Only, First, Last };

class UndoContext {
 public:
  virtual ~UndoContext() = default;
  virtual sys::System& sys() = 0;
  virtual const std::string& scenario() const = 0;
  // The step whose change is undone, for messages about its journal entry;
  // "" when the call covers several (a batch) or none (preclean).
  virtual std::string step() const { return {}; }
  // The namespace the undo runs in, as the journal names it; "" for rxerun's own.
  virtual std::string netns() const { return {}; }
  // The program the step left running in this process (StepContext::
  // keep_running); null in a later rxerun, or once a step took it.
  virtual std::unique_ptr<sys::RunningTool> take_running() { return nullptr; }
  // Which try this is (UndoTry above).
  virtual UndoTry attempt() const { return UndoTry::Only; }
};

// The mark rxerun puts on what it creates (an interface's alias), naming the
// scenario: "rxerun:veth-pair". Preclean removes marked leftovers; anything
// without the mark is never deleted.
std::string mark_for(const std::string& scenario);

}  // namespace rxerun
