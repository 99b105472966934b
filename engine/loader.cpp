// YAML -> Scenario, by readers that each hold their own state and write
// every problem into one DiagnosticSink (engine/loader_sink.h), which sorts
// them by place:
//   DocumentReader  the text to one YAML document      loader_document.cpp
//   TopLevelReader  the top-level keys                 loader_top.cpp
//   IncludeReader   include: the files built on        loader_include.cpp
//   Variables       vars:, --var, {{name}}             loader_vars.cpp
//   NodesReader     nodes:, wires:, a step's node      loader_nodes.cpp
//   StepReader      steps: and their common keys       loader_steps.cpp
//   StepTable       the steps so far, their facts      loader_step_table.cpp
//   ParamReader     a step's parameters, by type       loader_params.cpp
//   ExpectReader    expect: (outcome, matchers)        loader_expect.cpp
// What they share of YAML is in engine/loader_yaml.h.

#include "engine/loader.h"

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "base/files.h"
#include "engine/loader_document.h"
#include "engine/loader_sink.h"
#include "engine/loader_top.h"
#include "engine/loader_yaml.h"

namespace rxerun {

namespace {

// The scenario, or every problem found in it, sorted by place.
LoadResult read_scenario(std::string_view text, const std::string& file, const Registry& registry,
                         const LoadOptions& options) {
  loading::DiagnosticSink sink(file);
  Scenario scenario;
  LoadResult result;
  bool read = false;  // the document, to its end
  try {
    if (auto root = loading::DocumentReader(sink).read(text)) {
      loading::TopLevelReader top(scenario, registry, options, sink);
      top.read(*root);
      result.unused_vars = top.unused_vars();
      read = true;
    }
  } catch (const YAML::Exception& e) {
    sink.error(loading::to_mark(e.mark), e.msg.empty() ? std::string(e.what()) : e.msg);
  } catch (const std::exception& e) {
    sink.error(Mark{}, fmt::format("cannot load the scenario: {}", e.what()));
  }
  result.diagnostics = sink.take_errors();
  result.warnings = sink.take_warnings();
  if (result.diagnostics.empty())
    result.scenario = std::move(scenario);
  else if (read)
    result.partial = std::move(scenario);
  return result;
}

}  // namespace

LoadResult load_scenario(const std::string& path, const Registry& registry, const LoadOptions& options) {
  try {
    auto data = read_file_capped(path, kMaxScenarioBytes, "scenario");
    if (!data) return LoadResult{std::nullopt, {Diagnostic{path, Mark{}, data.error().message}}};
    return load_scenario_text(*data, path, registry, options);
  } catch (const std::exception& e) {  // std::bad_alloc, or a bug: never a crash
    return LoadResult{std::nullopt, {Diagnostic{path, Mark{}, fmt::format("cannot load the scenario: {}", e.what())}}};
  }
}

LoadResult load_scenario_text(std::string_view text, const std::string& file, const Registry& registry,
                              const LoadOptions& options) {
  try {
    return read_scenario(text, file, registry, options);
  } catch (const std::exception& e) {
    return LoadResult{std::nullopt, {Diagnostic{file, Mark{}, fmt::format("cannot load the scenario: {}", e.what())}}};
  }
}

}  // namespace rxerun
