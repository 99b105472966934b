// Writing labs once: include:, --var-file, literal '{{', YAML merge keys and
// the warning for variables nothing reads.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/loader.h"
#include "engine/vars.h"
#include "support/test_kinds.h"

using namespace rxerun;
using nlohmann::json;

namespace {

const Registry& authoring_registry() {
  static const Registry r(rxerun::testing::loader_test_kinds());
  return r;
}

struct LabDir {
  std::filesystem::path path;
  LabDir() {
    char tmpl[] = "/tmp/rxerun-authoring-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~LabDir() { std::filesystem::remove_all(path); }
  LabDir(const LabDir&) = delete;
  LabDir& operator=(const LabDir&) = delete;
  std::string write(const std::string& name, std::string_view data) const {
    const auto p = path / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << data;
    return p.string();
  }
  // The name a diagnostic gives a file of this directory.
  std::string operator()(const std::string& name) const { return (path / name).string(); }
};

LoadResult load_file(const std::string& path, LoadOptions options = {}) {
  return load_scenario(path, authoring_registry(), options);
}

std::vector<std::string> all_errors(const LoadResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(d.to_string());
  return out;
}

Scenario loaded(const LoadResult& r) {
  REQUIRE_MESSAGE(r.scenario.has_value(), fmt::format("{}", fmt::join(all_errors(r), "\n")));
  return *r.scenario;
}

LoadResult load_text(std::string_view text, LoadOptions options = {}) {
  return load_scenario_text(text, "t.yaml", authoring_registry(), options);
}

std::string only_error(const LoadResult& r) {
  const auto all = all_errors(r);
  REQUIRE_MESSAGE(all.size() == 1, fmt::format("{}", fmt::join(all, "\n")));
  return all.front();
}

}  // namespace

// ---------------------------------------------------------------- include

TEST_CASE("include: the included file's vars and steps come first, its vars are defaults") {
  LabDir dir;
  dir.write("topology/pair.yaml", R"(vars:
  ns: lab
  nap: 1s
steps:
  - netns: {name: "{{ns}}"}
  - name: settle
    sleep: {duration: "{{nap}}"}
)");
  const auto lab = dir.write("lab.yaml", R"(include: [topology/pair.yaml]
vars:
  nap: 2s
steps:
  - sleep: {duration: "{{nap}}"}
    netns: "{{ns}}"
  - revert: settle
)");
  SUBCASE("the includer's vars win over the included file's") {
    const Scenario s = loaded(load_file(lab));
    REQUIRE(s.steps.size() == 4);
    CHECK(s.steps[0].kind == "netns");
    CHECK(s.steps[0].params["name"] == "lab");
    CHECK(s.steps[1].name == "settle");
    CHECK(s.steps[1].params["duration"] == "2s");
    CHECK(s.steps[2].name == "sleep-3");
    CHECK(s.steps[3].params == "settle");
    // Each step knows the file its marks are in.
    CHECK(s.file_of(s.steps[0]) == dir("topology/pair.yaml"));
    CHECK(s.steps[1].mark.line == 6);
    CHECK(s.file_of(s.steps[2]) == lab);
  }
  SUBCASE("--var-file wins over both, --var over all") {
    const auto vars = dir.write("vars.yaml", "nap: 3s\nns: other\n");
    LoadOptions o;
    o.var_files = {vars};
    Scenario s = loaded(load_file(lab, o));
    CHECK(s.steps[1].params["duration"] == "3s");
    CHECK(s.steps[0].params["name"] == "other");
    o.var_overrides = {{"nap", "4s"}};
    s = loaded(load_file(lab, o));
    CHECK(s.steps[1].params["duration"] == "4s");
    CHECK(s.steps[2].params["duration"] == "4s");
  }
}

TEST_CASE("include: an error in an included file is at its line, with where it was included") {
  LabDir dir;
  dir.write("topo.yaml", "steps:\n  - sleep: {duration: soon}\n");
  const auto lab = dir.write("lab.yaml", "include:\n  - topo.yaml\nsteps:\n  - sleep: {duration: 1s}\n");
  CHECK(only_error(load_file(lab)) ==
        dir("topo.yaml") +
            ":2:23: 'duration' must be a duration with a unit (500ms, 5s, 1m, 1h), got 'soon' "
            "(included from " +
            lab + ":2:5)");
}

TEST_CASE("include: nested includes name the whole way in") {
  LabDir dir;
  dir.write("a/inner.yaml", "steps:\n  - revert: nowhere\n");
  dir.write("a/outer.yaml", "include: inner.yaml\nsteps:\n  - sleep: {duration: 1s}\n");
  const auto lab = dir.write("lab.yaml", "include: [a/outer.yaml]\nsteps:\n  - sleep: {duration: 1s}\n");
  CHECK(only_error(load_file(lab)) == dir("a/inner.yaml") +
                                          ":2:13: no earlier step is named 'nowhere' (included from " +
                                          dir("a/outer.yaml") + ":1:10, included from " + lab + ":1:11)");
}

TEST_CASE("include: a missing file is an error at the include's line") {
  LabDir dir;
  const auto lab = dir.write("lab.yaml", "include: [gone.yaml]\nsteps:\n  - sleep: {duration: 1s}\n");
  CHECK(only_error(load_file(lab)) ==
        lab + ":1:11: cannot include 'gone.yaml': cannot open the included file: No such file or directory");
}

TEST_CASE("include: cycles and a file included twice are refused") {
  LabDir dir;
  SUBCASE("a file that includes itself") {
    const auto lab = dir.write("lab.yaml", "include: [lab.yaml]\nsteps:\n  - sleep: {duration: 1s}\n");
    CHECK(only_error(load_file(lab)).starts_with(lab + ":1:11: include cycle: 'lab.yaml' is being included already"));
  }
  SUBCASE("a cycle through another file, reported where it closes") {
    dir.write("b.yaml", "include: [lab.yaml]\nsteps:\n  - sleep: {duration: 1s}\n");
    const auto lab = dir.write("lab.yaml", "include: [b.yaml]\nsteps:\n  - sleep: {duration: 1s}\n");
    CHECK(only_error(load_file(lab)).starts_with(dir("b.yaml") + ":1:11: include cycle: 'lab.yaml'"));
  }
  SUBCASE("the same file twice") {
    dir.write("b.yaml", "steps:\n  - sleep: {duration: 1s}\n");
    const auto lab = dir.write("lab.yaml", "include: [b.yaml, ./b.yaml]\nsteps:\n  - sleep: {duration: 1s}\n");
    CHECK(only_error(load_file(lab)) ==
          lab + ":1:19: './b.yaml' is included already, at " + lab + ":1:11: its steps would run twice");
  }
}

TEST_CASE("include: step names are unique across the files") {
  LabDir dir;
  dir.write("topo.yaml", "steps:\n  - name: nap\n    sleep: {duration: 1s}\n");
  const auto lab = dir.write("lab.yaml", "include: [topo.yaml]\nsteps:\n  - name: nap\n    sleep: {duration: 1s}\n");
  CHECK(only_error(load_file(lab)) ==
        lab + ":3:11: duplicate step name 'nap' (first at " + dir("topo.yaml") + ":2:11)");
}

TEST_CASE("include: an included file holds include, vars, steps and description only") {
  LabDir dir;
  dir.write("topo.yaml", "name: topo\nvm: {kernel: '7.3'}\nsteps:\n  - sleep: {duration: 1s}\n");
  const auto lab = dir.write("lab.yaml", "include: topo.yaml\nsteps:\n  - sleep: {duration: 1s}\n");
  const auto all = all_errors(load_file(lab));
  REQUIRE(all.size() == 2);
  CHECK(all[0].starts_with(dir("topo.yaml") + ":1:1: 'name' has no place in an included file"));
  CHECK(all[1].starts_with(dir("topo.yaml") + ":2:1: 'vm' has no place in an included file"));
}

TEST_CASE("include: a value of the wrong shape") {
  CHECK(only_error(load_text("include: {a: b}\nsteps:\n  - sleep: {duration: 1s}\n")) ==
        "t.yaml:1:10: 'include' must be a file or a list of files ([topology/veth-pair.yaml]), got a mapping");
  CHECK(only_error(load_text("include: [[a]]\nsteps:\n  - sleep: {duration: 1s}\n")) ==
        "t.yaml:1:11: an included file must be a path, got a list");
}

// ---------------------------------------------------------------- --var-file

TEST_CASE("--var-file: a mapping of names to values, under --var") {
  LabDir dir;
  const auto one = dir.write("one.yaml", "a: 1s\nb: 2s\n");
  const auto two = dir.write("two.yaml", "b: 3s\n");
  LoadOptions o;
  o.var_files = {one, two};
  const char* text = "vars: {a: 9s, b: 9s}\nsteps:\n  - sleep: {duration: '{{a}}'}\n  - sleep: {duration: '{{b}}'}\n";
  Scenario s = loaded(load_text(text, o));
  CHECK(s.steps[0].params["duration"] == "1s");
  CHECK(s.steps[1].params["duration"] == "3s");  // the later file wins
  o.var_overrides = {{"b", "4s"}};
  s = loaded(load_text(text, o));
  CHECK(s.steps[1].params["duration"] == "4s");
}

TEST_CASE("--var-file: errors are at the variables file's line") {
  LabDir dir;
  LoadOptions o;
  const char* text = "steps:\n  - sleep: {duration: 1s}\n";
  o.var_files = {dir.write("bad.yaml", "a: 1\nb: [x]\n")};
  CHECK(only_error(load_text(text, o)) ==
        dir("bad.yaml") + ":2:4: variable 'b' must have a string, number or bool value, got a list");
  o.var_files = {dir.write("list.yaml", "- a\n")};
  CHECK(only_error(load_text(text, o)) ==
        dir("list.yaml") + ":1:1: a variables file must be a mapping of names to values, got a list");
  o.var_files = {dir.write("dup.yaml", "a: 1\na: 2\n")};
  CHECK(only_error(load_text(text, o)) == dir("dup.yaml") + ":2:1: duplicate key 'a' (first at 1:1)");
  o.var_files = {dir("missing.yaml")};
  CHECK(only_error(load_text(text, o)) ==
        dir("missing.yaml") + ":1:1: cannot open the variables file: No such file or directory");
}

// ---------------------------------------------------------------- unused variables

TEST_CASE("unused variables: --var and --var-file names nothing reads are named, with a near spelling") {
  LabDir dir;
  LoadOptions o;
  o.var_files = {dir.write("vars.yaml", "nap: 1s\nadress: x\n")};
  o.var_overrides = {{"napp", "2s"}, {"nap", "3s"}};
  const auto r = load_text("vars: {address: a}\nsteps:\n  - sleep: {duration: '{{nap}}'}\n", o);
  loaded(r);
  CHECK(r.unused_vars.size() == 2);
  CHECK(r.unused_vars.at("adress") ==
        dir("vars.yaml") + ":2:1: warning: no scenario reads variable 'adress' (did you mean 'address'?)");
  CHECK(r.unused_vars.at("napp") ==
        "rxerun: warning: --var napp: no scenario reads variable 'napp' (did you mean "
        "'nap'?)");
  // A scenario's own vars that nothing reads are its business.
  CHECK(load_text("vars: {x: 1}\nsteps:\n  - sleep: {duration: 1s}\n").unused_vars.empty());
}

// ---------------------------------------------------------------- literal {{

TEST_CASE("literal '{{': {{ '...' }} is written as it is") {
  CHECK(expand("a {{ '{{' }}.Id}} b", {}, nullptr).value() == "a {{ '{{' }}.Id}} b");  // the loader's pass keeps it
  CHECK(resolve_literals("docker inspect -f {{ '{{' }}.Id}}").value() == "docker inspect -f {{.Id}}");
  CHECK(resolve_literals("{{\"{{.Id}}\"}} and {{'}}'}}").value() == "{{.Id}} and }}");
  CHECK(resolve_literals("{{ 'x' y }}").error().message.starts_with("a literal {{ '...' }} must end with '}}'"));
  CHECK(resolve_literals("{{ 'x }}").error().message.starts_with("unterminated literal '"));
  CHECK(step_references("{{ '{{steps.a.b}}' }}").empty());
  CHECK(variable_references("{{a}} {{ 'b' }} {{steps.c.d}}") == std::vector<std::string>{"a"});
}

TEST_CASE("literal '{{': in parameters, expectations and anywhere a value is read") {
  const Scenario s = loaded(load_text(R"(vars: {d: 1s}
steps:
  - name: nap
    sleep: {duration: "{{d}}"}
    expect: {slept_ms: "~ {{ '{{' }}x}}"}
  - counters: {devs: "docker inspect -f {{ '{{' }}.Id}} {{d}}"}
  - counters: {devs: "{{ '{{' }}.Id}} {{steps.nap.slept_ms}}"}
)"));
  CHECK(s.steps[0].expect.facts.at(0).matcher.text == "~ {{x}}");
  CHECK(s.steps[1].params["devs"] == "docker inspect -f {{.Id}} 1s");
  // A step that reads facts keeps its literals for the run time's pass, which
  // expands both at once.
  CHECK(s.steps[2].params["devs"] == "{{ '{{' }}.Id}} {{steps.nap.slept_ms}}");
  json p = s.steps[2].params;
  const FactLookup facts = [](const std::string&, const std::string&) -> Result<json> { return json(7); };
  REQUIRE(expand_json(p, {}, &facts).ok());
  CHECK(p["devs"] == "{{.Id}} 7");
}

TEST_CASE("literal '{{': a literal cannot write a fact reference into a parameter") {
  CHECK(only_error(load_text("steps:\n  - counters: {devs: \"{{ '{{steps.a.b}}' }}\"}\n"))
            .starts_with("t.yaml:2:5: a literal ({{ '...' }}) in these parameters writes {{steps.NAME.FACT}}"));
}

TEST_CASE("literal '{{': a bare '{{' is still an error that says how to write one") {
  CHECK(only_error(load_text("steps:\n  - counters: {devs: \"{{.Id}}\"}\n")) ==
        "t.yaml:2:22: undefined variable '.Id': a literal '{{' is written {{ '{{' }}");
}

// ---------------------------------------------------------------- merge keys

TEST_CASE("merge keys: explicit keys win, an earlier mapping of a list wins") {
  const Scenario s = loaded(load_text(R"(x-slow: &slow {timeout: 5s, retries: 2, tags: [slow]}
x-fast: &fast {timeout: 1s, retries: 1, delay: 100ms}
vars:
  <<: {a: 1s, b: 2s}
  b: 3s
steps:
  - <<: *slow
    sleep: {duration: "{{a}}"}
    retries: 3
  - <<: [*fast, *slow]
    sleep: {<<: {duration: "{{b}}"}}
)"));
  CHECK(s.steps[0].timeout == Duration(5000));
  CHECK(s.steps[0].retries == 3);
  CHECK(s.steps[0].tags == std::vector<std::string>{"slow"});
  CHECK(s.steps[0].params["duration"] == "1s");
  CHECK(s.steps[1].timeout == Duration(1000));
  CHECK(s.steps[1].retries == 1);
  CHECK(s.steps[1].delay == Duration(100));
  CHECK(s.steps[1].tags == std::vector<std::string>{"slow"});
  CHECK(s.steps[1].params["duration"] == "3s");
}

TEST_CASE("merge keys: a merged value's problem is reported where it is written") {
  CHECK(only_error(load_text(R"(x-common: &common {timeout: 5 s}
steps:
  - <<: *common
    sleep: {duration: 1s}
)")) == "t.yaml:1:29: 'timeout' must be a duration with a unit (500ms, 5s, 1m, 1h), got '5 s'");
}

TEST_CASE("merge keys: nested merges, and merges at the top level") {
  const Scenario s = loaded(load_text(R"(x-a: &a {duration: 1s}
x-b: &b {<<: *a}
x-top: &top {name: merged}
<<: *top
steps:
  - sleep: *b
)"));
  CHECK(s.name == "merged");
  CHECK(s.steps[0].params["duration"] == "1s");
}

TEST_CASE("merge keys: '<<' takes mappings, and a quoted '<<' is a plain key") {
  CHECK(only_error(load_text("steps:\n  - sleep: {duration: 1s}\n    <<: 5\n")) ==
        "t.yaml:3:9: a merge key '<<' takes a mapping (<<: *common) or a list of them (<<: [*a, *b]), got '5'");
  CHECK(only_error(load_text("steps:\n  - sleep: {duration: 1s}\n    <<: [{timeout: 1s}, x]\n")) ==
        "t.yaml:3:25: a merge key '<<' takes a mapping (<<: *common) or a list of them (<<: [*a, *b]), got 'x' in "
        "the list");
  CHECK(only_error(load_text("steps:\n  - sleep: {duration: 1s}\n    \"<<\": {timeout: 1s}\n")) ==
        "t.yaml:3:5: unknown key '<<' in step");
}

TEST_CASE("merge keys: an alias bomb through merges is still too large") {
  std::string text = "x0: &x0 {k0: [a, a, a, a, a, a, a, a, a, a]}\n";
  for (int i = 1; i <= 8; ++i) {
    std::string keys;
    for (int k = 0; k < 10; ++k) keys += fmt::format("{}k{}: *x{}", k ? ", " : "", k, i - 1);
    text += fmt::format("x{}: &x{} {{<<: *x{}, {}}}\n", i, i, i - 1, keys);
  }
  text += "steps:\n  - sleep: {duration: 1s}\n";
  const auto r = load_text(text);
  REQUIRE_FALSE(r.diagnostics.empty());
  CHECK(r.diagnostics.front().message.starts_with("the document is too large"));
}
