#pragma once
// The reader of `steps:` (the scenario's, after those of the files it
// includes): a first pass for every step's kind and name (StepTable's
// heads), then each step in order: its keys (one kind, the
// common keys), its common keys' values, and through the other readers its
// parameters, its node and its expectations.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/loader_expect.h"
#include "engine/loader_nodes.h"
#include "engine/loader_sink.h"
#include "engine/loader_step_table.h"
#include "engine/loader_vars.h"
#include "engine/loader_yaml.h"
#include "engine/model.h"
#include "engine/registry.h"

namespace rxerun::loading {

// A list of steps and the file it is written in: the scenario's, or a file
// it includes (with the note its diagnostics carry).
struct StepList {
  YAML::Node steps;
  YAML::Node key;
  std::string file;
  std::string note;
};

class StepReader {
 public:
  // `lenient_kinds`: a plugin could not be loaded, so a step of an unknown
  // kind may be one of its kinds, not an error of its own.
  StepReader(const Registry& registry, Variables& vars, StepTable& steps, NodesReader& nodes, DiagnosticSink& sink,
             bool lenient_kinds)
      : registry_(registry),
        vars_(vars),
        steps_(steps),
        nodes_(nodes),
        sink_(sink),
        expect_(vars, steps, sink),
        lenient_kinds_(lenient_kinds) {}

  // The lists of steps, in order, as one: step names are unique over them
  // all, and a step refers to any step before it, in its file or another.
  void read(const std::vector<StepList>& lists);

 private:
  // Kind keys of a step mapping. A kind that shares its name with a common
  // key (`netns`) is the kind only when no other kind key is there.
  std::vector<std::pair<std::string, YAML::Node>> kind_keys(const YAML::Node& node);
  // False (with the reason) when `list` is not a list of steps.
  bool check_list(const StepList& list);
  StepHead read_head(const YAML::Node& node, int index);
  void read_step(const YAML::Node& node, int index);
  // Unknown keys, a missing kind, two kinds.
  void check_step_keys(const YAML::Node& node, Mark step_mark);
  // A common key's value as text, variables expanded; nullopt after an error.
  std::optional<std::string> common_text(const YAML::Node& key_node, const YAML::Node& value, const std::string& key);
  void read_common(StepSpec& step, const std::string& key, const YAML::Node& key_node, const YAML::Node& value);
  void read_duration(StepSpec& step, const std::string& key, const YAML::Node& key_node, const YAML::Node& value);
  void read_name(const YAML::Node& key_node, const YAML::Node& value);
  void read_tags(StepSpec& step, const YAML::Node& key_node, const YAML::Node& value);

  const Registry& registry_;
  Variables& vars_;
  StepTable& steps_;
  NodesReader& nodes_;
  DiagnosticSink& sink_;
  ExpectReader expect_;
  bool lenient_kinds_;
};

}  // namespace rxerun::loading
