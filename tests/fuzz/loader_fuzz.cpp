// libFuzzer target: the loader must turn any bytes into a scenario or into
// diagnostics, never crash, hang or throw. Matchers that load are also
// evaluated, since check() runs on whatever a step reports.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/loader.h"
#include "support/test_kinds.h"

using namespace rxerun;

// The loader's test kinds (shaped like the shipped ones, plus one parameter
// of every type), so that every checking path is reachable.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Registry registry(rxerun::testing::loader_test_kinds());
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
