#include "app/cli.h"

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>

#include <unistd.h>

#include "app/cli_decode.h"
#include "app/cli_vm.h"
#include "app/kernel_health.h"
#include "app/placement.h"
#include "app/plan.h"
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
#include "sys/real.h"
#include "sys/recording/system.h"
#include "vm/guest.h"
#include "vm/kernel/kernels.h"

namespace rxerun {

namespace {

struct CommonOptions {
  std::vector<std::string> vars;  // KEY=VALUE
  std::vector<std::string> only;
  std::vector<std::string> skip;
};

struct RunCommandOptions {
  std::string scenario;
  CommonOptions common;
  bool keep = false;
  bool force = false;
  std::vector<std::string> reports;
  bool verbose = false;
  bool quiet = false;
  std::string color = "auto";
  bool vm = false;
  bool host = false;
  std::string kernel;
  std::string output_dir;     // --output-dir
  std::string guest_output;   // --guest-output: the lab VM's share (set by the host, not by people)
  std::string kernel_health;  // --kernel-health fail|warn|off; empty: the scenario's kernel_health
};

bool want_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return false;
  return sys::is_terminal(1);
}

// The terminal's look from -v/-q/--color (and NO_COLOR, TERM).
TerminalStyle terminal_style(const RunCommandOptions& o) {
  return {want_color(o.color), o.quiet ? Verbosity::Quiet : o.verbose ? Verbosity::Verbose : Verbosity::Normal};
}

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--var", o.vars, "set a variable (repeatable; wins over the scenario's vars)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--only", o.only, "run tagged steps only when they carry TAG (untagged steps always run)")
      ->type_name("TAG");
  cmd->add_option("--skip", o.skip, "leave out steps that carry TAG")->type_name("TAG");
}

void add_output(CLI::App* cmd, RunCommandOptions& o) {
  auto* v = cmd->add_flag("-v,--verbose", o.verbose, "show every fact, every undo and debug logs");
  cmd->add_flag("-q,--quiet", o.quiet, "show only failures and the summary")->excludes(v);
  cmd->add_option("--color", o.color, "colour: auto (on a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN");
}

// Loads and checks one file; prints diagnostics to stderr.
std::optional<Scenario> load(const std::string& file, const Registry& registry, const CommonOptions& common) {
  LoadOptions lo;
  for (const auto& kv : common.vars) lo.var_overrides[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  LoadResult r = load_scenario(file, registry, lo);
  for (const auto& d : r.diagnostics) print(stderr, "{}\n", d.to_string());
  return r.scenario;
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The scenario's journal, locked for this process; prints why not.
std::optional<Journal> open_journal(const std::string& scenario) {
  auto journal = Journal::open(default_state_dir(), scenario);
  if (!journal) {
    print(stderr, "rxerun: {}{}\n", journal.error().message,
          journal.error().code ? std::string(": ") + std::strerror(journal.error().code) : "");
    return std::nullopt;
  }
  spdlog::debug("journal {}", journal->path());
  if (int n = journal->dropped_from_earlier_boot())
    print(stdout, "journal {} is from an earlier boot: its {} change{} went with that boot; discarded\n",
          journal->path(), n, n == 1 ? "" : "s");
  return std::move(journal).value();
}

// Whether a step of the scenario needs rdma_rxe or siw: then a failed run shows
// what the RDMA stack logged.
bool uses_rdma(const Scenario& scenario, const Registry& registry) {
  for (const auto& step : scenario.steps)
    if (const Kind* kind = registry.find(step.kind))
      for (Need n : kind->spec.needs)
        if (n == Need::RdmaRxe || n == Need::RdmaSiw) return true;
  return false;
}

int cmd_run(const RunCommandOptions& o, const Registry& registry) {
  std::vector<ReportTarget> targets;
  for (const auto& spec : o.reports) {
    std::string why;
    auto t = parse_report_target(spec, &why);
    if (!t) {
      print(stderr, "rxerun: --report {}: {}\n", spec, why);
      return kExitUsage;
    }
    targets.push_back(*t);
  }
  auto scenario = load(o.scenario, registry, o.common);
  if (!scenario) return kExitUsage;

  PlacementRequest where{.force_vm = o.vm, .force_host = o.host};
  if (!o.kernel.empty()) where.kernel = o.kernel;
  const bool might_use_vm = !o.host;
  const Placement placement =
      place(*scenario, registry, where,
            might_use_vm ? vm::prepared_kernels(vm::search_dirs()) : std::vector<vm::PreparedKernel>{},
            o.vm || o.host ? HostAbilities{} : HostAbilities::probe());
  switch (placement.where) {
    case Placement::Where::BadKernel: print(stderr, "rxerun: {}\n", placement.message); return kExitUsage;
    case Placement::Where::Nowhere: print(stderr, "rxerun: {}\n", placement.message); return kExitEnvironment;
    case Placement::Where::Vm: {
      if (o.keep) {
        print(stderr, "rxerun: --keep cannot keep a lab in the lab VM: the VM is discarded after the run\n");
        return kExitUsage;
      }
      if (!placement.message.empty() && !o.quiet) print(stdout, "{}\n", placement.message);
      VmRunOptions vo{.scenario = o.scenario,
                      .vars = o.common.vars,
                      .only = o.common.only,
                      .skip = o.common.skip,
                      .reports = targets,
                      .force = o.force,
                      .verbose = o.verbose,
                      .quiet = o.quiet,
                      .color = want_color(o.color),
                      .output_dir = o.output_dir,
                      .kernel_health = o.kernel_health};
      return run_in_lab_vm(vo, *scenario, registry, *placement.kernel);
    }
    case Placement::Where::Host: break;
  }

  auto journal = open_journal(scenario->name);
  if (!journal) return kExitEnvironment;

  sys::RealSystem real;
  real.interrupt().bind_signals();
  sys::System& system = real.system();

  TerminalReporter terminal(stdout, terminal_style(o));
  MultiReporter reporters;
  reporters.add(terminal);
  const auto running_note = guest_running_note(o.guest_output);  // in the lab VM: for a kernel that dies
  if (running_note) reporters.add(*running_note);
  RunOptions ro;
  ro.kernel_health = parse_kernel_health_policy(o.kernel_health);
  ro.keep = o.keep;
  ro.force = o.force;
  ro.only = o.common.only;
  ro.skip = o.common.skip;
  ro.output_dir = o.guest_output.empty() ? o.output_dir : o.guest_output;
  ro.outputs_return = !o.guest_output.empty();
  const std::string started = now_iso8601();
  const std::uint64_t log_since = sys::kernel_log_now();
  Runner runner(registry, system, *journal, reporters, ro);
  RunReport report = runner.run(*scenario);
  report.started_at = started;
  report.host = sys::host_facts();
  report.host["rxerun"] = RXERUN_VERSION;
  if (uses_rdma(*scenario, registry)) {
    // The kernel's side of a failure: its release and what rdma_rxe,
    // ib_core and rdma_cm logged during the run. In the lab VM the host
    // side prints the guest's (the whole boot's) instead.
    const auto messages = sys::rdma_kernel_messages(log_since);
    report.host["kernel_messages"] = messages;
    const bool failed = report.exit_code == kExitFailed || report.exit_code == kExitEnvironment;
    if (failed && !o.quiet && !std::getenv("RXERUN_IN_LAB_VM")) {
      const std::string release = report.host.value("kernel", "?");
      if (messages.empty())
        print(stdout, "kernel {}: the RDMA stack logged nothing during the run\n", release);
      else
        print(stdout, "kernel {}: what the RDMA stack logged during the run:\n", release);
      for (const auto& line : messages) print(stdout, "  {}\n", line);
    }
  }
  if (o.keep && !journal->pending().empty()) print(stdout, "lab kept; remove it with: rxerun cleanup {}\n", o.scenario);

  int code = report.exit_code;
  for (const auto& t : targets) {
    if (auto w = write_report(t, report); !w) {
      print(stderr, "rxerun: {}\n", w.error().message);  // it names the report and the reason
      if (code == kExitOk || code == kExitFailed) code = kExitEnvironment;
    }
  }
  return code;
}

int cmd_validate(const std::vector<std::string>& files, const CommonOptions& common, const Registry& registry) {
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

int cmd_plan(const std::string& file, const CommonOptions& common, const Registry& registry) {
  auto scenario = load(file, registry, common);
  if (!scenario) return kExitUsage;
  sys::RecordingSystem recording;
  Journal journal = Journal::in_memory();
  PlanReporter printer(stdout, recording.log());
  RunOptions ro;
  ro.only = common.only;
  ro.skip = common.skip;
  ro.planning = true;
  Runner runner(registry, recording.system(), journal, printer, ro);
  runner.run(*scenario);
  return kExitOk;
}

int cmd_cleanup(const RunCommandOptions& o, const Registry& registry) {
  auto scenario = load(o.scenario, registry, o.common);
  if (!scenario) return kExitUsage;
  auto journal = open_journal(scenario->name);
  if (!journal) return kExitEnvironment;
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
    for (const auto& k : registry.kinds()) print(stdout, "{:<10} {}\n", k.spec.name, k.spec.summary);
    return kExitOk;
  }
  const Kind* k = registry.find(kind_name);
  if (!k) {
    print(stderr, "rxerun: unknown step kind '{}'{}\n", kind_name, did_you_mean(kind_name, registry.names()));
    return kExitUsage;
  }
  print(stdout, "{}", describe_kind(k->spec));
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

int run_cli(int argc, char** argv, const Registry& registry) {
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
  auto* run = app.add_subcommand("run", "preclean, run the steps in order, clean up");
  run->add_option("scenario", run_o.scenario, "the scenario file")->required()->type_name("SCENARIO");
  add_common(run, run_o.common);
  run->add_flag("--keep", run_o.keep, "leave the lab up; `rxerun cleanup SCENARIO` removes it later");
  run->add_flag("--force", run_o.force,
                "replace an existing interface or namespace that does not carry rxerun's mark (it is deleted)");
  run->add_option("--report", run_o.reports, "write a report: json:PATH or junit:PATH (repeatable)")
      ->type_name("FORMAT:PATH");
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
                  "the lab VM's kernel (6.1, 7.3; default: the scenario's vm.kernel, else the newest prepared)")
      ->type_name("VERSION");

  std::vector<std::string> validate_files;
  CommonOptions validate_common;
  auto* validate = app.add_subcommand("validate", "check scenario files; nothing on the host changes");
  validate->add_option("scenarios", validate_files, "scenario files")->required()->type_name("SCENARIO");
  validate->add_option("--var", validate_common.vars, "set a variable (repeatable)")->type_name("KEY=VALUE");

  std::string plan_file;
  CommonOptions plan_common;
  auto* plan = app.add_subcommand("plan", "print the ordered actions, each with its shell equivalent; changes nothing");
  plan->add_option("scenario", plan_file, "the scenario file")->required()->type_name("SCENARIO");
  add_common(plan, plan_common);

  RunCommandOptions cleanup_o;
  auto* cleanup = app.add_subcommand("cleanup", "undo whatever a run of the scenario left behind; safe any time");
  cleanup->add_option("scenario", cleanup_o.scenario, "the scenario file")->required()->type_name("SCENARIO");
  cleanup->add_option("--var", cleanup_o.common.vars, "set a variable (repeatable)")->type_name("KEY=VALUE");
  add_output(cleanup, cleanup_o);

  std::string steps_kind;
  auto* steps = app.add_subcommand("steps", "list the step kinds; with KIND: its parameters, facts and an example");
  steps->add_option("kind", steps_kind, "a step kind")->type_name("KIND");
  bool steps_markdown = false;
  steps->add_flag("--markdown", steps_markdown, "every kind's reference as Markdown (the end of docs/scenarios.md)");

  auto* schema = app.add_subcommand("schema", "print the JSON Schema of scenario files");

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
  vm_setup->add_option("--kernel", setup_kernels, "a kernel to prepare: 6.1 or 7.3 (repeatable)")->type_name("VERSION");
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

  for (const auto* vars : {&run_o.common.vars, &validate_common.vars, &plan_common.vars, &cleanup_o.common.vars}) {
    for (const auto& kv : *vars) {
      if (kv.find('=') == std::string::npos || kv.front() == '=') {
        print(stderr, "rxerun: --var {}: expected KEY=VALUE\n", kv);
        return kExitUsage;
      }
    }
  }
  if (run_o.verbose || cleanup_o.verbose) spdlog::set_level(spdlog::level::debug);

  if (*run) return cmd_run(run_o, registry);
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
  if (*cleanup) return cmd_cleanup(cleanup_o, registry);
  if (*steps) return cmd_steps(steps_kind, steps_markdown, registry);
  if (*decode) return cmd_decode(decode_o);
  if (*schema) {
    print(stdout, "{}\n", scenario_schema(registry).dump(2));
    return kExitOk;
  }
  return kExitUsage;
}

}  // namespace rxerun
