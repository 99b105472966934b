#include "engine/loader_expect.h"

#include <fmt/format.h>

#include <vector>

#include "base/utf8.h"
#include "engine/checks.h"

namespace rxerun::loading {

namespace {

const std::vector<std::string> kOutcomes{"ok", "fail", "timeout"};

}  // namespace

void ExpectReader::read(StepSpec& step, const YAML::Node& value, const YAML::Node& key) {
  if (value.IsScalar()) {
    if (auto o = outcome_of(value)) step.expect.outcome = *o;
    return;
  }
  if (!value.IsMap()) {
    sink_.error(
        value.IsNull() ? key : value,
        fmt::format("'expect' must be ok, fail, timeout or a mapping of facts to matchers, got {}", type_name(value)));
    return;
  }
  for_each_pair(value, [&](const std::string& fact, const YAML::Node& fact_key, const YAML::Node& v) {
    if (fact == "outcome") {
      if (v.IsNull())
        sink_.error(fact_key, "expected outcome must be ok, fail or timeout, got nothing");
      else if (auto o = outcome_of(v))
        step.expect.outcome = *o;
      return;
    }
    read_fact(step, fact, fact_key, v);
  });
}

std::optional<Outcome> ExpectReader::outcome_of(const YAML::Node& v) {
  if (v.IsScalar()) {
    auto s = vars_.expand(v.Scalar(), mark_of(v), "'expect'");
    if (!s) return std::nullopt;
    if (*s == "ok") return Outcome::Ok;
    if (*s == "fail") return Outcome::Fail;
    if (*s == "timeout") return Outcome::Timeout;
    sink_.error(v, fmt::format("expected outcome must be ok, fail or timeout, got '{}'{}", excerpt(*s),
                               did_you_mean(*s, kOutcomes)));
    return std::nullopt;
  }
  sink_.error(v, fmt::format("expected outcome must be ok, fail or timeout, got {}", type_name(v)));
  return std::nullopt;
}

std::optional<nlohmann::json> ExpectReader::expanded_value(const YAML::Node& v) {
  nlohmann::json written = plain_scalar(v);
  if (!written.is_string()) return written;
  auto s = vars_.expand(written.get<std::string>(), mark_of(v), "a matcher");
  if (!s) return std::nullopt;
  return nlohmann::json(*s);
}

void ExpectReader::read_fact(StepSpec& step, const std::string& fact, const YAML::Node& fact_key, const YAML::Node& v) {
  if (!step.kind.empty()) steps_.check_fact(step, fact, mark_of(fact_key), "");
  if (!v.IsScalar() && !v.IsSequence()) {
    std::string why;
    (void)parse_matcher(v.IsNull() ? nlohmann::json() : nlohmann::json::object(), &why);
    sink_.error(v.IsNull() ? fact_key : v, fmt::format("fact '{}': {}", excerpt(fact), why));
    return;
  }
  nlohmann::json written;
  if (v.IsSequence()) {  // a list fact's items, each a plain value
    written = nlohmann::json::array();
    for (const auto& item : v) {
      if (!item.IsScalar()) {
        sink_.error(item, fmt::format("fact '{}': {}", excerpt(fact), list_matcher_item_error(type_name(item))));
        return;
      }
      auto value = expanded_value(item);
      if (!value) return;
      written.push_back(std::move(*value));
    }
  } else {
    auto value = expanded_value(v);
    if (!value) return;
    written = std::move(*value);
  }
  std::string why;
  auto matcher = parse_matcher(written, &why);
  if (!matcher) {
    sink_.error(v, fmt::format("fact '{}': {}", excerpt(fact), why));
    return;
  }
  step.expect.facts.push_back(FactExpectation{fact, std::move(*matcher), mark_of(v)});
}

}  // namespace rxerun::loading
