#include "app/cli.h"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>

#include <unistd.h>

#include "app/agent.h"
#include "app/cli_decode.h"
#include "app/cli_vm.h"
#include "app/graph.h"
#include "app/plan.h"
#include "app/plugins.h"
#include "app/run.h"
#include "base/output.h"
#include "base/version.h"
#include "engine/checks.h"
#include "engine/journal.h"
#include "engine/loader.h"
#include "engine/reference.h"
#include "engine/report.h"
#include "engine/runner.h"
#include "engine/schema.h"
#include "sys/host_info.h"
#include "sys/kernel_log.h"
#include "sys/model/system.h"
#include "sys/real.h"
#include "vm/guest.h"
#include "vm/kernel/kernels.h"

namespace rxerun {

namespace {

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--var", o.vars, "set a variable (repeatable; wins over the scenario's vars)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--only", o.only, "run tagged steps only when they carry TAG (untagged steps always run)")
      ->type_name("TAG")
      ->allow_extra_args(false);
  cmd->add_option("--skip", o.skip, "leave out steps that carry TAG")->type_name("TAG")->allow_extra_args(false);
}

void add_output(CLI::App* cmd, RunCommandOptions& o) {
  auto* v = cmd->add_flag("-v,--verbose", o.verbose, "show every fact, every undo and debug logs");
  cmd->add_flag("-q,--quiet", o.quiet, "show only failures and the summary")->excludes(v);
  cmd->add_option("--color", o.color, "colour: auto (on a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN");
}

int cmd_validate(const std::vector<std::string>& files, const CommonOptions& common, Registry& registry) {
  int code = kExitOk;
  for (const auto& f : files) {
    auto s = load(f, registry, common);
    if (!s) {
      code = kExitUsage;
      continue;
    }
    print(stdout, "{}: ok: scenario '{}', {} step{}\n", f, s->name, s->steps.size(), s->steps.size() == 1 ? "" : "s");
  }
  return code;
}

int cmd_plan(const std::string& file, const CommonOptions& common, Registry& registry) {
  auto scenario = load(file, registry, common);
  if (!scenario) return kExitUsage;
  sys::ModelSystem model;
  sys::make_plan_world(model);
  Journal journal = Journal::in_memory();
  PlanReporter printer(stdout, model.kernel);
  RunOptions ro;
  ro.only = common.only;
  ro.skip = common.skip;
  ro.planning = true;
  Runner runner(registry, model.system, journal, printer, ro);
  runner.run(*scenario);
  return kExitOk;
}

int cmd_cleanup(const std::string& file, const RunCommandOptions& o, Registry& registry) {
  // A plugin that is gone must not stop the cleanup of everything else.
  auto scenario = load(file, registry, o.common, /*plugins_may_fail=*/true);
  if (!scenario) return kExitUsage;
  auto journal = open_journal(scenario->name);
  if (!journal) return kExitEnvironment;
  load_journal_plugins(*journal, registry);
  sys::RealSystem real;
  real.interrupt().bind_signals();
  sys::System& system = real.system();
  TerminalReporter terminal(stdout, terminal_style(o));
  Runner runner(registry, system, *journal, terminal);
  CleanupReport report = runner.cleanup(scenario->name, "cleanup", &*scenario);
  if (report.interrupted) return kExitInterrupted;
  return report.clean() ? kExitOk : kExitResidue;
}

int cmd_steps(const std::string& kind_name, bool markdown, const Registry& registry) {
  if (markdown) {
    if (!kind_name.empty()) {
      print(stderr, "rxerun: steps --markdown describes every kind; leave out KIND\n");
      return kExitUsage;
    }
    print(stdout, "{}", kinds_markdown(registry));
    return kExitOk;
  }
  if (kind_name.empty()) {
    std::size_t width = 0;
    for (const auto& k : registry.kinds()) width = std::max(width, k.spec.name.size());
    for (const auto& k : registry.kinds()) print(stdout, "{:<{}}  {}\n", k.spec.name, width, k.spec.summary);
    return kExitOk;
  }
  const Kind* k = registry.find(kind_name);
  if (!k) {
    print(stderr, "rxerun: unknown step kind '{}'{}\n", kind_name, did_you_mean(kind_name, registry.names()));
    return kExitUsage;
  }
  print(stdout, "{}", describe_kind(k->spec));
  if (!k->plugin.empty()) print(stdout, "\nplugin: {}\n", k->plugin);
  return kExitOk;
}

// `rxerun FILE.yaml ...` means `rxerun run FILE.yaml ...`.
std::vector<std::string> with_default_command(int argc, char** argv, const std::set<std::string>& commands) {
  std::vector<std::string> args(argv + 1, argv + argc);
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

}  // namespace

int run_cli(int argc, char** argv, Registry& registry) {
  // The lab VM's PID 1 (vm/guest.h); not a command for people.
  if (argc == 2 && std::string_view(argv[1]) == "__vm-guest" && ::getpid() == 1) vm::guest_main();

  auto logger = spdlog::stderr_color_mt("rxerun");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("rxerun: %l: %v");
  spdlog::set_level(spdlog::level::warn);

  CLI::App app{
      "rxerun — Soft-RoCE labs from YAML scenario files: build the lab, check every expectation, "
      "clean up exactly what was built.\n\n`rxerun SCENARIO.yaml` is `rxerun run SCENARIO.yaml`.",
      "rxerun"};
  app.set_version_flag("--version", std::string("rxerun ") + RXERUN_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 every expectation held and cleanup left nothing; 1 an expectation failed; 2 usage or "
      "scenario invalid; 3 environment or step error; 4 cleanup left something behind; 130 interrupted.");

  RunCommandOptions run_o;
  auto* run = app.add_subcommand(
      "run", "preclean, run the steps in order, clean up; several scenarios or a directory run as a suite");
  run->add_option("scenarios", run_o.scenarios, "scenario files, and directories of them (their *.yaml, sorted)")
      ->required()
      ->type_name("SCENARIO|DIR");
  add_common(run, run_o.common);
  run->add_flag("--keep", run_o.keep, "leave the lab up; `rxerun cleanup SCENARIO` removes it later");
  run->add_flag("--force", run_o.force,
                "replace an existing interface or namespace that does not carry rxerun's mark (it is deleted)");
  run->add_option("--report", run_o.reports, "write a report: json:PATH or junit:PATH (repeatable)")
      ->type_name("FORMAT:PATH")
      ->allow_extra_args(false);
  add_output(run, run_o);
  run->add_option("--output-dir", run_o.output_dir,
                  "where files the steps write (captures) go when their paths are relative (default: here)")
      ->type_name("DIR");
  run->add_option("--guest-output", run_o.guest_output)->group("");  // the lab VM's share; the host sets it
  run->add_option("--kernel-health", run_o.kernel_health,
                  "what the kernel's own reports during the run (WARNING, BUG, Oops, KASAN, panic, ...) do: fail "
                  "the run (fail, the default), show them only (warn), or go unread (off); wins over the "
                  "scenario's kernel_health")
      ->check(CLI::IsMember({"fail", "warn", "off"}))
      ->type_name("POLICY");
  auto* vm_flag = run->add_flag("--vm", run_o.vm, "run in the lab VM (`rxerun vm setup` prepares it)");
  run->add_flag("--host", run_o.host, "run on this machine's kernel, never in the lab VM")->excludes(vm_flag);
  run->add_option("--kernel", run_o.kernel,
                  "the lab VM's kernel: a prepared one (6.1, 7.3, 6.12), or a kernel of your own: a build "
                  "directory or an image (default: the scenario's vm.kernel, else the newest prepared); "
                  "a list (6.1,7.3) or all runs each scenario once per kernel")
      ->type_name("VERSION[,VERSION...]|all|PATH");
  run->add_option("--modules", run_o.modules, "with --kernel IMAGE: its modules directory (as /lib/modules/RELEASE)")
      ->type_name("DIR");
  run->add_option("-j,--jobs", run_o.jobs, "up to N lab VMs at once (as the cores and the memory allow)")
      ->type_name("N");
  run->add_flag("--fail-fast", run_o.fail_fast, "stop the suite at the first scenario that does not pass");
  run->add_option("--shard", run_o.shard, "run only the K-th of N deterministic parts of the suite (CI job matrix)")
      ->type_name("K/N");
  run->add_option("--lab-kernel", run_o.lab_kernel)->group("");  // the guest's kernel label; the host sets it
  run->add_option("--suite-position", run_o.suite_position)
      ->group("");                                         // the guest's first run number; the host sets it
  run->add_flag("--progress", run_o.progress)->group("");  // the guest's status line; the host sets it

  std::vector<std::string> validate_files;
  CommonOptions validate_common;
  auto* validate = app.add_subcommand("validate", "check scenario files; nothing on the host changes");
  validate->add_option("scenarios", validate_files, "scenario files")->required()->type_name("SCENARIO");
  validate->add_option("--var", validate_common.vars, "set a variable (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);

  std::string plan_file;
  CommonOptions plan_common;
  auto* plan = app.add_subcommand("plan", "print the ordered actions, each with its shell equivalent; changes nothing");
  plan->add_option("scenario", plan_file, "the scenario file")->required()->type_name("SCENARIO");
  add_common(plan, plan_common);

  GraphOptions graph_o;
  auto* graph = app.add_subcommand(
      "graph", "draw the lab the scenario builds as SVG: namespaces, interfaces, wires, RDMA devices, faults");
  graph->add_option("scenario", graph_o.scenario, "the scenario file")->required()->type_name("SCENARIO");
  graph->add_option("--var", graph_o.common.vars, "set a variable (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  graph->add_option("-o,--output", graph_o.output, "write the SVG to FILE (atomically) instead of stdout")
      ->type_name("FILE");

  RunCommandOptions cleanup_o;
  std::string cleanup_file;
  auto* cleanup = app.add_subcommand("cleanup", "undo whatever a run of the scenario left behind; safe any time");
  cleanup->add_option("scenario", cleanup_file, "the scenario file")->required()->type_name("SCENARIO");
  cleanup->add_option("--var", cleanup_o.common.vars, "set a variable (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_output(cleanup, cleanup_o);

  std::string steps_kind;
  auto* steps = app.add_subcommand("steps", "list the step kinds; with KIND: its parameters, facts and an example");
  steps->add_option("kind", steps_kind, "a step kind")->type_name("KIND");
  bool steps_markdown = false;
  steps->add_flag("--markdown", steps_markdown, "every kind's reference as Markdown (the end of docs/scenarios.md)");

  auto* schema = app.add_subcommand("schema", "print the JSON Schema of scenario files");

  // A node's agent in a two-node lab (app/agent.h): the host starts it in
  // the node's lab VM; not a command for people.
  AgentOptions agent_o;
  auto* agent = app.add_subcommand("__agent", "")->group("");
  agent->add_option("scenario", agent_o.scenario)->required();
  agent->add_option("--node", agent_o.node)->required();
  add_common(agent, agent_o.common);
  agent->add_flag("--force", agent_o.force);
  agent->add_option("--kernel-health", agent_o.kernel_health);
  agent->add_option("--output-dir", agent_o.output_dir);

  // The server end of a verbs step across two nodes (app/agent.h), which
  // that step starts on the server's node.
  auto* verbs_server = app.add_subcommand("__verbs-server", "")->group("");
  // A node's counters, for a pair step across two nodes (app/agent.h).
  std::optional<std::string> counters_netns;
  auto* counters_cmd = app.add_subcommand("__counters", "")->group("");
  counters_cmd->add_option("--netns", counters_netns);

  std::vector<std::string> plugin_args;
  for (auto* cmd : {run, validate, plan, graph, cleanup, steps, schema, agent})
    cmd->add_option("--plugin", plugin_args, "load step kinds from a plugin (a shared object; repeatable)")
        ->type_name("PATH")
        ->allow_extra_args(false);

  DecodeOptions decode_o;
  auto* decode =
      app.add_subcommand("decode", "list the RoCEv2 packets of a capture file (pcap or pcapng) and count them");
  decode->add_option("file", decode_o.file, "the capture file")->required()->type_name("FILE");
  auto* json_flag =
      decode->add_flag("--json", decode_o.json, "one JSON object per packet (JSON Lines) instead of text");
  decode->add_flag("--summary", decode_o.summary, "with --json: end with a line {\"summary\": {...}} of the counts")
      ->needs(json_flag);

  auto* vm_cmd =
      app.add_subcommand("vm", "prepare (setup) or show (status) the lab VM's kernels, or run a program in it (exec)");
  vm_cmd->require_subcommand(1);
  std::vector<std::string> setup_kernels;
  auto* vm_setup = vm_cmd->add_subcommand("setup", "download and prepare lab kernels (default: all of them)");
  vm_setup
      ->add_option("--kernel", setup_kernels,
                   "a kernel to prepare: 6.1, 7.3, or any Debian kernel version (6.12; repeatable)")
      ->type_name("VERSION")
      ->allow_extra_args(false);
  auto* vm_status = vm_cmd->add_subcommand("status", "list the lab kernels and whether they are ready");
  VmExecOptions exec_o;
  std::string exec_timeout = "10m";
  auto* vm_exec =
      vm_cmd->add_subcommand("exec", "run any program in the lab VM: rxerun vm exec [--kernel K] -- PROGRAM [ARGS...]");
  vm_exec->add_option("--kernel", exec_o.kernel, "the lab VM's kernel (6.1, 7.3; default: the newest prepared)")
      ->type_name("VERSION");
  vm_exec->add_option("--timeout", exec_timeout, "stop the VM when the program runs longer (default: 10m)")
      ->type_name("DURATION");
  vm_exec->add_flag("-q,--quiet", exec_o.quiet, "no boot line and no spinner");
  // Everything after `--` is the program's, options included.
  vm_exec->add_option("command", exec_o.command, "the program and its arguments, after --")
      ->required()
      ->expected(-1)
      ->type_name("PROGRAM [ARGS...]");

  std::set<std::string> commands;
  for (auto* c : app.get_subcommands([](CLI::App*) { return true; })) commands.insert(c->get_name());
  auto args = with_default_command(argc, argv, commands);
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector

  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  for (const auto* vars : {&run_o.common.vars, &validate_common.vars, &plan_common.vars, &graph_o.common.vars,
                           &cleanup_o.common.vars, &agent_o.common.vars}) {
    for (const auto& kv : *vars) {
      if (kv.find('=') == std::string::npos || kv.front() == '=') {
        print(stderr, "rxerun: --var {}: expected KEY=VALUE\n", kv);
        return kExitUsage;
      }
    }
  }
  if (run_o.verbose || cleanup_o.verbose) spdlog::set_level(spdlog::level::debug);

  // --plugin: loaded before any scenario is read, so that its kinds are known.
  for (const auto& given : plugin_args) {
    const std::string path = plugin_argument_path(given);
    if (auto loaded = load_plugin(path, registry); !loaded) {
      print(stderr, "rxerun: {}\n", loaded.error().message);
      return kExitUsage;
    }
    for (auto* common :
         {&run_o.common, &validate_common, &plan_common, &graph_o.common, &cleanup_o.common, &agent_o.common})
      common->plugins.push_back(path);
  }

  if (*run) return cmd_run(run_o, registry);
  if (*agent) return cmd_agent(agent_o, registry);
  if (*verbs_server) return cmd_verbs_server();
  if (*counters_cmd) return cmd_counters(counters_netns);
  if (*vm_setup) return cmd_vm_setup(setup_kernels);
  if (*vm_status) return cmd_vm_status();
  if (*vm_exec) {
    const auto timeout = parse_duration(exec_timeout);
    if (!timeout || timeout->count() <= 0) {
      print(stderr, "rxerun: vm exec --timeout {}: expected a duration such as 90s or 5m\n", exec_timeout);
      return kExitUsage;
    }
    if (exec_o.command.empty()) {
      print(stderr, "rxerun: vm exec: name the program to run: rxerun vm exec -- PROGRAM [ARGS...]\n");
      return kExitUsage;
    }
    exec_o.timeout = std::chrono::ceil<std::chrono::seconds>(*timeout);
    return cmd_vm_exec(exec_o);
  }
  if (*validate) return cmd_validate(validate_files, validate_common, registry);
  if (*plan) return cmd_plan(plan_file, plan_common, registry);
  if (*graph) return cmd_graph(graph_o, registry);
  if (*cleanup) return cmd_cleanup(cleanup_file, cleanup_o, registry);
  if (*steps) return cmd_steps(steps_kind, steps_markdown, registry);
  if (*decode) return cmd_decode(decode_o);
  if (*schema) {
    print(stdout, "{}\n", scenario_schema(registry).dump(2));
    return kExitOk;
  }
  return kExitUsage;
}

}  // namespace rxerun
