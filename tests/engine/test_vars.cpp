#include <doctest/doctest.h>

#include "engine/vars.h"

using namespace rxerun;
using nlohmann::json;

namespace {

const Vars kVars{{"a", "10.0.0.1"}, {"b", "10.0.0.2"}, {"dev.name", "vB"}, {"n-1", "5"}};

std::string ok(std::string_view text, const FactLookup* facts = nullptr) {
  auto r = expand(text, kVars, facts);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  return r.value();
}

std::string err(std::string_view text, const FactLookup* facts = nullptr) {
  auto r = expand(text, kVars, facts);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace

TEST_CASE("vars: expands {{name}} with and without whitespace") {
  CHECK(ok("{{a}}/24") == "10.0.0.1/24");
  CHECK(ok("{{ a }}") == "10.0.0.1");
  CHECK(ok("{{\ta\t}}") == "10.0.0.1");
  CHECK(ok("from {{a}} to {{ b }}!") == "from 10.0.0.1 to 10.0.0.2!");
  CHECK(ok("{{dev.name}}-{{n-1}}") == "vB-5");
  CHECK(ok("no vars") == "no vars");
  CHECK(ok("") == "");
  CHECK(ok("a { b } c }}") == "a { b } c }}");
}

TEST_CASE("vars: a substituted value is not expanded again") {
  Vars v{{"x", "{{y}}"}};
  auto r = expand("{{x}}", v);
  REQUIRE(r.ok());
  CHECK(r.value() == "{{y}}");
}

TEST_CASE("vars: errors") {
  CHECK(err("{{zzz}}") == "undefined variable 'zzz'");
  CHECK(err("{{aa}}") == "undefined variable 'aa' (did you mean 'a'?)");
  CHECK(err("x {{a") == "unterminated '{{' in '{{a'");
  CHECK(err("{{}}") == "empty variable name in '{{}}'");
  CHECK(err("{{  }}") == "empty variable name in '{{  }}'");
  CHECK(err("{{a b}}").starts_with("invalid variable name 'a b'"));
  CHECK(err("{{steps.x}}") == "expected {{steps.NAME.FACT}}, got '{{steps.x}}'");
  CHECK(err("{{steps..f}}").starts_with("expected {{steps.NAME.FACT}}"));
}

TEST_CASE("vars: step references stay as written without a FactLookup") {
  CHECK(ok("{{steps.gid1.index}}") == "{{steps.gid1.index}}");
  CHECK(ok("{{ steps.gid1.index }} and {{a}}") == "{{ steps.gid1.index }} and 10.0.0.1");
}

TEST_CASE("vars: step references read facts through the FactLookup") {
  std::vector<std::pair<std::string, std::string>> asked;
  FactLookup facts = [&](const std::string& step, const std::string& fact) -> Result<json> {
    asked.emplace_back(step, fact);
    if (fact == "index") return json(3);
    if (fact == "rxe1.sent_pkts") return json(12);
    if (fact == "state") return json("ACTIVE");
    if (fact == "ratio") return json(0.5);
    if (fact == "up") return json(true);
    return make_error("reported: index, state");
  };
  CHECK(ok("{{steps.gid1.index}}", &facts) == "3");
  CHECK(ok("{{steps.bw.rxe1.sent_pkts}}", &facts) == "12");
  CHECK(asked.back() == std::pair<std::string, std::string>{"bw", "rxe1.sent_pkts"});
  CHECK(ok("state={{steps.p.state}}", &facts) == "state=ACTIVE");
  CHECK(ok("{{steps.p.ratio}} {{steps.p.up}}", &facts) == "0.5 true");
  CHECK(err("{{steps.p.nope}}", &facts) == "step 'p' did not report fact 'nope' (reported: index, state)");
}

TEST_CASE("vars: expand_json expands every string, keys stay") {
  json v = {{"{{a}}", "{{a}}"}, {"list", {"{{b}}", 5, true}}, {"obj", {{"x", "{{dev.name}}"}}}};
  auto r = expand_json(v, kVars);
  REQUIRE(r.ok());
  CHECK(v["{{a}}"] == "10.0.0.1");
  CHECK(v["list"] == json({"10.0.0.2", 5, true}));
  CHECK(v["obj"]["x"] == "vB");
  json bad = {{"x", {"{{nope}}"}}};
  auto e = expand_json(bad, kVars);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message == "undefined variable 'nope'");
}

TEST_CASE("vars: step_references lists references in order") {
  auto refs = step_references("{{steps.a.x}} {{b}} {{ steps.bw.rxe1.sent_pkts }} {{ bad");
  REQUIRE(refs.size() == 2);
  CHECK(refs[0].step == "a");
  CHECK(refs[0].fact == "x");
  CHECK(refs[1].step == "bw");
  CHECK(refs[1].fact == "rxe1.sent_pkts");
  CHECK(step_references("{{a}} {{steps}}").empty());
}

TEST_CASE("vars: has_step_references looks inside arrays and objects") {
  CHECK(has_step_references(json("{{steps.a.b}}")));
  CHECK(has_step_references(json({{"x", {1, "{{steps.a.b}}"}}})));
  CHECK_FALSE(has_step_references(json({{"x", {1, "{{a}}"}}})));
  CHECK_FALSE(has_step_references(json(5)));
}

TEST_CASE("vars: a value is capped at 64 KiB after expansion, before the memory is spent") {
  const Vars v{{"big", std::string(40 * 1024, 'x')}, {"small", "y"}};
  auto one = expand("{{big}}", v);
  REQUIRE(one.ok());
  CHECK(one->size() == 40 * 1024);
  auto two = expand("{{big}}{{big}}", v);
  REQUIRE_FALSE(two.ok());
  CHECK(two.error().message ==
        "this value grows past 64 KiB when {{big}} is expanded: rxerun caps a value at 64 KiB after expansion");
  // Exactly the cap is fine; a byte of literal text past it is not.
  const Vars exact{{"x", std::string(kMaxExpandedValue, 'x')}};
  CHECK(expand("{{x}}", exact).ok());
  CHECK_FALSE(expand("{{x}}.", exact).ok());
  // A long literal without variables is not expansion (the file size limits it).
  CHECK(expand(std::string(kMaxExpandedValue + 10, 'z'), v).ok());
  // Facts at run time are capped the same way.
  FactLookup facts = [](const std::string&, const std::string&) -> Result<json> {
    return json(std::string(kMaxExpandedValue, 'f'));
  };
  CHECK(expand("{{steps.a.b}}", v, &facts).ok());
  CHECK_FALSE(expand("{{steps.a.b}}{{small}}", v, &facts).ok());
  json params = {{"list", {"{{steps.a.b}}", "-{{steps.a.b}}"}}};
  CHECK_FALSE(expand_json(params, v, &facts).ok());
}

TEST_CASE("vars: the substitutions of a scenario are capped at 4 MiB in all") {
  const Vars v{{"big", std::string(60 * 1024, 'x')}};
  ExpansionBudget budget;
  int ok_count = 0;
  Result<std::string> r = std::string();
  for (int i = 0; i < 1000 && (r = expand("{{big}}", v, nullptr, &budget)).ok(); ++i) ++ok_count;
  CHECK(ok_count == static_cast<int>(kMaxExpandedScenario / (60 * 1024)));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "expanding {{big}} here takes the variables substituted in this scenario past 4 MiB, rxerun's cap for a "
        "scenario: use large values fewer times");
  CHECK(budget.refused == 1);
  CHECK(budget.used <= kMaxExpandedScenario);
  // Without a budget (one value on its own) only the per-value cap applies.
  CHECK(expand("{{big}}", v).ok());
}
