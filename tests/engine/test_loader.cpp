#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/loader.h"
#include "support/test_kinds.h"

using namespace rxerun;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const Registry& registry() {
  static const Registry r(rxerun::testing::loader_test_kinds());
  return r;
}

LoadResult load(std::string_view text, LoadOptions options = {}, const std::string& file = "t.yaml") {
  return load_scenario_text(text, file, registry(), options);
}

// All diagnostics, as printed.
std::vector<std::string> errors(std::string_view text, LoadOptions options = {}) {
  auto r = load(text, std::move(options));
  CHECK_FALSE(r.scenario.has_value());
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(d.to_string());
  return out;
}

// The one diagnostic of an invalid scenario.
std::string error(std::string_view text, LoadOptions options = {}) {
  auto all = errors(text, std::move(options));
  REQUIRE_MESSAGE(all.size() == 1, fmt::format("{}", fmt::join(all, "\n")));
  return all.front();
}

Scenario valid(std::string_view text, LoadOptions options = {}) {
  auto r = load(text, std::move(options));
  std::string all;
  for (const auto& d : r.diagnostics) all += d.to_string() + "\n";
  REQUIRE_MESSAGE(r.scenario.has_value(), all);
  return *r.scenario;
}

bool same(Mark a, Mark b) {
  return a.line == b.line && a.col == b.col;
}

}  // namespace

// ---------------------------------------------------------------- valid files

TEST_CASE("loader: a valid scenario becomes the model") {
  const char* text = R"(# lab
name: lab-1
description: "from {{a}}"
vm: {kernel: 7.10}
vars:
  a: 10.0.0.1
  n: 3
steps:
  - netns: {name: lab}
  - sleep: {duration: 1.5s}
    netns: lab
    timeout: 2s
    retries: 2
    delay: 500ms
    tags: [slow, "fast"]
  - name: b1
    block: {proto: udp}
    expect: fail
  - revert: b1
    expect: {packets: "> 0", outcome: timeout}
)";
  Scenario s = valid(text);
  CHECK(s.file == "t.yaml");
  CHECK(s.name == "lab-1");
  CHECK(s.description == "from 10.0.0.1");
  CHECK(s.vm_kernel == "7.10");  // read as written, not as the number 7.1
  CHECK(s.vars == std::map<std::string, std::string>{{"a", "10.0.0.1"}, {"n", "3"}});
  REQUIRE(s.steps.size() == 4);

  const StepSpec& ns = s.steps[0];
  CHECK(ns.index == 0);
  CHECK(ns.kind == "netns");
  CHECK(ns.name == "netns-1");
  CHECK_FALSE(ns.named);
  CHECK_FALSE(ns.netns.has_value());  // `netns:` alone is the kind, not the common key
  CHECK(ns.params == json{{"name", "lab"}});
  CHECK(same(ns.mark, {9, 5}));
  CHECK(same(ns.marks.at(""), {9, 5}));
  CHECK(same(ns.marks.at("name"), {9, 19}));

  const StepSpec& sl = s.steps[1];
  CHECK(sl.name == "sleep-2");
  CHECK(sl.netns == "lab");
  CHECK(sl.timeout == 2s);
  CHECK(sl.retries == 2);
  CHECK(sl.delay == 500ms);
  CHECK(sl.tags == std::vector<std::string>{"slow", "fast"});
  CHECK(sl.params == json{{"duration", "1.5s"}});
  CHECK(sl.expect.outcome == Outcome::Ok);

  const StepSpec& bl = s.steps[2];
  CHECK(bl.name == "b1");
  CHECK(bl.named);
  CHECK(same(bl.mark, {16, 5}));
  CHECK(same(bl.marks.at(""), {17, 5}));
  CHECK(bl.expect.outcome == Outcome::Fail);
  CHECK(bl.delay == 1000ms);  // the default
  CHECK_FALSE(bl.timeout.has_value());

  const StepSpec& rv = s.steps[3];
  CHECK(rv.kind == "revert");
  CHECK(rv.params == json("b1"));
  CHECK(same(rv.marks.at("step"), {19, 13}));
  CHECK(rv.expect.outcome == Outcome::Timeout);
  REQUIRE(rv.expect.facts.size() == 1);
  CHECK(rv.expect.facts[0].fact == "packets");
  CHECK(rv.expect.facts[0].matcher.op == Matcher::Op::Gt);
  CHECK(same(rv.expect.facts[0].mark, {20, 23}));
}

TEST_CASE("loader: the name defaults to the file's stem, sanitised") {
  const char* text = "steps: [{sleep: {duration: 1s}}]\n";
  CHECK(load(text, {}, "scenarios/veth-pair.yaml").scenario->name == "veth-pair");
  CHECK(load(text, {}, "/x/my lab (2).yaml").scenario->name == "my-lab--2-");
  CHECK(load(text, {}, "_-.yaml").scenario->name == "scenario");
  CHECK(load(text, {}, std::string(100, 'a') + ".yml").scenario->name == std::string(64, 'a'));
}

TEST_CASE("loader: parameters are normalised by type and defaults filled in") {
  const char* text = R"(vars: {n: "3", a: 10.0.0.1}
steps:
  - name: first
    sleep: {duration: 1s}
  - every:
      s: 5
      i: "{{n}}"
      b: true
      o: off
      d: 1.5s
      dev: vB
      ns: lab
      addr: "{{a}}"
      cidr: "{{ a }}/24"
      list: [10.0.0.1, "::1"]
      e: write_bw
      sc: 0
      ref: first
      server: {dev: rxe0}
  - rping: {server: 10.0.0.2, count: 5}
  - offload: {dev: vB, gro: off, tso: on, gso: false}
  - every: {sc: on}
  - every: {sc: "0"}
  - every: {sc: 1.5}
)";
  Scenario s = valid(text);
  const json& p = s.steps[1].params;
  CHECK(p["s"] == "5");
  CHECK(p["i"] == 3);
  CHECK(p["b"] == true);
  CHECK(p["o"] == false);
  CHECK(p["d"] == "1.5s");
  CHECK(p["addr"] == "10.0.0.1");
  CHECK(p["cidr"] == "10.0.0.1/24");
  CHECK(p["list"] == json({"10.0.0.1", "::1"}));
  CHECK(p["sc"] == 0);
  CHECK(p["ref"] == "first");
  CHECK(p["server"] == json{{"dev", "rxe0"}, {"port", 1}});
  CHECK(p["def"] == "dflt");
  CHECK_FALSE(p.contains("ns2"));
  const auto& marks = s.steps[1].marks;
  CHECK(same(marks.at("server"), {19, 15}));
  CHECK(same(marks.at("server.dev"), {19, 21}));
  CHECK(same(marks.at("list.1"), {15, 24}));
  CHECK(s.steps[2].params == json{{"server", "10.0.0.2"}, {"count", 5}});
  CHECK(s.steps[3].params == json{{"dev", "vB"}, {"gro", false}, {"tso", true}, {"gso", false}});
  CHECK(s.steps[4].params["sc"] == "on");  // a scalar is kept as written
  CHECK(s.steps[5].params["sc"] == "0");   // quoted: a string
  CHECK(s.steps[6].params["sc"] == 1.5);
}

TEST_CASE("loader: null and empty parameters") {
  Scenario s = valid("steps:\n  - counters:\n  - counters: {}\n  - every: {s: , i: }\n");
  CHECK(s.steps[0].params == json::object());
  CHECK(s.steps[1].params == json::object());
  CHECK(s.steps[2].params == json{{"def", "dflt"}});  // null is absent
  CHECK(error("steps:\n  - sleep:\n") == "t.yaml:2:5: missing required parameter 'duration' for 'sleep'");
  CHECK(error("steps:\n  - sleep: {duration: }\n") == "t.yaml:2:13: missing required parameter 'duration' for 'sleep'");
  CHECK(error("steps:\n  - revert:\n") == "t.yaml:2:5: missing required parameter 'step' for 'revert'");
}

TEST_CASE("loader: tags are a list or a single string") {
  Scenario s = valid("steps:\n  - sleep: {duration: 1s}\n    tags: one\n  - sleep: {duration: 1s}\n    tags: [a, b]\n");
  CHECK(s.steps[0].tags == std::vector<std::string>{"one"});
  CHECK(s.steps[1].tags == std::vector<std::string>{"a", "b"});
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    tags: [[x]]\n") ==
        "t.yaml:3:12: a tag must be a non-empty string, got a list");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    tags: {a: 1}\n") ==
        "t.yaml:3:11: a tag must be a non-empty string, got a mapping");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    tags: [\"\"]\n") ==
        "t.yaml:3:12: a tag must be a non-empty string, got ''");
}

TEST_CASE("loader: expect") {
  Scenario s = valid(R"(steps:
  - sleep: {duration: 1s}
    expect: {slept_ms: 5}
  - sleep: {duration: 1s}
    expect: {slept_ms: "~ ^1", outcome: fail}
  - sleep: {duration: 1s}
    expect: timeout
  - counters: {}
    expect: {rxe0.sent_pkts: "> 0", vB.tx_packets: "!= 0"}
  - rping: {server: 10.0.0.1}
    expect: {sent: 5, rxe1.rcvd_pkts: "> 0"}
)");
  CHECK(s.steps[0].expect.outcome == Outcome::Ok);
  CHECK(s.steps[0].expect.facts[0].matcher.operand == 5);
  CHECK(s.steps[1].expect.outcome == Outcome::Fail);
  CHECK(s.steps[1].expect.facts[0].matcher.op == Matcher::Op::Match);
  CHECK(s.steps[2].expect.outcome == Outcome::Timeout);
  CHECK(s.steps[3].expect.facts.size() == 2);  // dynamic facts: any name
  CHECK(s.steps[4].expect.facts.size() == 2);  // "DEV.COUNTER" is a pattern
}

TEST_CASE("loader: an integer expected stays exact up to 64 bits, unsigned too") {
  Scenario s = valid(R"(steps:
  - counters: {}
    expect: {a.all_ones: 18446744073709551615, a.big: 9223372036854775807, a.low: -9223372036854775808, a.huge: 99999999999999999999}
)");
  const auto& f = s.steps[0].expect.facts;
  REQUIRE(f.size() == 4);
  CHECK(f[0].matcher.operand.is_number_unsigned());
  CHECK_FALSE(f[0].matcher.check(json(18446744073709551615ULL)));  // holds
  CHECK(f[0].matcher.check(json(18446744073709551614ULL)));        // does not
  CHECK(f[1].matcher.operand == 9223372036854775807LL);
  CHECK(f[2].matcher.operand == std::numeric_limits<long long>::min());
  CHECK(f[3].matcher.operand.is_number_float());  // past 64 bits: a double, as before
}

TEST_CASE("loader: expect errors") {
  const std::string step = "steps:\n  - sleep: {duration: 1s}\n    expect: ";
  CHECK(error(step + "fial\n") ==
        "t.yaml:3:13: expected outcome must be ok, fail or timeout, got 'fial' (did you mean 'fail'?)");
  CHECK(error(step + "[ok]\n") ==
        "t.yaml:3:13: 'expect' must be ok, fail, timeout or a mapping of facts to matchers, "
        "got a list");
  CHECK(error(step + "{slept_m: 5}\n") ==
        "t.yaml:3:14: unknown fact 'slept_m' for 'sleep' (did you mean 'slept_ms'?); it reports slept_ms");
  CHECK(error(step + "{slept: 5}\n") ==
        "t.yaml:3:14: unknown fact 'slept' for 'sleep' (did you mean 'slept_ms'?); it reports slept_ms");
  CHECK(error(step + "{slept_ms: \"~ [a-\"}\n").starts_with("t.yaml:3:24: fact 'slept_ms': invalid regex '[a-'"));
  CHECK(error(step + "{slept_ms: \"> abc\"}\n") ==
        "t.yaml:3:24: fact 'slept_ms': matcher '> abc': '>' needs a number, got 'abc' (write '== > abc' to compare "
        "as text)");
  CHECK(error(step + "{slept_ms: {a: 1}}\n") ==
        "t.yaml:3:24: fact 'slept_ms': a matcher is a value, a list of values or a string such as \"> 0\", got a "
        "mapping");
  CHECK(error(step + "{slept_ms: [1, [2]]}\n") ==
        "t.yaml:3:28: fact 'slept_ms': a list matcher holds plain values (each item equal to the fact's), got a list "
        "in it");
  CHECK(error(step + "{outcome: maybe}\n") == "t.yaml:3:23: expected outcome must be ok, fail or timeout, got 'maybe'");
  CHECK(error("steps:\n  - block: {proto: udp}\n    expect: {sent: 1}\n") ==
        "t.yaml:3:14: unknown fact 'sent' for 'block'; it reports packets, bytes");
  CHECK(error("steps:\n  - netns: {name: x}\n    expect: {sent: 1}\n") ==
        "t.yaml:3:14: unknown fact 'sent': 'netns' reports no facts");
}

TEST_CASE("loader: revert reports the facts of the step it reverts") {
  valid("steps:\n  - name: b\n    block: {proto: udp}\n  - revert: b\n    expect: {packets: \"> 0\"}\n");
  CHECK(error("steps:\n  - name: b\n    block: {proto: udp}\n  - revert: b\n    expect: {packet: \"> 0\"}\n") ==
        "t.yaml:5:14: unknown fact 'packet' for 'revert' (it reverts a 'block' step) (did you mean 'packets'?); it "
        "reports packets, bytes");
  CHECK(error("steps:\n  - revert: nope\n") == "t.yaml:2:13: no earlier step is named 'nope'");
  CHECK(error("steps:\n  - name: blk\n    block: {proto: udp}\n  - revert: bkl\n") ==
        "t.yaml:4:13: no earlier step is named 'bkl' (did you mean 'blk'?)");
  CHECK(error("steps:\n  - revert: later\n  - name: later\n    sleep: {duration: 1s}\n") ==
        "t.yaml:2:13: no earlier step is named 'later'");
  CHECK(error("steps:\n  - revert: [x]\n") == "t.yaml:2:13: 'step' must be the name of an earlier step, got a list");
}

// ------------------------------------------------------------ variables

TEST_CASE("loader: variables are expanded before type checks") {
  Scenario s = valid("vars: {a: 10.0.0.1, d: 2s}\nsteps:\n  - every: {cidr: \"{{a}}/24\", d: \"{{d}}\"}\n");
  CHECK(s.steps[0].params["cidr"] == "10.0.0.1/24");
  CHECK(error("vars: {a: 10.0.0.1}\nsteps:\n  - every: {cidr: \"{{a}}/33\"}\n") ==
        "t.yaml:3:19: 'cidr' must be an address/prefix such as 10.0.0.1/24, got '10.0.0.1/33': prefix 33 is out of "
        "range 0..32");
  CHECK(error("steps:\n  - sleep: {duration: \"{{d}}\"}\n") == "t.yaml:2:23: undefined variable 'd'");
  CHECK(error("vars: {dd: 1s}\nsteps:\n  - sleep: {duration: \"{{d}}\"}\n") ==
        "t.yaml:3:23: undefined variable 'd' (did you mean 'dd'?)");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    timeout: \"{{t}}\"\n") == "t.yaml:3:14: undefined variable 't'");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    expect: {slept_ms: \"{{x}}\"}\n") ==
        "t.yaml:3:24: undefined variable 'x'");
  CHECK(error("steps:\n  - sleep: {duration: \"{{d\"}\n") == "t.yaml:2:23: unterminated '{{' in '{{d'");
  CHECK(error("steps:\n  - sleep: {duration: \"{{ }}\"}\n") == "t.yaml:2:23: empty variable name in '{{ }}'");
}

TEST_CASE("loader: --var overrides win and may define new variables") {
  const char* text = "vars: {d: 1s}\nsteps:\n  - sleep: {duration: \"{{d}}\"}\n    timeout: \"{{t}}\"\n";
  Scenario s = valid(text, LoadOptions{{{"d", "5s"}, {"t", "9s"}}});
  CHECK(s.steps[0].params["duration"] == "5s");
  CHECK(s.steps[0].timeout == 9s);
  CHECK(s.vars.at("d") == "5s");
  CHECK(error("steps: [{sleep: {duration: 1s}}]\n", LoadOptions{{{"bad name", "x"}}}) ==
        "t.yaml:1:1: --var bad name: invalid variable name 'bad name': use letters, digits, '_', '.' and '-'");
}

TEST_CASE("loader: vars errors") {
  CHECK(error("vars: [a]\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:7: 'vars' must be a mapping of names to values, got a list");
  CHECK(errors("vars: {a: [1], \"b c\": 1, d: , e: \"{{x}}\", steps.x: 1}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        std::vector<std::string>{
            "t.yaml:1:11: variable 'a' must have a string, number or bool value, got a list",
            "t.yaml:1:16: invalid variable name 'b c': use letters, digits, '_', '.' and '-'",
            "t.yaml:1:26: variable 'd' must have a string, number or bool value, got nothing",
            "t.yaml:1:34: the value of variable 'e' cannot contain '{{'",
            "t.yaml:1:43: variable name 'steps.x' is reserved for {{steps.NAME.FACT}}",
        });
}

TEST_CASE("loader: {{steps.NAME.FACT}} must name an earlier step and a fact it reports") {
  Scenario s = valid(R"(steps:
  - name: ev
    every: {}
  - name: c
    counters: {}
  - rping: {server: "{{steps.ev.index}}", count: "{{ steps.c.rxe0.sent_pkts }}"}
)");
  CHECK(s.steps[2].params["server"] == "{{steps.ev.index}}");  // resolved at run time
  CHECK(error("steps:\n  - rping: {server: \"{{steps.nope.x}}\"}\n") ==
        "t.yaml:2:21: unknown step 'nope' in {{steps.nope.x}}");
  CHECK(error("steps:\n  - name: blk\n    block: {proto: udp}\n  - rping: {server: \"{{steps.bkl.packets}}\"}\n") ==
        "t.yaml:4:21: unknown step 'bkl' in {{steps.bkl.packets}} (did you mean 'blk'?)");
  CHECK(error("steps:\n  - rping: {server: \"{{steps.later.x}}\"}\n  - name: later\n    sleep: {duration: 1s}\n") ==
        "t.yaml:2:21: step 'later' in {{steps.later.x}} comes later: only earlier steps' facts can be read");
  CHECK(error("steps:\n  - name: s\n    sleep: {duration: 1s}\n  - rping: {server: \"{{steps.s.slept-ms}}\"}\n") ==
        "t.yaml:4:21: unknown fact 'slept-ms' for 'sleep' (did you mean 'slept_ms'?); it reports slept_ms (in "
        "{{steps.s.slept-ms}})");
  CHECK(error("steps:\n  - name: s\n    sleep: {duration: 1s}\n  - sleep: {duration: 1s}\n    timeout: "
              "\"{{steps.s.slept_ms}}\"\n") ==
        "t.yaml:5:14: 'timeout' cannot read facts of other steps ({{steps.s.slept_ms}}): only parameters can");
  CHECK(error("steps:\n  - name: s\n    sleep: {duration: 1s}\n  - sleep: {duration: 1s}\n    expect: {slept_ms: "
              "\"{{steps.s.slept_ms}}\"}\n") ==
        "t.yaml:5:24: a matcher cannot read facts of other steps ({{steps.s.slept_ms}}): only parameters can");
}

// ------------------------------------------------------------ structure errors

TEST_CASE("loader: empty files") {
  CHECK(error("") == "t.yaml:1:1: empty scenario: expected a mapping with 'steps'");
  CHECK(error("# only\n\n# comments\n") == "t.yaml:1:1: empty scenario: expected a mapping with 'steps'");
  CHECK(error("---\n") == "t.yaml:1:1: empty scenario: expected a mapping with 'steps'");
  CHECK(error("  \n\n") == "t.yaml:1:1: empty scenario: expected a mapping with 'steps'");
}

TEST_CASE("loader: YAML syntax errors are placed at the parser's mark") {
  CHECK(error("steps:\n  - sleep: {duration: 1s\n") == "t.yaml:3:1: YAML syntax error: end of map flow not found");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n   bad: x\n") ==
        "t.yaml:3:4: YAML syntax error: end of sequence not found");
  CHECK(error("a: b: c\n") == "t.yaml:1:5: YAML syntax error: illegal map value");
  CHECK(error("steps:\n\t- sleep: {duration: 1s}\n") == "t.yaml:2:2: YAML syntax error: illegal block entry");
  CHECK(error("steps: [*nope]\n") == "t.yaml:1:9: YAML syntax error: the referenced anchor is not defined");
  CHECK(error("steps: [{sleep: {duration: 1s}}]\n---\nsteps: []\n") ==
        "t.yaml:2:1: a scenario file holds one YAML document; a second one starts here");
  // yaml-cpp's LoadAll() would loop forever on these
  CHECK(error(",") == "t.yaml:1:1: YAML syntax error: unexpected ','");
  CHECK(error(",steps:\n  - sleep: {duration: 1s}\n") == "t.yaml:1:1: YAML syntax error: unexpected ','");
  CHECK(error("[a]\n,") == "t.yaml:2:1: YAML syntax error: unexpected ','");
}

TEST_CASE("loader: a second document is found wherever the first one ends") {
  const std::string second = "a scenario file holds one YAML document; a second one starts here";
  // A block mapping whose keys start in column 0 ends only at a document
  // marker or a directive ...
  CHECK(error("steps: [{sleep: {duration: 1s}}]\n...\nsteps: []\n") == "t.yaml:3:1: " + second);
  CHECK(error("steps: [{sleep: {duration: 1s}}]\n--- \nsteps: []\n") == "t.yaml:2:1: " + second);
  CHECK(error("steps: [{sleep: {duration: 1s}}]\n---\n") == "t.yaml:2:1: " + second);
  CHECK(error("steps: [{sleep: {duration: 1s}}]\n%YAML 1.2\n---\nsteps: []\n") == "t.yaml:3:1: " + second);
  CHECK(error("\xef\xbb\xbfsteps: [{sleep: {duration: 1s}}]\n---\nsteps: []\n") == "t.yaml:2:1: " + second);
  // ... an indented one, or one whose first key is not in column 0, at a dedent.
  CHECK(error("  steps: [{sleep: {duration: 1s}}]\nname: x\n") == "t.yaml:2:1: " + second);
  CHECK(error("!!map\n  steps: [{sleep: {duration: 1s}}]\nname: x\n") == "t.yaml:3:1: " + second);
  CHECK(error("- a\nsteps: x\n") == "t.yaml:2:1: " + second);
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n[a]\n") == "t.yaml:3:1: YAML syntax error: end of map not found");
  // One document: a document end marker, a complex key, a key that starts like a marker.
  CHECK(valid("steps: [{sleep: {duration: 1s}}]\n...\n").steps.size() == 1);
  CHECK(valid("? steps\n: [{sleep: {duration: 1s}}]\n").steps.size() == 1);
  CHECK(error("steps: [{sleep: {duration: 1s}}]\n---x: 1\n") == "t.yaml:2:1: unknown key '---x' at the top level");
}

TEST_CASE("loader: top level") {
  CHECK(error("- a\n") == "t.yaml:1:1: a scenario must be a mapping with 'steps', got a list");
  CHECK(error("just text\n") == "t.yaml:1:1: a scenario must be a mapping with 'steps', got 'just text'");
  CHECK(errors("step:\n  - sleep: {duration: 1s}\n") ==
        std::vector<std::string>{"t.yaml:1:1: unknown key 'step' at the top level (did you mean 'steps'?)",
                                 "t.yaml:1:1: missing 'steps': a scenario needs a list of steps"});
  CHECK(error("name: x\n") == "t.yaml:1:1: missing 'steps': a scenario needs a list of steps");
  CHECK(error("steps: []\n") == "t.yaml:1:8: 'steps' is empty: a scenario needs at least one step");
  CHECK(error("steps:\n") == "t.yaml:1:1: 'steps' is empty: a scenario needs at least one step");
  CHECK(error("steps: {sleep: 1}\n") == "t.yaml:1:8: 'steps' must be a list of steps, got a mapping");
  CHECK(error("name: \"bad name\"\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:7: 'name' must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, got "
        "'bad name'");
  CHECK(error("name: [x]\nsteps: [{sleep: {duration: 1s}}]\n") == "t.yaml:1:7: 'name' must be a string, got a list");
  CHECK(error("description: {a: 1}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:14: 'description' must be a string, got a mapping");
  CHECK(error("vm: {kernal: 7}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:6: unknown key 'kernal' in 'vm' (did you mean 'kernel'?)");
  CHECK(error("vm: 7\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:5: 'vm' must be a mapping such as {kernel: \"7.3\"}, got '7'");
  CHECK(error("vm: {kernel: \"\"}\nsteps: [{sleep: {duration: 1s}}]\n") == "t.yaml:1:14: 'vm.kernel' cannot be empty");
}

TEST_CASE("loader: vm.kernels, a matrix of lab kernels") {
  Scenario s = valid("vm: {kernels: [\"6.1\", \"7.10\"]}\nsteps: [{sleep: {duration: 1s}}]\n");
  CHECK(s.vm_kernels == std::vector<std::string>{"6.1", "7.10"});
  CHECK_FALSE(s.vm_kernel);
  CHECK(error("vm: {kernels: []}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:15: 'vm.kernels' must be a list of lab kernels such as [\"6.1\", \"7.3\"], got an empty list");
  CHECK(error("vm: {kernels: \"6.1\"}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:15: 'vm.kernels' must be a list of lab kernels such as [\"6.1\", \"7.3\"], got '6.1'");
  CHECK(error("vm: {kernels: [\"6.1\", \"6.1\"]}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:23: kernel '6.1' is in 'vm.kernels' twice");
  CHECK(error("vm: {kernel: \"6.1\", kernels: [\"7.3\"]}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:30: 'vm' names both 'kernel' and 'kernels': use 'kernels' alone to run on several kernels");
  CHECK(error("vm: {kernels: [\"\"]}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:16: a kernel in 'vm.kernels' cannot be empty");
}

TEST_CASE("loader: plugins, loaded before the steps that use their kinds") {
  Registry reg(rxerun::testing::loader_test_kinds());
  std::vector<std::string> asked;
  LoadOptions o;
  o.load_plugin = [&](const std::string& path) -> Result<void> {
    asked.push_back(path);
    if (!path.ends_with("/gadget.so")) return make_error("plugin " + path + ": No such file or directory");
    if (reg.find("gadget")) return {};
    Kind k{KindSpec{.name = "gadget", .params = {{.name = "size", .type = ParamType::Int, .required = true}}}, {}, {}};
    k.plugin = path;
    return reg.add({std::move(k)});
  };
  // The steps come first in the file: the plugin is still loaded before them.
  const std::string text = "steps:\n  - gadget: {size: 3}\nplugins: [lib/gadget.so, /opt/x/../gadget.so]\n";
  auto r = load_scenario_text(text, "/labs/one/t.yaml", reg, o);
  REQUIRE(r.scenario);
  CHECK(r.scenario->plugins == std::vector<std::string>{"/labs/one/lib/gadget.so", "/opt/gadget.so"});
  CHECK(asked == r.scenario->plugins);
  CHECK(r.scenario->steps.at(0).kind == "gadget");

  auto bad =
      load_scenario_text("steps:\n  - gadget: {size: many}\nplugins: [lib/gadget.so]\n", "/labs/one/t.yaml", reg, o);
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK(bad.diagnostics[0].to_string() == "/labs/one/t.yaml:2:20: 'size' must be an integer, got 'many'");

  auto missing = load_scenario_text("plugins: [gone.so]\nsteps:\n  - sleep: {duration: 1s}\n", "/l/t.yaml", reg, o);
  REQUIRE(missing.diagnostics.size() == 1);
  CHECK(missing.diagnostics[0].to_string() == "/l/t.yaml:1:11: plugin /l/gone.so: No such file or directory");
  // The steps of a plugin that could not be loaded are not errors on top of it.
  auto quiet = load_scenario_text("plugins: [gone.so]\nsteps:\n  - widget: {x: 1}\n", "/l/t.yaml", reg, o);
  CHECK(quiet.diagnostics.size() == 1);

  auto shape = [&](const std::string& t) {
    auto x = load_scenario_text(t, "t.yaml", reg, o);
    return x.diagnostics.empty() ? std::string() : x.diagnostics[0].to_string();
  };
  CHECK(shape("plugins: lib/gadget.so\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:10: 'plugins' must be a list of paths, got 'lib/gadget.so'");
  CHECK(shape("plugins: [\"\"]\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:11: a plugin must be the path of a shared object, got ''");

  // cleanup: a plugin that cannot be loaded is a warning, and its kinds' steps are kept without a kind.
  o.plugins_may_fail = true;
  auto lenient =
      load_scenario_text("plugins: [gone.so]\nsteps:\n  - widget: {x: 1}\n    netns: lab\n  - sleep: {duration: 1s}\n",
                         "/l/t.yaml", reg, o);
  REQUIRE(lenient.scenario);
  REQUIRE(lenient.warnings.size() == 1);
  CHECK(lenient.warnings[0].to_string() == "/l/t.yaml:1:11: plugin /l/gone.so: No such file or directory");
  CHECK(lenient.scenario->steps.at(0).kind.empty());
  CHECK(lenient.scenario->steps.at(0).netns == std::optional<std::string>("lab"));
  // ...and only then: with every plugin loaded, an unknown kind is still an error.
  auto strict = load_scenario_text("plugins: [lib/gadget.so]\nsteps:\n  - widget: {x: 1}\n", "/l/t.yaml", reg, o);
  CHECK_FALSE(strict.scenario);
}

TEST_CASE("loader: duplicate keys in any mapping") {
  CHECK(error("steps: [{sleep: {duration: 1s}}]\nname: a\nname: b\n") ==
        "t.yaml:3:1: duplicate key 'name' (first at 2:1)");
  CHECK(error("steps:\n  - sleep: {duration: 1s, duration: 2s}\n") ==
        "t.yaml:2:27: duplicate key 'duration' (first at 2:13)");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    tags: a\n    tags: b\n") ==
        "t.yaml:4:5: duplicate key 'tags' (first at 3:5)");
  CHECK(error("vars: {a: 1, a: 2}\nsteps: [{sleep: {duration: 1s}}]\n") ==
        "t.yaml:1:14: duplicate key 'a' (first at 1:8)");
  CHECK(error("? [a]\n: b\nsteps: [{sleep: {duration: 1s}}]\n") == "t.yaml:1:3: a mapping key must be a plain string");
}

TEST_CASE("loader: step kinds") {
  CHECK(error("steps:\n  - slep: {duration: 1s}\n") ==
        "t.yaml:2:5: step has no kind: 'slep' is not one of block, counters, every, netns, offload, revert, rping, "
        "sleep (did you mean 'sleep'?)");
  CHECK(
      errors("steps:\n  - frob: {duration: 1s}\n") ==
      std::vector<std::string>{
          "t.yaml:2:5: step has no kind: expected one of block, counters, every, netns, offload, revert, rping, sleep",
          "t.yaml:2:5: unknown key 'frob' in step"});
  CHECK(error("steps:\n  - name: x\n") ==
        "t.yaml:2:5: step has no kind: expected one of block, counters, every, netns, offload, revert, rping, sleep");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    block: {proto: udp}\n") ==
        "t.yaml:3:5: step has two kinds, 'sleep' and 'block': a step does exactly one thing");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    timout: 5s\n") ==
        "t.yaml:3:5: unknown key 'timout' in step (did you mean 'timeout'?)");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    reverd: x\n") ==
        "t.yaml:3:5: unknown key 'reverd' in step (did you mean 'revert'?)");
  CHECK(error("steps:\n  - sleep\n") ==
        "t.yaml:2:5: a step must be a mapping with one kind key, got 'sleep' ('sleep' needs its parameters: 'sleep: "
        "...')");
  CHECK(error("steps:\n  - [a]\n") == "t.yaml:2:5: a step must be a mapping with one kind key, got a list");
  CHECK(error("steps:\n  - sleep: 5s\n") == "t.yaml:2:5: 'sleep' takes a mapping of parameters, got '5s'");
}

TEST_CASE("loader: `netns` beside a kind is the common key") {
  Scenario s = valid("steps:\n  - sleep: {duration: 1s}\n    netns: lab\n  - netns: {name: lab2}\n");
  CHECK(s.steps[0].kind == "sleep");
  CHECK(s.steps[0].netns == "lab");
  CHECK(s.steps[1].kind == "netns");
  CHECK(error("steps:\n  - netns: {name: a}\n    sleep: {duration: 1s}\n") ==
        "t.yaml:2:12: 'netns' must be a scalar, got a mapping");
}

TEST_CASE("loader: step names") {
  Scenario s = valid("steps:\n  - sleep: {duration: 1s}\n  - name: x.y-z_1\n    sleep: {duration: 1s}\n");
  CHECK(s.steps[0].name == "sleep-1");
  CHECK(s.steps[1].name == "x.y-z_1");
  CHECK(s.steps[1].named);
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    name: a\n  - sleep: {duration: 1s}\n    name: a\n") ==
        "t.yaml:5:11: duplicate step name 'a' (first at 3:11)");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n  - sleep: {duration: 1s}\n    name: sleep-1\n") ==
        "t.yaml:4:11: duplicate step name 'sleep-1' (first at 2:5)");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    name: \"a b\"\n") ==
        "t.yaml:3:11: step name 'a b' may hold only letters, digits, '_', '.' and '-'");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    name: [a]\n") ==
        "t.yaml:3:11: a step's 'name' must be a string, got a list");
}

TEST_CASE("loader: common step keys") {
  CHECK(errors("steps:\n  - sleep: {duration: 1s}\n    timeout: 5\n    retries: 101\n    delay: -1s\n    netns: "
               "\"a b\"\n") ==
        std::vector<std::string>{
            "t.yaml:3:14: 'timeout' must be a duration with a unit (500ms, 5s, 1m, 1h), got '5'",
            "t.yaml:4:14: 'retries' must be an integer from 0 to 100, got '101'",
            "t.yaml:5:12: 'delay' must be a duration with a unit (500ms, 5s, 1m, 1h), got '-1s'",
            "t.yaml:6:12: 'netns' is not a valid namespace name: contains whitespace or a control character ('a b')",
        });
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    retries: abc\n") ==
        "t.yaml:3:14: 'retries' must be an integer from 0 to 100, got 'abc'");
  CHECK(error("steps:\n  - sleep: {duration: 1s}\n    retries: -1\n") ==
        "t.yaml:3:14: 'retries' must be an integer from 0 to 100, got '-1'");
  CHECK(valid("steps:\n  - sleep: {duration: 1s}\n    retries: 100\n").steps[0].retries == 100);
}

// ------------------------------------------------------------ parameters

TEST_CASE("loader: parameter type errors name the expected type, at the value") {
  CHECK(errors(R"(steps:
  - every: {i: 1.5, b: yes, o: maybe, d: 5, dev: abcdefghijklmnop, ns: a/b, addr: 1.2.3, cidr: 1.2.3.4/33}
  - every: {list: 1.2.3.4, e: wirte_bw, sc: [1], ref: x, server: {prot: 1}, bogus: 1}
  - every: {i: abc, list: [1.2.3.4, x], server: 5}
  - every: {i: 0}
  - rping: {server: 10.0.0.1, count: 1001}
)") == std::vector<std::string>{
           "t.yaml:2:16: 'i' must be an integer, got '1.5'",
           "t.yaml:2:24: 'b' must be true or false, got 'yes'",
           "t.yaml:2:32: 'o' must be on or off, got 'maybe'",
           "t.yaml:2:42: 'd' must be a duration with a unit (500ms, 5s, 1m, 1h), got '5'",
           "t.yaml:2:50: 'dev' is not a valid interface name: longer than 15 bytes (16) ('abcdefghijklmnop')",
           "t.yaml:2:72: 'ns' is not a valid namespace name: contains '/' ('a/b')",
           "t.yaml:2:83: 'addr' must be an IPv4 or IPv6 address, got '1.2.3'",
           "t.yaml:2:96: 'cidr' must be an address/prefix such as 10.0.0.1/24, got '1.2.3.4/33': prefix 33 is out of "
           "range 0..32",
           "t.yaml:3:19: 'list' must be a list of addresses, got '1.2.3.4'",
           "t.yaml:3:31: 'e' must be one of write_bw, read_bw, got 'wirte_bw' (did you mean 'write_bw'?)",
           "t.yaml:3:45: 'sc' must be a string, number or bool, got a list",
           "t.yaml:3:55: no earlier step is named 'x'",
           "t.yaml:3:66: missing required parameter 'server.dev' for 'every'",
           "t.yaml:3:67: unknown parameter 'server.prot' for 'every' (did you mean 'port'?)",
           "t.yaml:3:77: unknown parameter 'bogus' for 'every'",
           "t.yaml:4:16: 'i' must be an integer, got 'abc'",
           "t.yaml:4:37: 'list' must hold IPv4 or IPv6 addresses, got 'x'",
           "t.yaml:4:49: 'server' must be a mapping, got '5'",
           "t.yaml:5:16: 'i' must be >= 1, got 0",
           "t.yaml:6:38: 'count' must be <= 1000, got 1001",
       });
}

TEST_CASE("loader: unknown parameters and extra keys") {
  CHECK(errors("steps:\n  - sleep: {duraton: 1s}\n") ==
        std::vector<std::string>{"t.yaml:2:5: missing required parameter 'duration' for 'sleep'",
                                 "t.yaml:2:13: unknown parameter 'duraton' for 'sleep' (did you mean 'duration'?)"});
  CHECK(errors("steps:\n  - sleep: {duration: 1s, duraton: 1s}\n") ==
        std::vector<std::string>{"t.yaml:2:27: unknown parameter 'duraton' for 'sleep' (did you mean 'duration'?)"});
  CHECK(error("steps:\n  - offload: {dev: vB, gro: maybe}\n") == "t.yaml:2:29: 'gro' must be on or off, got 'maybe'");
  CHECK(error("steps:\n  - offload: {gro: off}\n") == "t.yaml:2:5: missing required parameter 'dev' for 'offload'");
  CHECK(error("steps:\n  - every:\n      server:\n        dev:\n") ==
        "t.yaml:4:9: missing required parameter 'server.dev' for 'every'");
}

TEST_CASE("loader: an interface name over 15 bytes") {
  CHECK(error("steps:\n  - offload: {dev: veth-with-long-name}\n") ==
        "t.yaml:2:20: 'dev' is not a valid interface name: longer than 15 bytes (19) ('veth-with-long-name')");
}

TEST_CASE("loader: all diagnostics are collected, in file order") {
  auto all = errors(R"(steps:
  - sleep: {duration: 5}
  - slep: {}
  - sleep: {duration: 1s}
    timeout: x
name: "bad name"
)");
  REQUIRE(all.size() == 4);
  CHECK(all[0].starts_with("t.yaml:2:23:"));
  CHECK(all[1].starts_with("t.yaml:3:5:"));
  CHECK(all[2].starts_with("t.yaml:5:14:"));
  CHECK(all[3].starts_with("t.yaml:6:7:"));
}

// ------------------------------------------------------------ hostile input

TEST_CASE("loader: deep nesting is refused before the YAML parser recurses") {
  CHECK(error(std::string(5000, '[') + std::string(5000, ']')) ==
        "t.yaml:1:64: nesting deeper than 64 levels: a scenario is a shallow mapping");
  std::string dashes = "steps:\n  - ";
  for (int i = 0; i < 5000; ++i) dashes += "- ";
  CHECK(error(dashes + "x\n") == "t.yaml:2:129: nesting deeper than 64 levels: a scenario is a shallow mapping");
  std::string indents = "steps:\n";
  for (int i = 1; i < 100; ++i) indents += std::string(static_cast<std::size_t>(i), ' ') + "a:\n";
  CHECK(error(indents) == "t.yaml:65:65: nesting deeper than 64 levels: a scenario is a shallow mapping");
  std::string maps = "steps: ";
  for (int i = 0; i < 5000; ++i) maps += "{a: ";
  CHECK(error(maps).starts_with("t.yaml:1:260: nesting deeper"));
}

TEST_CASE("loader: brackets inside strings, comments and block scalars are not nesting") {
  const std::string many(100, '[');
  auto all = errors("a: \"" + many + "\"\nb: x " + many + "\nc: |\n  " + many + "\n# " + many + "\nd: '" + many +
                    "'\nsteps: []\n");
  REQUIRE(all.size() == 5);
  CHECK(all.back() == "t.yaml:7:8: 'steps' is empty: a scenario needs at least one step");
}

TEST_CASE("loader: aliases cannot expand into a huge document") {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 12; ++i) {
    text += fmt::format("a{}: &a{} [", i, i);
    for (int k = 0; k < 10; ++k) text += fmt::format("{}*a{}", k ? ", " : "", i - 1);
    text += "]\n";
  }
  text += "steps: [*a11]\n";
  CHECK(error(text).find("the document is too large: more than 200000 YAML nodes") != std::string::npos);
}

TEST_CASE("loader: binary data, bad UTF-8 and control characters") {
  CHECK(error(std::string_view("steps:\n  - x\0y\n", 14)) ==
        "t.yaml:2:6: binary data (a NUL byte): a scenario is a YAML text file");
  CHECK(error("steps:\n  - sleep: {duration: \"\xff\"}\n") ==
        "t.yaml:2:24: invalid UTF-8 (byte 0xff): a scenario is UTF-8 text");
  CHECK(error("a: \xc0\x80\n") == "t.yaml:1:4: invalid UTF-8 (byte 0xc0): a scenario is UTF-8 text");      // overlong
  CHECK(error("a: \xed\xa0\x80\n") == "t.yaml:1:4: invalid UTF-8 (byte 0xed): a scenario is UTF-8 text");  // surrogate
  CHECK(error("a: \xe2\x82\n") == "t.yaml:1:4: invalid UTF-8 (byte 0xe2): a scenario is UTF-8 text");      // truncated
  CHECK(error("steps:\n  - sleep: {duration: \"\xc3\xa9\x07\"}\n") ==
        "t.yaml:2:26: control character 0x07 is not allowed in YAML");
  // UTF-8 text, a BOM and CRLF line ends are fine
  valid("\xef\xbb\xbfname: cafe\r\nsteps: [{sleep: {duration: 1s}}]\r\ndescription: \xe2\x9c\x93\r\n");
}

// ------------------------------------------------------------ files

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/rxerun-loader-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, std::string_view data) const {
    const auto p = path / name;
    std::ofstream(p, std::ios::binary) << data;
    return p.string();
  }
};

std::string file_error(const std::string& path) {
  auto r = load_scenario(path, registry(), {});
  CHECK_FALSE(r.scenario.has_value());
  REQUIRE(r.diagnostics.size() == 1);
  return r.diagnostics.front().to_string();
}

}  // namespace

TEST_CASE("loader: files that are not scenarios") {
  TempDir dir;
  const std::string missing = (dir.path / "missing.yaml").string();
  CHECK(file_error(missing) == missing + ":1:1: cannot open the scenario: No such file or directory");
  CHECK(file_error(dir.path.string()) == dir.path.string() + ":1:1: is a directory, not a scenario file");
  const std::string big = dir.write("big.yaml", std::string(kMaxScenarioBytes + 1, '#'));
  CHECK(file_error(big) == big + ":1:1: the file is too large (1048577 bytes): a scenario is at most 1048576 bytes");
  const std::string empty = dir.write("empty.yaml", "");
  CHECK(file_error(empty) == empty + ":1:1: empty scenario: expected a mapping with 'steps'");
  const std::string binary = dir.write("bin.yaml", std::string_view("\x7f"
                                                                    "ELF\x02\x01\x00\x00",
                                                                    8));
  CHECK(file_error(binary) == binary + ":1:1: control character 0x7f is not allowed in YAML");
  CHECK(file_error("/dev/zero") == "/dev/zero:1:1: the file is too large: a scenario is at most 1048576 bytes");
}

TEST_CASE("loader: a file is read and named in diagnostics as given") {
  TempDir dir;
  const std::string path = dir.write("veth-pair.yaml", "steps:\n  - sleep: {duration: 1s}\n");
  auto r = load_scenario(path, registry(), {});
  REQUIRE(r.scenario.has_value());
  CHECK(r.scenario->file == path);
  CHECK(r.scenario->name == "veth-pair");
  const std::string bad = dir.write("bad.yaml", "steps:\n  - sleep: {duration: x}\n");
  CHECK(file_error(bad) == bad + ":2:23: 'duration' must be a duration with a unit (500ms, 5s, 1m, 1h), got 'x'");
}

TEST_CASE("loader: every file in tests/data/bad fails at the place EXPECTED.txt names") {
  // The same files go through the real binary in tests/e2e/validate_bad.sh; they
  // use only `sleep` and `revert`, which the test kinds here declare alike.
  const std::filesystem::path dir = std::filesystem::path(RXERUN_SOURCE_DIR) / "tests/data/bad";
  std::ifstream expected(dir / "EXPECTED.txt");
  REQUIRE(expected.good());
  std::set<std::string> listed;
  for (std::string line; std::getline(expected, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find(' '));
    const std::string where = line.substr(line.find(' ') + 1);
    listed.insert(name);
    CAPTURE(name);
    auto r = load_scenario((dir / name).string(), registry(), {});
    CHECK_FALSE(r.scenario.has_value());
    REQUIRE_FALSE(r.diagnostics.empty());
    const Mark m = r.diagnostics.front().mark;
    // OTHER:LINE:COL: the first error is in OTHER, a file this one includes.
    const std::string in =
        std::count(where.begin(), where.end(), ':') == 2
            ? std::filesystem::path(r.diagnostics.front().file).lexically_relative(dir).string() + ":"
            : "";
    CHECK(fmt::format("{}{}:{}", in, m.line, m.col) == where);
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename() == "EXPECTED.txt" || entry.is_directory()) continue;
    CAPTURE(entry.path().filename().string());
    CHECK(listed.contains(entry.path().filename().string()));
  }
}
