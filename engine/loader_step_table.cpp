#include "engine/loader_step_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/utf8.h"
#include "engine/fact_names.h"

namespace rxerun::loading {

void StepTable::set_heads(std::vector<StepHead> heads) {
  // Sized once: a thousand steps would otherwise move every StepSpec ten times.
  steps_.reserve(heads.size());
  heads_ = std::move(heads);
}

void StepTable::add(StepSpec step) {
  names_.push_back(step.name);
  steps_.push_back(std::move(step));
}

const StepSpec* StepTable::find(const std::string& name) const {
  for (const auto& s : steps_)
    if (s.name == name) return &s;
  return nullptr;
}

const KindSpec* StepTable::facts_kind(const StepSpec& step, int hops) const {
  const Kind* kind = registry_.find(step.kind);
  if (!kind) return nullptr;
  if (!kind->spec.facts_of_target) return &kind->spec;
  if (hops > 16 || !step.params.is_string()) return nullptr;
  const StepSpec* target = find(step.params.get<std::string>());
  return target && target->index < step.index ? facts_kind(*target, hops + 1) : nullptr;
}

bool StepTable::check_fact(const StepSpec& step, const std::string& fact, Mark where, std::string_view context) {
  const KindSpec* kind = facts_kind(step);
  if (!kind || fact_declared(*kind, fact)) return true;
  std::vector<std::string> names;
  for (const auto& f : kind->facts) names.push_back(f.name);
  const std::string of = step.kind == kind->name ? fmt::format("'{}'", kind->name)
                                                 : fmt::format("'{}' (it reverts a '{}' step)", step.kind, kind->name);
  std::string msg = names.empty() ? fmt::format("unknown fact '{}': {} reports no facts", excerpt(fact), of)
                                  : fmt::format("unknown fact '{}' for {}{}; it reports {}", excerpt(fact), of,
                                                did_you_mean(fact, names), fmt::join(names, ", "));
  if (!context.empty()) msg += fmt::format(" (in {})", context);
  sink_.error(where, std::move(msg));
  return false;
}

bool StepTable::check_reference(const StepReference& ref, Mark where) {
  const std::string written = fmt::format("{{{{steps.{}.{}}}}}", excerpt(ref.step), excerpt(ref.fact));
  const StepSpec* target = find(ref.step);
  if (!target) {
    const bool later = std::any_of(heads_.begin(), heads_.end(), [&](const StepHead& h) { return h.name == ref.step; });
    if (later)
      sink_.error(where,
                  fmt::format("step '{}' in {} comes later: only earlier steps' facts can be read", ref.step, written));
    else
      sink_.error(where,
                  fmt::format("unknown step '{}' in {}{}", excerpt(ref.step), written, did_you_mean(ref.step, names_)));
    return false;
  }
  return check_fact(*target, ref.fact, where, written);
}

}  // namespace rxerun::loading
