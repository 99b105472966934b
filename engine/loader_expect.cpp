// Facts and expectations: which facts a step reports (its kind's, or the
// reverted step's for `revert`), {{steps.NAME.FACT}} references, and `expect:`
// (an outcome, or facts with matchers).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "engine/checks.h"
#include "engine/loader_detail.h"

namespace rxerun::loading {

const StepSpec* Loader::find_loaded(const std::string& name) const {
  for (const auto& s : scenario_.steps)
    if (s.name == name) return &s;
  return nullptr;
}

// The kind whose facts a step reports: its own, or for `revert` the
// reverted step's. nullptr when that is not known (an error said why).
const KindSpec* Loader::facts_kind(const StepSpec& step, int hops) const {
  const Kind* kind = registry_.find(step.kind);
  if (!kind) return nullptr;
  if (!kind->spec.facts_of_target) return &kind->spec;
  if (hops > 16 || !step.params.is_string()) return nullptr;
  const StepSpec* target = find_loaded(step.params.get<std::string>());
  return target && target->index < step.index ? facts_kind(*target, hops + 1) : nullptr;
}

bool Loader::check_fact(const StepSpec& step, const std::string& fact, Mark where, std::string_view context) {
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
  error(where, std::move(msg));
  return false;
}

std::optional<Outcome> Loader::outcome_of(const YAML::Node& v) {
  if (v.IsScalar()) {
    auto s = expand_string(v.Scalar(), mark_of(v), false, "'expect'");
    if (!s) return std::nullopt;
    if (*s == "ok") return Outcome::Ok;
    if (*s == "fail") return Outcome::Fail;
    if (*s == "timeout") return Outcome::Timeout;
    error(v, fmt::format("expected outcome must be ok, fail or timeout, got '{}'{}", excerpt(*s),
                         did_you_mean(*s, kOutcomes)));
    return std::nullopt;
  }
  error(v, fmt::format("expected outcome must be ok, fail or timeout, got {}", type_name(v)));
  return std::nullopt;
}

void Loader::load_expect(StepSpec& step, const YAML::Node& value, const YAML::Node& key) {
  if (value.IsScalar()) {
    if (auto o = outcome_of(value)) step.expect.outcome = *o;
    return;
  }
  if (!value.IsMap()) {
    error(
        value.IsNull() ? key : value,
        fmt::format("'expect' must be ok, fail, timeout or a mapping of facts to matchers, got {}", type_name(value)));
    return;
  }
  for_each_pair(value, [&](const std::string& fact, const YAML::Node& fact_key, const YAML::Node& v) {
    if (fact == "outcome") {
      if (v.IsNull())
        error(fact_key, "expected outcome must be ok, fail or timeout, got nothing");
      else if (auto o = outcome_of(v))
        step.expect.outcome = *o;
      return;
    }
    load_fact_expectation(step, fact, fact_key, v);
  });
}

void Loader::load_fact_expectation(StepSpec& step, const std::string& fact, const YAML::Node& fact_key,
                                   const YAML::Node& v) {
  if (!step.kind.empty()) check_fact(step, fact, mark_of(fact_key), "");
  if (!v.IsScalar()) {
    std::string why;
    (void)parse_matcher(v.IsNull() ? nlohmann::json() : nlohmann::json::array(), &why);
    error(v.IsNull() ? fact_key : v, fmt::format("fact '{}': {}", excerpt(fact), why));
    return;
  }
  nlohmann::json written = plain_scalar(v);
  if (written.is_string()) {
    auto s = expand_string(written.get<std::string>(), mark_of(v), false, "a matcher");
    if (!s) return;
    written = *s;
  }
  std::string why;
  auto matcher = parse_matcher(written, &why);
  if (!matcher) {
    error(v, fmt::format("fact '{}': {}", excerpt(fact), why));
    return;
  }
  step.expect.facts.push_back(FactExpectation{fact, std::move(*matcher), mark_of(v)});
}

}  // namespace rxerun::loading
