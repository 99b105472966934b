#include "engine/step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace rxerun {

std::string scalar_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

Params::Params(const nlohmann::json& values, const StepSpec& step, std::string file, std::string prefix)
    : values_(values), step_(step), file_(std::move(file)), prefix_(std::move(prefix)) {}

bool Params::has(std::string_view key) const {
  return values_.is_object() && values_.contains(key) && !values_.at(std::string(key)).is_null();
}

const nlohmann::json& Params::at(std::string_view key) const {
  return values_.at(std::string(key));
}

std::string Params::str(std::string_view key) const {
  return scalar_text(at(key));
}

long long Params::integer(std::string_view key) const {
  return at(key).get<long long>();
}

bool Params::flag(std::string_view key) const {
  return at(key).get<bool>();
}

Duration Params::duration(std::string_view key) const {
  // The loader checked the spelling; a value that slipped through is a bug.
  return parse_duration(at(key).get<std::string>()).value();
}

std::uint64_t Params::size(std::string_view key) const {
  return at(key).get<std::uint64_t>();  // the loader normalised it to bytes
}

Params Params::object(std::string_view key) const {
  return Params(at(key), step_, file_, prefix_ + std::string(key) + ".");
}

std::string Params::scalar_str() const {
  return scalar_text(values_);
}

std::string Params::where(std::string_view key) const {
  Mark m = step_.mark_of(prefix_ + std::string(key));
  return fmt::format("{}:{}:{}", file_, m.line, m.col);
}

std::string mark_for(const std::string& scenario) {
  return "rxerun:" + scenario;
}

Footprint StepContext::on_link(const std::string& dev) const {
  const std::string ns = step().netns.value_or("");
  Footprint f{.on = {link_object(ns, dev)}};
  if (!ns.empty()) f.on.push_back(netns_object(ns));
  return f;
}

Footprint StepContext::in_netns() const {
  const std::string ns = step().netns.value_or("");
  if (ns.empty()) return {};
  return Footprint{.on = {netns_object(ns)}};
}

WaitStatus StepContext::sleep_for(Duration d) {
  auto& clock = sys().clock;
  auto start = clock.now();
  auto target = d.count() >= 0 && start <= sys::SteadyTime::max() - d ? start + d : sys::SteadyTime::max();
  auto until = std::min(target, deadline());
  if (clock.wait_until(until, sys().interrupt) == sys::WaitResult::Interrupted) return WaitStatus::Interrupted;
  return until < target ? WaitStatus::Deadline : WaitStatus::Done;
}

}  // namespace rxerun
