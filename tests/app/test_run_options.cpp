// `run`'s options and the arguments a run hands on (app/run_options.h):
// run_arguments() is the inverse of the command line's parser, for every
// option alone and in many combinations, odd values included; and what a
// suite's child, a lab VM's guest and a node's agent are given.

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "app/cli.h"
#include "app/run_options.h"
#include "base/strings.h"

using namespace rxerun;

namespace {

// The command line read as rxerun reads it; `line` holds every option.
const Command& parse(std::vector<std::string> args, CommandLine& line) {
  auto parsed = parse_command_line(std::move(args), line);
  REQUIRE_MESSAGE(std::holds_alternative<const Command*>(parsed), "the command line was refused");
  return *std::get<const Command*>(parsed);
}

RunCommandOptions reparsed(const RunCommandOptions& o) {
  std::vector<std::string> args{"run"};
  for (auto& a : run_arguments(o)) args.push_back(std::move(a));
  CommandLine line;
  CHECK(std::string(parse(args, line).name) == "run");
  return line.run;
}

RunCommandOptions one(std::vector<std::string> scenarios = {"lab.yaml"}) {
  RunCommandOptions o;
  o.scenarios = std::move(scenarios);
  return o;
}

using Change = std::function<void(RunCommandOptions&)>;

// Each option away from its default, values that could pass for options
// or be split among them included.
const std::vector<Change>& changes() {
  static const std::vector<Change> all{
      [](RunCommandOptions& o) {
        o.scenarios = {"a.yaml", "dir/", "with space.yaml"};
      },
      [](RunCommandOptions& o) {
        o.scenarios = {"-starts-with-dash.yaml", "--also.yaml"};
      },
      [](RunCommandOptions& o) {
        o.common.plugins = {"/opt/p/one.so", "/opt/p/two.so"};
      },
      [](RunCommandOptions& o) {
        o.common.vars = {"a=1", "-x=-1", "b=c=d", "s=with space", "e="};
      },
      [](RunCommandOptions& o) {
        o.common.var_files = {"vars.yaml", "-v.yaml"};
      },
      [](RunCommandOptions& o) { o.common.handed_on = true; },
      [](RunCommandOptions& o) {
        o.common.only = {"fast", "", "--skip"};
      },
      [](RunCommandOptions& o) {
        o.common.skip = {"slow", "-v"};
      },
      [](RunCommandOptions& o) { o.keep = true; },
      [](RunCommandOptions& o) { o.force = true; },
      [](RunCommandOptions& o) {
        o.reports = {"json:r.json", "junit:-r.xml"};
      },
      [](RunCommandOptions& o) { o.verbose = true; },
      [](RunCommandOptions& o) { o.color = "never"; },
      [](RunCommandOptions& o) { o.color = "always"; },
      [](RunCommandOptions& o) { o.vm = true; },
      [](RunCommandOptions& o) { o.kernel = "6.1,7.3"; },
      [](RunCommandOptions& o) { o.kernel = "./linux"; },
      [](RunCommandOptions& o) { o.modules = "/lib/modules/7.4.0"; },
      [](RunCommandOptions& o) { o.jobs = 4; },
      [](RunCommandOptions& o) { o.fail_fast = true; },
      [](RunCommandOptions& o) { o.cold_boot = true; },
      [](RunCommandOptions& o) { o.shard = "2/3"; },
      [](RunCommandOptions& o) { o.kernel_health = "warn"; },
      [](RunCommandOptions& o) { o.kernel_health = "off"; },
      [](RunCommandOptions& o) { o.output_dir = "-out dir"; },
      [](RunCommandOptions& o) { o.guest_output = "/mnt/rxerun/output"; },
      [](RunCommandOptions& o) { o.lab_kernel = "7.3"; },
      [](RunCommandOptions& o) { o.suite_position = "3/8"; },
      [](RunCommandOptions& o) { o.progress = true; },
      // Last: they exclude -v and --vm, which come earlier and win.
      [](RunCommandOptions& o) {
        if (!o.verbose) o.quiet = true;
      },
      [](RunCommandOptions& o) {
        if (!o.vm) o.host = true;
      },
  };
  return all;
}

}  // namespace

TEST_CASE("run options: the arguments of the defaults are the scenarios alone") {
  CHECK(run_arguments(one()) == std::vector<std::string>{"--", "lab.yaml"});
  CHECK(run_arguments(one(), WithScenarios::no).empty());
  CHECK(reparsed(one()) == one());
}

TEST_CASE("run options: each option alone reads back as it was") {
  for (std::size_t i = 0; i < changes().size(); ++i) {
    CAPTURE(i);
    RunCommandOptions o = one();
    changes()[i](o);
    CAPTURE(shell_join(run_arguments(o)));
    CHECK(reparsed(o) == o);
    CHECK_FALSE(o == one());  // the change is one the test can see
  }
}

TEST_CASE("run options: any combination of options reads back as it was") {
  std::uint32_t seed = 12345;
  auto next = [&seed]() {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  for (int round = 0; round < 300; ++round) {
    RunCommandOptions o = one();
    for (const auto& change : changes())
      if (next() % 3 == 0) change(o);
    CAPTURE(shell_join(run_arguments(o)));
    CHECK(reparsed(o) == o);
  }
  RunCommandOptions all = one();
  for (const auto& change : changes()) change(all);
  CHECK(reparsed(all) == all);
}

TEST_CASE("run options: a value is never read as an option, an empty one stays a value") {
  RunCommandOptions o = one();
  o.common.only = {""};
  o.common.vars = {"-x=1"};
  CHECK(run_arguments(o) == std::vector<std::string>{"--var=-x=1", "--only", "", "--", "lab.yaml"});
}

TEST_CASE("run options: a suite's child runs one scenario on the host, with what shapes a run") {
  RunCommandOptions o = one({"a.yaml", "b.yaml"});
  o.common = {.plugins = {"/p.so"}, .vars = {"a=1"}, .only = {"t"}, .skip = {"u"}};
  o.force = true;
  o.verbose = true;
  o.kernel_health = "warn";
  o.output_dir = "out";
  o.lab_kernel = "7.3";
  o.guest_output = "/mnt/rxerun/output";
  // What belongs to the suite stays with it.
  o.reports = {"json:suite.json"};
  o.shard = "1/2";
  o.fail_fast = true;
  o.jobs = 3;
  o.kernel = "6.1";
  o.suite_position = "1/4";
  const RunCommandOptions child = child_run_options(o, "b.yaml", "/tmp/x/run.json", true, false);
  RunCommandOptions expected = one({"b.yaml"});
  expected.host = true;
  expected.common = o.common;
  expected.common.handed_on = true;  // the suite showed the warnings
  expected.force = true;
  expected.verbose = true;
  expected.color = "always";
  expected.kernel_health = "warn";
  expected.output_dir = "out";
  expected.lab_kernel = "7.3";
  expected.guest_output = "/mnt/rxerun/output";
  expected.reports = {"json:/tmp/x/run.json"};
  CHECK(child == expected);
  CHECK(reparsed(child) == child);
  CHECK(child_run_options(o, "b.yaml", "r.json", false, true).color == "never");
  CHECK(child_run_options(o, "b.yaml", "r.json", false, true).progress);
}

TEST_CASE("run options: a lab VM's guest runs its scenarios with what shapes a run and the suite's numbers") {
  RunCommandOptions o = one({"a.yaml", "b.yaml"});
  o.common.vars = {"a=1"};
  o.quiet = true;
  o.fail_fast = true;
  o.kernel_health = "off";
  o.force = true;
  o.reports = {"junit:r.xml"};
  o.output_dir = "out";  // the host's: the files come back there
  o.kernel = "6.1,7.3";
  o.jobs = 2;
  const RunCommandOptions guest = lab_vm_run_options(o, {"b.yaml"}, false, true, "2/4");
  RunCommandOptions expected = one({"b.yaml"});
  expected.common = o.common;
  expected.common.handed_on = true;
  expected.quiet = true;
  expected.fail_fast = true;
  expected.kernel_health = "off";
  expected.force = true;
  expected.color = "never";
  expected.progress = true;
  expected.suite_position = "2/4";
  CHECK(guest == expected);
  CHECK(reparsed(guest) == guest);
}

TEST_CASE("run options: a node's agent reads back what the host hands it") {
  RunCommandOptions o = one({"pair.yaml"});
  o.common = {.plugins = {"/p.so"}, .vars = {"a=-1"}, .var_files = {"/v.yaml"}, .only = {"t"}, .skip = {"-u"}};
  o.force = true;
  o.kernel_health = "warn";
  o.verbose = true;  // the host's terminal, not the agent's
  const RunCommandOptions agent = agent_run_options(o, "/mnt/rxerun/output");
  std::vector<std::string> args{"__agent", "pair.yaml", "--node", "a"};
  for (auto& a : run_arguments(agent, WithScenarios::no)) args.push_back(std::move(a));
  CommandLine line;
  CHECK(std::string(parse(args, line).name) == "__agent");
  CHECK(line.agent.scenario == "pair.yaml");
  CHECK(line.agent.node == "a");
  CommonOptions handed = o.common;
  handed.handed_on = true;
  CHECK(line.agent.common == handed);
  CHECK(line.agent.force);
  CHECK(line.agent.kernel_health == "warn");
  CHECK(line.agent.output_dir == "/mnt/rxerun/output");
}

TEST_CASE("run options: `rxerun FILE` and `rxerun -v FILE` are runs, and --plugin paths become absolute") {
  CommandLine line;
  CHECK(std::string(parse({"lab.yaml", "--var", "x=1"}, line).name) == "run");
  CHECK(line.run.scenarios == std::vector<std::string>{"lab.yaml"});
  CHECK(line.run.common.vars == std::vector<std::string>{"x=1"});
  CommandLine verbose;
  CHECK(std::string(parse({"-v", "lab.yaml"}, verbose).name) == "run");
  CHECK(verbose.run.verbose);
  CommandLine plugins;
  parse({"validate", "lab.yaml", "--plugin", "/opt/x/../p.so"}, plugins);
  CHECK(plugins.validate.plugins == std::vector<std::string>{"/opt/p.so"});
  CHECK(plugins.plugins == std::vector<std::string>{"/opt/p.so"});
  CommandLine vm;
  CHECK(std::string(parse({"vm", "status"}, vm).name) == "status");
}

TEST_CASE("run options: a malformed --var is refused after parsing") {
  CommandLine line;
  CHECK(parse_command_line({"run", "lab.yaml", "--var", "novalue"}, line) == std::variant<const Command*, int>(2));
}
