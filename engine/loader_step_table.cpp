#include "engine/loader_step_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <regex>

#include "base/utf8.h"

namespace rxerun::loading {

namespace {

// A fact spec such as "DEV.COUNTER": upper-case words stand for any text
// (engine/fact_names.h checks what they may be).
bool fact_pattern_matches(const std::string& pattern, const std::string& fact) {
  static const std::regex kPlaceholder("[A-Z][A-Z0-9_]*");
  std::string re;
  std::size_t start = 0;
  bool is_pattern = false;
  while (start <= pattern.size()) {
    std::size_t dot = pattern.find('.', start);
    if (dot == std::string::npos) dot = pattern.size();
    std::string seg = pattern.substr(start, dot - start);
    // A placeholder is a whole segment (DEV) or its tail after '_' (lat_avg_us_SIZE).
    std::size_t tail = seg.size();
    for (std::size_t i = 0; i < seg.size(); ++i)
      if ((i == 0 || seg[i - 1] == '_') && std::regex_match(seg.substr(i), kPlaceholder)) {
        tail = i;
        break;
      }
    const bool placeholder = tail < seg.size();
    seg.resize(tail);
    for (char c : seg) {
      if (std::strchr("\\^$.|?*+()[]{}", c)) re += '\\';
      re += c;
    }
    if (placeholder) {
      re += ".+";
      is_pattern = true;
    }
    if (dot == pattern.size()) break;
    re += "\\.";
    start = dot + 1;
  }
  return is_pattern && fact.size() <= 256 && std::regex_match(fact, std::regex(re));
}

bool fact_declared(const KindSpec& kind, const std::string& fact) {
  if (kind.dynamic_facts) return true;
  for (const auto& f : kind.facts) {
    if (f.name == fact || fact_pattern_matches(f.name, fact)) return true;
  }
  return false;
}

}  // namespace

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
