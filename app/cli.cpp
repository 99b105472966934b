#include "app/cli.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <string_view>

#include <unistd.h>

#include "app/commands.h"
#include "app/plugins.h"
#include "app/run.h"
#include "base/duration.h"
#include "base/output.h"
#include "base/version.h"
#include "vm/guest.h"

namespace rxerun {

namespace {

// Each command's options, and what runs it once they are read. A command
// with no options of its own has no adder; the table below names them all.

void add_run_command_options(CLI::App& cmd, CommandLine& line) {
  add_run_options(cmd, line.run);
}
int run_scenarios_command(CommandLine& line, Registry& registry) {
  return cmd_run(line.run, registry);
}

void add_validate_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("scenarios", line.validate_files, "scenario files")->required()->type_name("SCENARIO");
  cmd.add_option("--var", line.validate.vars, "set a variable (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_var_file_option(cmd, line.validate.var_files);
}
int validate_command(CommandLine& line, Registry& registry) {
  return cmd_validate(line.validate_files, line.validate, registry);
}

void add_plan_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("scenario", line.plan_file, "the scenario file")->required()->type_name("SCENARIO");
  add_common_options(cmd, line.plan);
}
int plan_command(CommandLine& line, Registry& registry) {
  return cmd_plan(line.plan_file, line.plan, registry);
}

void add_graph_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("scenario", line.graph.scenario, "the scenario file")->required()->type_name("SCENARIO");
  cmd.add_option("--var", line.graph.common.vars, "set a variable (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_var_file_option(cmd, line.graph.common.var_files);
  cmd.add_option("-o,--output", line.graph.output, "write the SVG to FILE (atomically) instead of stdout")
      ->type_name("FILE");
}
int graph_command(CommandLine& line, Registry& registry) {
  return cmd_graph(line.graph, registry);
}

void add_cleanup_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("scenario", line.cleanup_file, "the scenario file")->required()->type_name("SCENARIO");
  cmd.add_option("--var", line.cleanup.common.vars, "set a variable (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_var_file_option(cmd, line.cleanup.common.var_files);
  add_output_options(cmd, line.cleanup);
}
int cleanup_command(CommandLine& line, Registry& registry) {
  return cmd_cleanup(line.cleanup_file, line.cleanup, registry);
}

void add_steps_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("kind", line.steps_kind, "a step kind")->type_name("KIND");
  cmd.add_flag("--markdown", line.steps_markdown, "every kind's reference as Markdown (the end of docs/scenarios.md)");
}
int steps_command(CommandLine& line, Registry& registry) {
  return cmd_steps(line.steps_kind, line.steps_markdown, registry);
}

int schema_command(CommandLine&, Registry& registry) {
  return cmd_schema(registry);
}

void add_agent_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("scenario", line.agent.scenario)->required();
  cmd.add_option("--node", line.agent.node)->required();
  add_common_options(cmd, line.agent.common);
  cmd.add_flag("--force", line.agent.force);
  cmd.add_option("--kernel-health", line.agent.kernel_health);
  cmd.add_option("--output-dir", line.agent.output_dir);
}
int agent_command(CommandLine& line, Registry& registry) {
  return cmd_agent(line.agent, registry);
}

int verbs_server_command(CommandLine&, Registry&) {
  return cmd_verbs_server();
}

void add_counters_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("--netns", line.counters_netns);
}
int counters_command(CommandLine& line, Registry&) {
  return cmd_counters(line.counters_netns);
}

void add_decode_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("file", line.decode.file, "the capture file")->required()->type_name("FILE");
  auto* json = cmd.add_flag("--json", line.decode.json, "one JSON object per packet (JSON Lines) instead of text");
  cmd.add_flag("--summary", line.decode.summary, "with --json: end with a line {\"summary\": {...}} of the counts")
      ->needs(json);
}
int decode_command(CommandLine& line, Registry&) {
  return cmd_decode(line.decode);
}

void add_vm_setup_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("--kernel", line.setup_kernels,
                 "a kernel to prepare: 6.1, 7.3, or any Debian kernel version (6.12; repeatable)")
      ->type_name("VERSION")
      ->allow_extra_args(false);
}
int vm_setup_command(CommandLine& line, Registry&) {
  return cmd_vm_setup(line.setup_kernels);
}

int vm_status_command(CommandLine&, Registry&) {
  return cmd_vm_status();
}

void add_vm_exec_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("--kernel", line.exec.kernel, "the lab VM's kernel (6.1, 7.3; default: the newest prepared)")
      ->type_name("VERSION");
  cmd.add_option("--timeout", line.exec_timeout, "stop the VM when the program runs longer (default: 10m)")
      ->type_name("DURATION");
  cmd.add_flag("-q,--quiet", line.exec.quiet, "no boot line and no spinner");
  // Everything after `--` is the program's, options included.
  cmd.add_option("command", line.exec.command, "the program and its arguments, after --")
      ->required()
      ->expected(-1)
      ->type_name("PROGRAM [ARGS...]");
}
int vm_exec_command(CommandLine& line, Registry&) {
  const auto timeout = parse_duration(line.exec_timeout);
  if (!timeout || timeout->count() <= 0) {
    print(stderr, "rxerun: vm exec --timeout {}: expected a duration such as 90s or 5m\n", line.exec_timeout);
    return kExitUsage;
  }
  if (line.exec.command.empty()) {
    print(stderr, "rxerun: vm exec: name the program to run: rxerun vm exec -- PROGRAM [ARGS...]\n");
    return kExitUsage;
  }
  line.exec.timeout = std::chrono::ceil<std::chrono::seconds>(*timeout);
  return cmd_vm_exec(line.exec);
}

const Command kVmCommands[] = {
    {"setup", "download and prepare lab kernels (default: all of them)", add_vm_setup_options, vm_setup_command},
    {"status", "list the lab kernels and whether they are ready", nullptr, vm_status_command},
    {"exec", "run any program in the lab VM: rxerun vm exec [--kernel K] -- PROGRAM [ARGS...]", add_vm_exec_options,
     vm_exec_command},
};

// rxerun's commands, in the order --help lists them.
const Command kCommands[] = {
    {"run", "preclean, run the steps in order, clean up; several scenarios or a directory run as a suite",
     add_run_command_options, run_scenarios_command, Plugins::loaded},
    {"validate", "check scenario files; nothing on the host changes", add_validate_options, validate_command,
     Plugins::loaded},
    {"plan", "print the ordered actions, each with its shell equivalent; changes nothing", add_plan_options,
     plan_command, Plugins::loaded},
    {"graph", "draw the lab the scenario builds as SVG: namespaces, interfaces, wires, RDMA devices, faults",
     add_graph_options, graph_command, Plugins::loaded},
    {"cleanup", "undo whatever a run of the scenario left behind; safe any time", add_cleanup_options, cleanup_command,
     Plugins::loaded},
    {"steps", "list the step kinds; with KIND: its parameters, facts and an example", add_steps_options, steps_command,
     Plugins::loaded},
    {"schema", "print the JSON Schema of scenario files", nullptr, schema_command, Plugins::loaded},
    // A node's agent in a two-node lab (app/agent.h): the host starts it in
    // the node's lab VM.
    {"__agent", "", add_agent_options, agent_command, Plugins::loaded},
    // The server end of a verbs step across two nodes (app/agent.h), which
    // that step starts on the server's node.
    {"__verbs-server", "", nullptr, verbs_server_command},
    // A node's counters, for a pair step across two nodes (app/agent.h).
    {"__counters", "", add_counters_options, counters_command},
    {"decode", "list the RoCEv2 packets of a capture file (pcap or pcapng) and count them", add_decode_options,
     decode_command},
    {"vm", "prepare (setup) or show (status) the lab VM's kernels, or run a program in it (exec)", nullptr, nullptr,
     Plugins::none, kVmCommands},
};

void add_commands(CLI::App& parent, std::span<const Command> commands, CommandLine& line) {
  for (const Command& c : commands) {
    CLI::App* cmd = parent.add_subcommand(c.name, c.help);
    if (!*c.help) cmd->group("");
    if (!c.subcommands.empty()) cmd->require_subcommand(1);
    if (c.add_options) c.add_options(*cmd, line);
    if (c.plugins == Plugins::loaded) add_plugin_option(*cmd, line.plugins);
    add_commands(*cmd, c.subcommands, line);
  }
}

// The command of `commands` that the line named, under `parent`.
const Command* chosen_command(CLI::App& parent, std::span<const Command> commands) {
  for (const Command& c : commands) {
    CLI::App* cmd = parent.get_subcommand(c.name);
    if (!*cmd) continue;
    return c.subcommands.empty() ? &c : chosen_command(*cmd, c.subcommands);
  }
  return nullptr;
}

// `rxerun FILE.yaml ...` means `rxerun run FILE.yaml ...`.
std::vector<std::string> with_default_command(std::vector<std::string> args) {
  std::set<std::string> commands;
  for (const Command& c : kCommands) commands.insert(c.name);
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && !commands.count(args[0]))
    args.insert(args.begin(), "run");
  if (!args.empty() && args[0].size() > 1 && args[0][0] == '-' && args[0] != "--help" && args[0] != "-h" &&
      args[0] != "--version") {
    // Options before the scenario (`rxerun -v lab.yaml`): also a run.
    bool has_command = false;
    for (const auto& a : args) has_command |= commands.count(a) > 0;
    if (!has_command) args.insert(args.begin(), "run");
  }
  return args;
}

bool vars_well_formed(const CommandLine& line) {
  for (const auto* vars : {&line.run.common.vars, &line.validate.vars, &line.plan.vars, &line.graph.common.vars,
                           &line.cleanup.common.vars, &line.agent.common.vars}) {
    for (const auto& kv : *vars) {
      if (kv.find('=') == std::string::npos || kv.front() == '=') {
        print(stderr, "rxerun: --var {}: expected KEY=VALUE\n", kv);
        return false;
      }
    }
  }
  return true;
}

// --plugin's paths made absolute, and given to every command's options.
void resolve_plugins(CommandLine& line) {
  for (auto& path : line.plugins) path = plugin_argument_path(path);
  for (auto* common :
       {&line.run.common, &line.validate, &line.plan, &line.graph.common, &line.cleanup.common, &line.agent.common})
    common->plugins = line.plugins;
}

// --plugin: loaded before any scenario is read, so that its kinds are known.
bool load_given_plugins(const std::vector<std::string>& paths, Registry& registry) {
  for (const auto& path : paths) {
    if (auto loaded = load_plugin(path, registry); !loaded) {
      print(stderr, "rxerun: {}\n", loaded.error().message);
      return false;
    }
  }
  return true;
}

void set_up_logging() {
  auto logger = spdlog::stderr_color_mt("rxerun");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("rxerun: %l: %v");
  spdlog::set_level(spdlog::level::warn);
}

}  // namespace

std::variant<const Command*, int> parse_command_line(std::vector<std::string> args, CommandLine& line) {
  CLI::App app{
      "rxerun — Soft-RoCE labs from YAML scenario files: build the lab, check every expectation, "
      "clean up exactly what was built.\n\n`rxerun SCENARIO.yaml` is `rxerun run SCENARIO.yaml`.",
      "rxerun"};
  app.set_version_flag("--version", std::string("rxerun ") + RXERUN_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 every expectation held and cleanup left nothing; 1 an expectation failed; 2 usage or "
      "scenario invalid; 3 environment or step error; 4 cleanup left something behind; 130 interrupted.");
  add_commands(app, kCommands, line);

  args = with_default_command(std::move(args));
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (!vars_well_formed(line)) return kExitUsage;
  resolve_plugins(line);
  const Command* command = chosen_command(app, kCommands);
  if (!command) return kExitUsage;
  return command;
}

int run_cli(int argc, char** argv, Registry& registry) {
  // The lab VM's PID 1 (vm/guest.h); not a command for people.
  if (argc == 2 && std::string_view(argv[1]) == "__vm-guest" && ::getpid() == 1) vm::guest_main();
  set_up_logging();
  CommandLine line;
  const auto parsed = parse_command_line(std::vector<std::string>(argv + 1, argv + argc), line);
  if (const int* code = std::get_if<int>(&parsed)) return *code;
  if (line.run.verbose || line.cleanup.verbose) spdlog::set_level(spdlog::level::debug);
  if (!load_given_plugins(line.plugins, registry)) return kExitUsage;
  return std::get<const Command*>(parsed)->run(line, registry);
}

}  // namespace rxerun
