#pragma once
// The steps of a scenario as the loader meets them: every step's name from a
// first pass over the list (so that a reference to a later step can be told
// from one to no step at all, and duplicates found), the steps read so far
// (the earlier steps of the one being read), and the facts each reports:
// its kind's, or for `revert` the reverted step's.

#include <string>
#include <string_view>
#include <vector>

#include "engine/loader_sink.h"
#include "engine/loader_yaml.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/vars.h"

namespace rxerun::loading {

// One step seen before the full pass: its kind key and final name.
struct StepHead {
  std::string kind;  // "" when the step has none (or several)
  YAML::Node kind_key;
  std::string name;
  bool named = false;
  Mark name_mark;
};

class StepTable {
 public:
  // `steps`: the scenario's, which add() fills.
  StepTable(std::vector<StepSpec>& steps, const Registry& registry, DiagnosticSink& sink)
      : steps_(steps), registry_(registry), sink_(sink) {}

  // Every step's head, from the first pass; room for that many steps.
  void set_heads(std::vector<StepHead> heads);
  const StepHead& head(int index) const { return heads_[static_cast<std::size_t>(index)]; }

  // A step read: from now on an earlier step of the ones after it.
  void add(StepSpec step);
  // The step of that name read so far; null when there is none (yet).
  const StepSpec* find(const std::string& name) const;
  // The names of the steps read so far, in order.
  const std::vector<std::string>& names() const { return names_; }

  // The kind whose facts a step reports: its own, or for `revert` the
  // reverted step's. nullptr when that is not known (an error said why).
  const KindSpec* facts_kind(const StepSpec& step, int hops = 0) const;
  // Whether `step` reports `fact`; otherwise an error at `where`, which
  // names `context` (where the fact was asked for) when not empty.
  bool check_fact(const StepSpec& step, const std::string& fact, Mark where, std::string_view context);
  // Whether {{steps.NAME.FACT}} names an earlier step and a fact it reports.
  bool check_reference(const StepReference& ref, Mark where);

 private:
  std::vector<StepSpec>& steps_;
  const Registry& registry_;
  DiagnosticSink& sink_;
  std::vector<StepHead> heads_;
  std::vector<std::string> names_;
};

}  // namespace rxerun::loading
