#pragma once
// The reader of a step's `expect:`: an outcome (ok, fail, timeout), or a
// mapping of the facts the step reports to matchers (engine/checks.h,
// parse_matcher), with `outcome` among them.

#include <optional>
#include <string>

#include "engine/loader_sink.h"
#include "engine/loader_step_table.h"
#include "engine/loader_vars.h"
#include "engine/loader_yaml.h"
#include "engine/model.h"

namespace rxerun::loading {

class ExpectReader {
 public:
  ExpectReader(Variables& vars, StepTable& steps, DiagnosticSink& sink) : vars_(vars), steps_(steps), sink_(sink) {}

  // `value`, the value of the step's `expect` key (`key`), into step.expect.
  void read(StepSpec& step, const YAML::Node& value, const YAML::Node& key);

 private:
  std::optional<Outcome> outcome_of(const YAML::Node& v);
  // A plain value as written, a string with its variables expanded; nullopt
  // after an error.
  std::optional<nlohmann::json> expanded_value(const YAML::Node& v);
  void read_fact(StepSpec& step, const std::string& fact, const YAML::Node& fact_key, const YAML::Node& v);

  Variables& vars_;
  StepTable& steps_;
  DiagnosticSink& sink_;
};

}  // namespace rxerun::loading
