#include "app/cli.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include <unistd.h>

#include "app/cli_completion.h"
#include "app/cli_manual.h"
#include "app/commands.h"
#include "app/plugins.h"
#include "app/run.h"
#include "base/duration.h"
#include "base/output.h"
#include "base/strings.h"
#include "base/version.h"
#include "engine/diag.h"
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

const ExitCode kRunExitCodes[] = {
    {kExitOk, "every expectation held and cleanup left nothing"},
    {kExitFailed, "an expectation failed, or the kernel reported trouble during the run"},
    {kExitUsage, "usage error or invalid scenario; nothing on the host was touched"},
    {kExitEnvironment, "environment or step error (not permitted, a step could not run, the lab VM failed)"},
    {kExitResidue, "cleanup left something behind (wins over 0 and 1)"},
    {kExitInterrupted, "interrupted by SIGINT or SIGTERM, after cleanup ran"},
};
constexpr const char* kRunDetails =
    "Preclean (undo whatever an earlier run of the scenario left in its journal), run the steps in order, check "
    "each step's expectation, then clean up. The first step that does not pass stops the run; cleanup still runs. "
    "Several files, a directory (its *.yaml files, sorted by name) or a kernel matrix make a suite: every scenario "
    "is checked before any runs, each then runs with its own preclean, steps and cleanup, and a table at the end "
    "gives each run's result. A suite exits with the worst of its runs' codes: 130, then 2, 3, 4, 1, 0. By "
    "default a scenario runs on the host when the host can do everything it needs, otherwise in the lab VM when "
    "one is prepared (--vm and --host decide).";

// --vm, --host, --kernel: the lab checked where `run` with them would put it.
void add_where_options(CLI::App& cmd, WhereOptions& where) {
  auto* vm = cmd.add_flag("--vm", where.vm, "check the lab as `run --vm` would run it: in the lab VM");
  cmd.add_flag("--host", where.host, "check the lab as `run --host` would run it: on this machine's kernel")
      ->excludes(vm);
  cmd.add_option("--kernel", where.kernel,
                 "check the lab for this lab kernel, as `run --kernel` would run it (a list or all: no kernel's "
                 "rules, a matrix compares kernels)")
      ->type_name("VERSION[,VERSION...]|all|PATH");
}

void add_validate_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("scenarios", line.validate_files, "scenario files, and directories of them (their *.yaml, sorted)")
      ->required()
      ->type_name("SCENARIO|DIR");
  cmd.add_option("--var", line.validate.vars, "set a variable (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd.add_flag("--json", line.validate_json,
               "one JSON document on stdout: each file's validity and diagnostics (for editors and CI)");
  add_var_file_option(cmd, line.validate.var_files);
  add_where_options(cmd, line.validate_where);
}
int validate_command(CommandLine& line, Registry& registry) {
  return cmd_validate(line.validate_files, line.validate, line.validate_json, line.validate_where.request(), registry);
}
const ExitCode kValidateExitCodes[] = {
    {kExitOk, "every file is a valid scenario"},
    {kExitUsage, "a file is invalid (its diagnostics printed), or a usage error"},
};
constexpr const char* kValidateDetails =
    "Check scenario files: syntax, keys, step kinds and their parameters, durations, matchers and variables; a "
    "directory stands for its *.yaml files, sorted. Nothing on the host changes and no state is written. Prints "
    "one ok line per valid file, and each error as FILE:LINE:COL: message.";

void add_plan_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("scenarios", line.plan_files, "scenario files, and directories of them (their *.yaml, sorted)")
      ->required()
      ->type_name("SCENARIO|DIR");
  add_common_options(cmd, line.plan);
  add_where_options(cmd, line.plan_where);
}
int plan_command(CommandLine& line, Registry& registry) {
  return cmd_plan(line.plan_files, line.plan, line.plan_where.request(), registry);
}
const ExitCode kPlanExitCodes[] = {
    {kExitOk, "the plan of every scenario was printed"},
    {kExitUsage, "a scenario is invalid (its diagnostics printed), or a usage error"},
};
constexpr const char* kPlanDetails =
    "Print the ordered actions each scenario would take, each with the equivalent shell command, quoted for a "
    "POSIX shell. Changes nothing. Steps whose parameters read facts of earlier steps ({{steps.NAME.FACT}}) cannot "
    "be previewed and are listed as such; a plugin's step is listed, not run.";

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
const ExitCode kGraphExitCodes[] = {
    {kExitOk, "the SVG was written"},
    {kExitUsage, "the scenario is invalid, or a usage error; nothing written"},
    {kExitEnvironment, "Graphviz could not draw it, or the file could not be written"},
};
constexpr const char* kGraphDetails =
    "Draw the lab the scenario builds as SVG, on standard output or into the file -o names (written atomically, "
    "never through a symbolic link): its namespaces as boxes, the interfaces with their addresses, MTU and routes, "
    "veth pairs and wires as lines, rxe and siw devices joined to their netdevs, and the faults and captures with "
    "the step that lifts them. Everything is read from the steps' parameters; nothing runs. Each element's SVG id "
    "is made of names (netns/lab, netns/lab/vA, rdma/rxe0, block/STEP), for tools and tests.";

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
const ExitCode kCleanupExitCodes[] = {
    {kExitOk, "nothing is left (also when there was nothing to undo)"},
    {kExitUsage, "the scenario is invalid, or a usage error"},
    {kExitEnvironment, "the journal cannot be opened (another run holds its lock, the state directory is unsafe)"},
    {kExitResidue, "something could not be undone and is left behind"},
    {kExitInterrupted, "interrupted by SIGINT or SIGTERM"},
};
constexpr const char* kCleanupDetails =
    "Undo whatever a run of the scenario left behind, from its journal: a run started with --keep, or a run that "
    "was killed. Then the interfaces carrying the scenario's mark are removed. Safe at any time; with nothing to "
    "undo it says so. A plugin's changes are undone by that plugin, loaded from the path the journal keeps.";

void add_steps_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("kind", line.steps_kind, "a step kind")->type_name("KIND");
  cmd.add_flag("--markdown", line.steps_markdown, "every kind's reference as Markdown (the end of docs/scenarios.md)");
}
int steps_command(CommandLine& line, Registry& registry) {
  return cmd_steps(line.steps_kind, line.steps_markdown, registry);
}
const ExitCode kStepsExitCodes[] = {
    {kExitOk, "the kinds, or the kind, described"},
    {kExitUsage, "an unknown kind (the near spelling suggested), or a usage error"},
};
constexpr const char* kStepsDetails =
    "Without KIND, one line per step kind this binary has (with --plugin, the plugin's too). With KIND, its "
    "parameters (type, default, whether required), the facts it reports, its default timeout and an example. The "
    "kinds are listed under STEP KINDS below.";

int schema_command(CommandLine&, Registry& registry) {
  return cmd_schema(registry);
}
const ExitCode kSchemaExitCodes[] = {
    {kExitOk, "the schema was printed"},
    {kExitUsage, "a usage error (a plugin that cannot be loaded)"},
};
constexpr const char* kSchemaDetails =
    "Print the JSON Schema of scenario files, for editors and other tools (the YAML language server); made from "
    "the kinds' declarations, with --plugin the plugin's kinds too.";

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
  cmd.add_option("file", line.decode.file, "the capture file (pcap or pcapng)")->required()->type_name("CAPTURE");
  auto* json = cmd.add_flag("--json", line.decode.json, "one JSON object per packet (JSON Lines) instead of text");
  cmd.add_flag("--summary", line.decode.summary, "with --json: end with a line {\"summary\": {...}} of the counts")
      ->needs(json);
}
int decode_command(CommandLine& line, Registry&) {
  return cmd_decode(line.decode);
}
const ExitCode kDecodeExitCodes[] = {
    {kExitOk, "the whole file was read (bad ICRCs and malformed frames included)"},
    {kExitFailed, "the file ends in the middle of a frame (the frames before it are listed)"},
    {kExitUsage, "the file is missing, no capture file, or of a link type decode does not read"},
    {kExitEnvironment, "the output could not be written"},
};
constexpr const char* kDecodeDetails =
    "List the RoCEv2 packets (UDP port 4791) of a pcap or pcapng file of link type Ethernet, raw IP or Linux "
    "cooked, one line each: frame, time, addresses, opcode, destination QP, PSN, the RETH, AETH and DETH, and "
    "whether the ICRC is good; then the counts (packets per opcode, ACKs and NAKs, PSN gaps, ICRCs). Other traffic "
    "is counted, not listed. With --json, one JSON object per packet (JSON Lines).";

void add_report_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("report", line.report_page.report, "a JSON report, as a run writes it (json:PATH)")
      ->required()
      ->type_name("REPORT.json");
  cmd.add_option("-o,--output", line.report_page.output, "write the page to FILE (atomically) instead of stdout")
      ->type_name("FILE.html");
  cmd.add_option("--output-dir", line.report_page.output_dir,
                 "where the run wrote its captures (default: beside the report)")
      ->type_name("DIR");
}
int report_command(CommandLine& line, Registry&) {
  return cmd_report(line.report_page);
}
const ExitCode kReportExitCodes[] = {
    {kExitOk, "the page was written"},
    {kExitUsage, "the report is missing, not JSON, or not a report rxerun writes"},
    {kExitEnvironment, "the page could not be written"},
};
constexpr const char* kReportDetails =
    "Render a JSON report (of a run, a suite or a two-node lab) as one self-contained HTML page, the page a "
    "run's html report writes: the lab's drawing, a timeline of the steps, every step with its parameters, "
    "facts and expectations, counter charts, kernel findings, and for each capture its packet ladder. Captures "
    "are looked for under --output-dir, then beside the report; one that is gone gets a note instead of its "
    "ladder. Reports of every version rxerun wrote are read.";

void add_vm_setup_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("--kernel", line.setup_kernels,
                 "a kernel to prepare (default: " + known_kernel_labels() +
                     "), or any Debian kernel version (6.12; repeatable)")
      ->type_name("VERSION")
      ->allow_extra_args(false);
  cmd.add_flag("--remove-snapshots", line.setup_remove_snapshots,
               "remove the lab VM's snapshots (of every prepared kernel) and prepare nothing; the next start of "
               "each makes its snapshot again");
}
int vm_setup_command(CommandLine& line, Registry&) {
  if (line.setup_remove_snapshots) return cmd_vm_remove_snapshots();
  return cmd_vm_setup(line.setup_kernels);
}
const ExitCode kVmSetupExitCodes[] = {
    {kExitOk, "every kernel asked for is ready"},
    {kExitUsage, "a kernel that is no version (two or three numbers), or a usage error"},
    {kExitEnvironment, "a kernel could not be downloaded or prepared (Debian has no such version, apt failed)"},
    {kExitInterrupted, "interrupted (nothing half-prepared is left)"},
};
constexpr const char* kVmSetupDetails =
    "Download the Debian kernel packages with apt-get download through a private apt configuration, unpack them, "
    "decompress the modules, run depmod and build the initramfs, under the cache directory. Nothing is installed "
    "into /boot or /lib/modules; a ready kernel is left as it is. A VERSION other than the known ones is the newest "
    "linux-image-VERSION.N...-amd64 of Debian's suites, labelled VERSION.";

void add_vm_status_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_flag("--json", line.status_json,
               "one JSON document: the kernels, their paths relative to the cache and their sizes");
}
int vm_status_command(CommandLine& line, Registry&) {
  return cmd_vm_status(line.status_json);
}
const ExitCode kVmStatusExitCodes[] = {
    {kExitOk, "the status was printed"},
    {kExitUsage, "a usage error"},
};
constexpr const char* kVmStatusDetails =
    "List the prepared lab kernels and where they are, the known ones not yet prepared, the suites any other "
    "version is looked up in, the accelerator (KVM or software emulation) and which kernels have siw.";

void add_vm_exec_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("--kernel", line.exec.kernel,
                 "the lab VM's kernel (" + known_kernel_labels() + ", or one prepared; default: the newest prepared)")
      ->type_name("VERSION");
  cmd.add_option("--timeout", line.exec_timeout, "stop the VM when the program runs longer (default: 10m)")
      ->type_name("DURATION");
  cmd.add_flag("-q,--quiet", line.exec.quiet, "no boot line and no spinner");
  cmd.add_flag("--cold-boot", line.exec.cold_boot, "boot the kernel instead of starting from its snapshot");
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
const ExitCode kVmExecExitCodes[] = {
    {kExitOk, "the program exited with 0 (any other code of the program's is passed on; 128+N: signal N)"},
    {kExitUsage, "an unknown kernel, a bad --timeout, no program, or a usage error"},
    {kExitEnvironment, "no kernel prepared, the lab VM did not boot, or the program ran past --timeout"},
    {kExitInterrupted, "interrupted (the lab VM is stopped)"},
};
constexpr const char* kVmExecDetails =
    "Run any program (a path, or a name on the guest's PATH) in the lab VM instead of a scenario, with the host's "
    "root file system read-only under a throwaway layer, its output live; exit with its exit code.";

void add_help_options(CLI::App& cmd, CommandLine& line) {
  cmd.add_option("command", line.help_topic, "a command (vm setup: a command of vm)")->type_name("COMMAND");
  auto* man = cmd.add_flag("--man", line.help_man, "print the manual page (roff: rxerun help --man | man -l -)");
  cmd.add_flag("--bash-completion", line.help_bash_completion, "print the bash completion script")->excludes(man);
}
int help_command(CommandLine& line, Registry& registry);
const ExitCode kHelpExitCodes[] = {
    {kExitOk, "the help was printed"},
    {kExitUsage, "an unknown command (the near one suggested), or a usage error"},
};
constexpr const char* kHelpDetails =
    "The help of rxerun, or of one command: rxerun help validate prints what rxerun validate --help prints. With "
    "--man, this manual page; with --bash-completion, the completion script (both made from the same declarations "
    "as --help).";

const Command kVmCommands[] = {
    {.name = "setup",
     .help = "download and prepare lab kernels (default: the ones rxerun ships labs for)",
     .add_options = add_vm_setup_options,
     .run = vm_setup_command,
     .exit_codes = kVmSetupExitCodes,
     .details = kVmSetupDetails},
    {.name = "status",
     .help = "list the lab kernels and whether they are ready",
     .add_options = add_vm_status_options,
     .run = vm_status_command,
     .exit_codes = kVmStatusExitCodes,
     .details = kVmStatusDetails},
    {.name = "exec",
     .help = "run any program in the lab VM: rxerun vm exec [--kernel K] -- PROGRAM [ARGS...]",
     .add_options = add_vm_exec_options,
     .run = vm_exec_command,
     .exit_codes = kVmExecExitCodes,
     .details = kVmExecDetails},
};

// rxerun's commands, in the order --help lists them.
const Command kCommands[] = {
    {.name = "run",
     .help = "preclean, run the steps in order, clean up; several scenarios or a directory run as a suite",
     .add_options = add_run_command_options,
     .run = run_scenarios_command,
     .plugins = Plugins::loaded,
     .exit_codes = kRunExitCodes,
     .details = kRunDetails},
    {.name = "validate",
     .help = "check scenario files; nothing on the host changes",
     .add_options = add_validate_options,
     .run = validate_command,
     .plugins = Plugins::loaded,
     .exit_codes = kValidateExitCodes,
     .details = kValidateDetails},
    {.name = "plan",
     .help = "print the ordered actions, each with its shell equivalent; changes nothing",
     .add_options = add_plan_options,
     .run = plan_command,
     .plugins = Plugins::loaded,
     .exit_codes = kPlanExitCodes,
     .details = kPlanDetails},
    {.name = "graph",
     .help = "draw the lab the scenario builds as SVG: namespaces, interfaces, wires, RDMA devices, faults",
     .add_options = add_graph_options,
     .run = graph_command,
     .plugins = Plugins::loaded,
     .exit_codes = kGraphExitCodes,
     .details = kGraphDetails},
    {.name = "cleanup",
     .help = "undo whatever a run of the scenario left behind; safe any time",
     .add_options = add_cleanup_options,
     .run = cleanup_command,
     .plugins = Plugins::loaded,
     .exit_codes = kCleanupExitCodes,
     .details = kCleanupDetails},
    {.name = "steps",
     .help = "list the step kinds; with KIND: its parameters, facts and an example",
     .add_options = add_steps_options,
     .run = steps_command,
     .plugins = Plugins::loaded,
     .exit_codes = kStepsExitCodes,
     .details = kStepsDetails},
    {.name = "schema",
     .help = "print the JSON Schema of scenario files",
     .add_options = nullptr,
     .run = schema_command,
     .plugins = Plugins::loaded,
     .exit_codes = kSchemaExitCodes,
     .details = kSchemaDetails},
    // A node's agent in a two-node lab (app/agent.h): the host starts it in
    // the node's lab VM.
    {.name = "__agent", .help = "", .add_options = add_agent_options, .run = agent_command, .plugins = Plugins::loaded},
    // The server end of a verbs step across two nodes (app/agent.h), which
    // that step starts on the server's node.
    {.name = "__verbs-server", .help = "", .add_options = nullptr, .run = verbs_server_command},
    // A node's counters, for a pair step across two nodes (app/agent.h).
    {.name = "__counters", .help = "", .add_options = add_counters_options, .run = counters_command},
    {.name = "decode",
     .help = "list the RoCEv2 packets of a capture file (pcap or pcapng) and count them",
     .add_options = add_decode_options,
     .run = decode_command,
     .exit_codes = kDecodeExitCodes,
     .details = kDecodeDetails},
    {.name = "report",
     .help = "render a JSON report as one self-contained HTML page",
     .add_options = add_report_options,
     .run = report_command,
     .exit_codes = kReportExitCodes,
     .details = kReportDetails},
    {.name = "vm",
     .help = "prepare (setup) or show (status) the lab VM's kernels, or run a program in it (exec)",
     .add_options = nullptr,
     .run = nullptr,
     .subcommands = kVmCommands},
    {.name = "help",
     .help = "the help of rxerun or of one command; --man: the manual page",
     .add_options = add_help_options,
     .run = help_command,
     .exit_codes = kHelpExitCodes,
     .details = kHelpDetails},
};

// The footer of a command's --help: its exit codes.
std::string exit_codes_footer(std::span<const ExitCode> codes) {
  if (codes.empty()) return "";
  std::string text = "Exit codes:";
  for (const ExitCode& e : codes) text += fmt::format(" {} {};", e.code, e.meaning);
  text.back() = '.';
  return text;
}

void add_commands(CLI::App& parent, std::span<const Command> commands, CommandLine& line) {
  for (const Command& c : commands) {
    CLI::App* cmd = parent.add_subcommand(c.name, c.help);
    if (!*c.help) cmd->group("");
    // Set for every command: CLI11 would give a command its parent's.
    cmd->footer(!c.subcommands.empty()
                    ? fmt::format("rxerun {} COMMAND --help: a command's options and exit codes.", c.name)
                    : exit_codes_footer(c.exit_codes));
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

// The names of the commands people type (not the hidden ones).
std::vector<std::string> command_names(std::span<const Command> commands) {
  std::vector<std::string> names;
  for (const Command& c : commands)
    if (*c.help) names.emplace_back(c.name);
  return names;
}

bool is_command_name(std::string_view word) {
  return std::any_of(std::begin(kCommands), std::end(kCommands), [&](const Command& c) { return word == c.name; });
}

// Why `word`, taken for a command, is none: with the near name when there is one.
std::string unknown_command(const std::string& word, std::span<const Command> commands) {
  const auto names = command_names(commands);
  if (auto near = suggest(word, names)) return fmt::format("unknown command '{}'; did you mean '{}'?", word, *near);
  return fmt::format("unknown command '{}' (and no such scenario file): the commands are {}", word, join(names, ", "));
}

// `rxerun FILE.yaml ...` means `rxerun run FILE.yaml ...`; a first word
// that can only be a mistyped command is refused. `implied` is set when
// `run` was put in front of options (`rxerun -v lab.yaml`), whose first
// scenario parse_command_line checks the same way once CLI11 has told
// options' values from it.
Result<std::vector<std::string>> with_default_command(std::vector<std::string> args, bool* implied) {
  *implied = false;
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && !is_command_name(args[0])) {
    if (first_word_is_command(args[0])) return make_error(unknown_command(args[0], kCommands));
    args.insert(args.begin(), "run");
  }
  if (!args.empty() && args[0].size() > 1 && args[0][0] == '-' && args[0] != "--help" && args[0] != "-h" &&
      args[0] != "--version") {
    if (std::none_of(args.begin(), args.end(), is_command_name)) {
      args.insert(args.begin(), "run");
      *implied = true;
    }
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

std::string value_name(const CLI::Option& option) {
  const std::string name = option.get_type_name();
  return name.substr(0, name.find(":{"));
}

bool first_word_is_command(const std::string& word) {
  if (is_command_name(word)) return true;
  std::error_code ec;
  if (std::filesystem::exists(word, ec)) return false;
  return word.find('/') == std::string::npos && !word.ends_with(".yaml") && !word.ends_with(".yml");
}

std::span<const Command> commands() {
  return kCommands;
}

void build_command_line(CLI::App& app, CommandLine& line) {
  app.name("rxerun");
  app.description(
      "rxerun — Soft-RoCE labs from YAML scenario files: build the lab, check every expectation, "
      "clean up exactly what was built.\n\n`rxerun SCENARIO.yaml` is `rxerun run SCENARIO.yaml`.");
  app.set_version_flag("--version", std::string("rxerun ") + RXERUN_VERSION);
  app.require_subcommand(1);
  app.footer("rxerun help COMMAND, or rxerun COMMAND --help: a command's options and exit codes.");
  add_commands(app, kCommands, line);
}

std::variant<const Command*, int> parse_command_line(std::vector<std::string> args, CommandLine& line) {
  CLI::App app;
  build_command_line(app, line);
  bool implied_run = false;
  auto with_command = with_default_command(std::move(args), &implied_run);
  if (!with_command) {
    print(stderr, "rxerun: {}\n", with_command.error().message);
    return kExitUsage;
  }
  args = std::move(*with_command);
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (implied_run && !line.run.scenarios.empty() && first_word_is_command(line.run.scenarios.front())) {
    print(stderr, "rxerun: {}\n", unknown_command(line.run.scenarios.front(), kCommands));
    return kExitUsage;
  }
  if (!vars_well_formed(line)) return kExitUsage;
  resolve_plugins(line);
  const Command* command = chosen_command(app, kCommands);
  if (!command) return kExitUsage;
  return command;
}

namespace {

// `rxerun help [COMMAND...]` is `rxerun COMMAND... --help`; --man and
// --bash-completion print what is made of the same command line.
int help_command(CommandLine& line, Registry& registry) {
  if (line.help_man || line.help_bash_completion) {
    if (!line.help_topic.empty()) {
      print(stderr, "rxerun: help --man and --bash-completion describe every command; leave out COMMAND\n");
      return kExitUsage;
    }
    CLI::App app;
    CommandLine scratch;
    build_command_line(app, scratch);
    write_out(stdout, line.help_man ? manual_page(app, kCommands, registry) : bash_completion(app, kCommands));
    return kExitOk;
  }
  std::span<const Command> level = kCommands;
  for (const auto& word : line.help_topic) {
    const auto found =
        std::find_if(level.begin(), level.end(), [&](const Command& c) { return *c.help && word == c.name; });
    if (found == level.end()) {
      print(stderr, "rxerun: {}\n", unknown_command(word, level));
      return kExitUsage;
    }
    level = found->subcommands;
  }
  std::vector<std::string> args = line.help_topic;
  args.emplace_back("--help");
  CommandLine scratch;
  return std::get<int>(parse_command_line(std::move(args), scratch));
}

}  // namespace

int run_cli(int argc, char** argv, Registry& registry) {
  // The lab VM's PID 1 (vm/guest.h); not a command for people.
  if (argc == 2 && std::string_view(argv[1]) == "__vm-guest" && ::getpid() == 1)
    vm::guest_main([&](const std::vector<std::string>& args) {
      std::vector<char*> child_argv{argv[0]};
      for (const auto& a : args) child_argv.push_back(const_cast<char*>(a.c_str()));
      child_argv.push_back(nullptr);
      return run_cli(static_cast<int>(args.size() + 1), child_argv.data(), registry);
    });
  set_up_logging();
  CommandLine line;
  const auto parsed = parse_command_line(std::vector<std::string>(argv + 1, argv + argc), line);
  if (const int* code = std::get_if<int>(&parsed)) return *code;
  if (line.run.verbose || line.cleanup.verbose) spdlog::set_level(spdlog::level::debug);
  if (!load_given_plugins(line.plugins, registry)) return kExitUsage;
  return std::get<const Command*>(parsed)->run(line, registry);
}

}  // namespace rxerun
