#pragma once
// The loader's variables: `vars:` and --var, and the expansion of {{name}}
// in every value read after them, within one budget for the whole file
// (engine/vars.h). {{steps.NAME.FACT}} is left for run time, where the step
// table allows it (parameters), and is an error anywhere else.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "engine/loader_sink.h"
#include "engine/loader_yaml.h"
#include "engine/vars.h"

namespace rxerun::loading {

class StepTable;

class Variables {
 public:
  // `vars`: the scenario's, filled by read() and read_overrides().
  Variables(Vars& vars, DiagnosticSink& sink) : vars_(vars), sink_(sink) {}

  // The value of `vars:` (the scenario's, or an included file's: the last
  // read wins).
  void read(const YAML::Node& value);
  // A --var-file's document (the file the sink reads): a mapping like
  // `vars:`, read after it, whose names win.
  void read_file(const YAML::Node& root);
  // --var NAME=VALUE: wins over `vars:` and --var-file, and may define a new one.
  void read_overrides(const std::map<std::string, std::string>& overrides);

  // The names of --var and --var-file that no {{name}} read so far reads,
  // each with its warning as shown ("vars.yaml:3:1: warning: ...",
  // "rxerun: warning: --var x: ..."), with the near spelling of a name the
  // scenario reads.
  std::map<std::string, std::string> unused_overrides() const;

  // Expands {{name}} in `text`; nullopt after an error (in the sink), and
  // when `text` reads facts of other steps: `what` cannot ("this value",
  // "'tags'").
  std::optional<std::string> expand(const std::string& text, Mark where, std::string_view what = "this value");
  // The same for a parameter, read at run time: a {{steps.NAME.FACT}} stays,
  // checked against the steps read so far, and so does a literal
  // ({{ '{{' }}) for the run time's pass (ParamReader resolves the literals
  // of a step whose parameters read no facts).
  std::optional<std::string> expand(const std::string& text, Mark where, StepTable& steps);

 private:
  static std::optional<std::string> bad_name(const std::string& name);
  // read() and read_file(): `from_file` notes where each name was set.
  void read_pairs(const YAML::Node& value, bool from_file);
  // expand() up to step references; nullopt after an error.
  std::optional<std::string> substitute(const std::string& text, Mark where);

  Vars& vars_;
  DiagnosticSink& sink_;
  ExpansionBudget budget_;      // every {{variable}} substituted in the file
  std::set<std::string> used_;  // the names {{name}} read
  // --var and --var-file names: where each was set last, "FILE:LINE:COL"
  // of a --var-file, "" for --var.
  std::map<std::string, std::string> overrides_;
};

}  // namespace rxerun::loading
