#pragma once
// The loader's variables: `vars:` and --var, and the expansion of {{name}}
// in every value read after them, within one budget for the whole file
// (engine/vars.h). {{steps.NAME.FACT}} is left for run time, where the step
// table allows it (parameters), and is an error anywhere else.

#include <map>
#include <optional>
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

  // The value of `vars:`.
  void read(const YAML::Node& value);
  // --var NAME=VALUE: wins over `vars:`, and may define a new one.
  void read_overrides(const std::map<std::string, std::string>& overrides);

  // Expands {{name}} in `text`; nullopt after an error (in the sink), and
  // when `text` reads facts of other steps: `what` cannot ("this value",
  // "'tags'").
  std::optional<std::string> expand(const std::string& text, Mark where, std::string_view what = "this value");
  // The same for a parameter, read at run time: a {{steps.NAME.FACT}} stays,
  // checked against the steps read so far.
  std::optional<std::string> expand(const std::string& text, Mark where, StepTable& steps);

 private:
  static std::optional<std::string> bad_name(const std::string& name);
  // expand() up to step references; nullopt after an error.
  std::optional<std::string> substitute(const std::string& text, Mark where);

  Vars& vars_;
  DiagnosticSink& sink_;
  ExpansionBudget budget_;  // every {{variable}} substituted in the file
};

}  // namespace rxerun::loading
