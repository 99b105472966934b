#pragma once
// The reader of one step's parameters: YAML -> JSON by each parameter's
// declared type, with {{variables}} expanded and every value's place
// recorded in the step's marks; check_params (engine/checks.h) then checks
// and normalises them.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/kind.h"
#include "engine/loader_sink.h"
#include "engine/loader_step_table.h"
#include "engine/loader_vars.h"
#include "engine/loader_yaml.h"
#include "engine/model.h"

namespace rxerun::loading {

class ParamReader {
 public:
  ParamReader(StepSpec& step, Variables& vars, StepTable& steps, DiagnosticSink& sink)
      : step_(step), vars_(vars), steps_(steps), sink_(sink) {}

  // Reads `value`, the value of the step's kind key (`kind_key`), into
  // step.params and checks it against `kind`.
  void read(const KindSpec& kind, const YAML::Node& value, const YAML::Node& kind_key);

 private:
  // The literals ({{ '{{' }}) of parameters that read no facts, resolved
  // now: the run time expands nothing in them. False after an error.
  bool final_literals(const YAML::Node& kind_key);
  nlohmann::json string_value(const YAML::Node& n);
  // A value of no declared type: scalars typed as YAML types them.
  nlohmann::json generic(const YAML::Node& n);
  nlohmann::json typed(const ParamSpec& spec, const YAML::Node& n, const std::string& path, Mark key_mark);
  nlohmann::json typed_fields(const std::vector<ParamSpec>& specs, const ParamSpec* extra, const YAML::Node& map,
                              const std::string& prefix);

  StepSpec& step_;
  Variables& vars_;
  StepTable& steps_;
  DiagnosticSink& sink_;
  // A value's variable could not be expanded (reported): checking the
  // parameters would only repeat that.
  bool expand_failed_ = false;
};

}  // namespace rxerun::loading
