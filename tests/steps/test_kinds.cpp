// The list of kinds the binary ships, and what each declares.

#include <doctest/doctest.h>

#include "engine/loader.h"
#include "engine/registry.h"
#include "steps/kinds.h"

using namespace rxerun;

TEST_CASE("kinds: the registry is sorted and rejects duplicates") {
  Registry r(steps::all_kinds());
  CHECK(std::is_sorted(r.names().begin(), r.names().end()));
  CHECK(r.find("sleep") != nullptr);
  CHECK(r.find("slee") == nullptr);
  auto twice = steps::all_kinds();
  twice.push_back(steps::sleep_kind());
  CHECK_THROWS_AS(Registry(std::move(twice)), std::logic_error);
}

TEST_CASE("kinds: every kind documents itself and its example is a valid scenario") {
  Registry r(steps::all_kinds());
  for (const auto& k : r.kinds()) {
    CAPTURE(k.spec.name);
    CHECK_FALSE(k.spec.summary.empty());
    CHECK_FALSE(k.spec.example.empty());
    for (const auto& p : k.spec.params) CHECK_MESSAGE(!p.help.empty(), p.name);
    for (const auto& f : k.spec.facts) CHECK_MESSAGE(!f.help.empty(), f.name);
    // Indent the example under `steps:` and load it like a user's file.
    std::string text = "steps:\n";
    std::size_t pos = 0;
    while (pos < k.spec.example.size()) {
      auto nl = k.spec.example.find('\n', pos);
      if (nl == std::string::npos) nl = k.spec.example.size();
      text += "  " + k.spec.example.substr(pos, nl - pos) + "\n";
      pos = nl + 1;
    }
    auto loaded = load_scenario_text(text, k.spec.name + "-example.yaml", r, {});
    for (const auto& d : loaded.diagnostics) FAIL_CHECK(d.to_string());
    CHECK(loaded.scenario.has_value());
  }
}
