#pragma once
// The reader of a scenario's top level: the files it includes first
// (engine/loader_include.h), then variables (every other value may use
// them, whatever the order of keys): the included files' `vars:`, its own,
// --var-file, --var, each over the ones before; then name, description, vm,
// kernel_health and plugins, then nodes and wires, then the steps (the
// included files' first), each through its reader. Top-level keys starting
// with `x-` are the author's (a place for YAML anchors) and are ignored.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/loader.h"
#include "engine/loader_include.h"
#include "engine/loader_nodes.h"
#include "engine/loader_sink.h"
#include "engine/loader_step_table.h"
#include "engine/loader_vars.h"
#include "engine/loader_yaml.h"
#include "engine/model.h"
#include "engine/registry.h"

namespace rxerun::loading {

class TopLevelReader {
 public:
  TopLevelReader(Scenario& scenario, const Registry& registry, const LoadOptions& options, DiagnosticSink& sink)
      : scenario_(scenario),
        registry_(registry),
        options_(options),
        sink_(sink),
        vars_(scenario.vars, sink),
        steps_(scenario.steps, registry, sink),
        nodes_(scenario, registry, vars_, sink) {}

  // The document's root, into the scenario.
  void read(const YAML::Node& root);
  // After read(): LoadResult::unused_vars.
  std::map<std::string, std::string> unused_vars() const { return vars_.unused_overrides(); }

 private:
  // vars: of the included files and of the scenario, --var-file, --var.
  void read_variables(const YAML::Node& root, const std::vector<IncludedFile>& included);
  void read_var_file(const std::string& path);
  void read_steps(const YAML::Node& root, const std::vector<IncludedFile>& included);
  void read_name(const YAML::Node& value, const YAML::Node& key);
  void read_description(const YAML::Node& value, const YAML::Node& key);
  void read_vm(const YAML::Node& value, const YAML::Node& key);
  // One key of `vm` other than `kernels`.
  void read_vm_key(const std::string& key, const YAML::Node& key_node, const YAML::Node& value);
  void read_vm_kernels(const YAML::Node& value, const YAML::Node& key);
  void read_kernel_health(const YAML::Node& value, const YAML::Node& key);
  // plugins: [PATH, ...], each relative to the scenario's directory, loaded
  // here so that the steps (read after every top-level key) may use its kinds.
  void read_plugins(const YAML::Node& value, const YAML::Node& key);

  Scenario& scenario_;
  const Registry& registry_;
  const LoadOptions& options_;
  DiagnosticSink& sink_;
  Variables vars_;
  StepTable steps_;
  NodesReader nodes_;
  std::optional<Mark> vm_kernels_mark_;  // where `vm.kernels` is, when it is
  bool lenient_kinds_ = false;           // a plugin could not be loaded: its kinds' steps are not errors of their own
};

}  // namespace rxerun::loading
