// libFuzzer target: the loader must turn any bytes into a scenario or into
// diagnostics, never crash, hang or throw. Matchers that load are also
// evaluated, since check() runs on whatever a step reports.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/loader.h"

namespace {

using namespace rxerun;

// Kinds shaped like the shipped ones (sleep, revert) plus one of every
// parameter type, so that every checking path is reachable.
std::vector<Kind> fuzz_kinds() {
  std::vector<Kind> kinds;
  auto add = [&](KindSpec spec) { kinds.push_back(Kind{std::move(spec), {}, {}}); };
  add({.name = "sleep",
       .params = {{.name = "duration", .type = ParamType::Duration, .required = true}},
       .facts = {{"slept_ms", ""}}});
  add({.name = "revert",
       .scalar = ParamSpec{.name = "step", .type = ParamType::StepRef, .required = true},
       .facts_of_target = true});
  add({.name = "netns", .params = {{.name = "name", .type = ParamType::NetnsName, .required = true}}});
  add({.name = "offload",
       .params = {{.name = "dev", .type = ParamType::IfName, .required = true}},
       .extra = ParamSpec{.name = "feature", .type = ParamType::OnOff}});
  add({.name = "counters", .facts = {{"DEV.COUNTER", ""}}, .dynamic_facts = true});
  add({.name = "every",
       .params = {{.name = "s", .type = ParamType::String},
                  {.name = "i", .type = ParamType::Int, .min = 1, .max = 10},
                  {.name = "b", .type = ParamType::Bool},
                  {.name = "o", .type = ParamType::OnOff},
                  {.name = "d", .type = ParamType::Duration},
                  {.name = "dev", .type = ParamType::IfName},
                  {.name = "ns", .type = ParamType::NetnsName},
                  {.name = "addr", .type = ParamType::Address},
                  {.name = "cidr", .type = ParamType::Cidr},
                  {.name = "list", .type = ParamType::AddressList},
                  {.name = "e", .type = ParamType::Enum, .choices = {"udp", "tcp"}},
                  {.name = "sc", .type = ParamType::Scalar},
                  {.name = "ref", .type = ParamType::StepRef},
                  {.name = "server",
                   .type = ParamType::Object,
                   .fields = {{.name = "dev", .type = ParamType::IfName, .required = true},
                              {.name = "port", .type = ParamType::Int, .default_value = 1}}},
                  {.name = "def", .type = ParamType::String, .default_value = "x"}},
       .facts = {{"index", ""}, {"state", ""}, {"DEV.COUNTER", ""}}});
  return kinds;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Registry registry(fuzz_kinds());
  static const LoadOptions options{{{"a", "10.0.0.1"}, {"d", "1s"}}};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  LoadResult r = load_scenario_text(text, "fuzz.yaml", registry, options);
  if (r.scenario.has_value() == !r.diagnostics.empty()) __builtin_trap();  // the contract of LoadResult
  if (!r.scenario) return 0;
  static const nlohmann::json actuals[] = {0, 12, -1.5, "ACTIVE", "12", "", true, nullptr};
  for (const auto& step : r.scenario->steps)
    for (const auto& fe : step.expect.facts)
      for (const auto& actual : actuals) (void)fe.matcher.check(actual);
  return 0;
}
