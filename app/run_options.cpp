#include "app/run_options.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>

namespace rxerun {

void add_common_options(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("--var", o.vars, "set a variable (repeatable; wins over the scenario's vars)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_var_file_option(cmd, o.var_files);
  cmd.add_flag("--handed-on", o.handed_on)->group("");  // set by the rxerun that starts this one
  cmd.add_option("--only", o.only, "run tagged steps only when they carry TAG (untagged steps always run)")
      ->type_name("TAG")
      ->allow_extra_args(false);
  cmd.add_option("--skip", o.skip, "leave out steps that carry TAG")->type_name("TAG")->allow_extra_args(false);
}

void add_var_file_option(CLI::App& cmd, std::vector<std::string>& files) {
  cmd.add_option("--var-file", files,
                 "set the variables of a YAML file of NAME: VALUE lines (repeatable; --var wins over it)")
      ->type_name("FILE")
      ->allow_extra_args(false);
}

void add_output_options(CLI::App& cmd, RunCommandOptions& o) {
  auto* v = cmd.add_flag("-v,--verbose", o.verbose, "show every fact, every undo and debug logs");
  cmd.add_flag("-q,--quiet", o.quiet, "show only failures and the summary")->excludes(v);
  cmd.add_option("--color", o.color, "colour: auto (on a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN");
}

void add_run_options(CLI::App& run, RunCommandOptions& o) {
  run.add_option("scenarios", o.scenarios, "scenario files, and directories of them (their *.yaml, sorted)")
      ->required()
      ->type_name("SCENARIO|DIR");
  add_common_options(run, o.common);
  run.add_flag("--keep", o.keep, "leave the lab up; `rxerun cleanup SCENARIO` removes it later");
  run.add_flag("--force", o.force,
               "replace an existing interface or namespace that does not carry rxerun's mark (it is deleted)");
  run.add_option("--report", o.reports, "write a report: json:PATH, junit:PATH or html:PATH (repeatable)")
      ->type_name("FORMAT:PATH")
      ->allow_extra_args(false);
  add_output_options(run, o);
  run.add_option("--output-dir", o.output_dir,
                 "where files the steps write (captures) go when their paths are relative (default: here)")
      ->type_name("DIR");
  run.add_option("--guest-output", o.guest_output)->group("");  // the lab VM's share; the host sets it
  run.add_option("--kernel-health", o.kernel_health,
                 "what the kernel's own reports during the run (WARNING, BUG, Oops, KASAN, panic, ...) do: fail "
                 "the run (fail, the default), show them only (warn), or go unread (off); wins over the "
                 "scenario's kernel_health")
      ->check(CLI::IsMember({"fail", "warn", "off"}))
      ->type_name("POLICY");
  auto* vm_flag = run.add_flag("--vm", o.vm, "run in the lab VM (`rxerun vm setup` prepares it)");
  run.add_flag("--host", o.host, "run on this machine's kernel, never in the lab VM")->excludes(vm_flag);
  run.add_option("--kernel", o.kernel,
                 "the lab VM's kernel: a prepared one (6.1, 7.3, 6.12), or a kernel of your own: a build "
                 "directory or an image (default: the scenario's vm.kernel, else the newest prepared); "
                 "a list (6.1,7.3) or all runs each scenario once per kernel")
      ->type_name("VERSION[,VERSION...]|all|PATH");
  run.add_option("--modules", o.modules, "with --kernel IMAGE: its modules directory (as /lib/modules/RELEASE)")
      ->type_name("DIR");
  run.add_flag("--cold-boot", o.cold_boot,
               "boot the lab VM's kernel instead of starting the VM from its snapshot (made by the first boot)");
  run.add_option("-j,--jobs", o.jobs, "up to N lab VMs at once (as the cores and the memory allow)")->type_name("N");
  run.add_flag("--fail-fast", o.fail_fast, "stop the suite at the first scenario that does not pass");
  run.add_option("--shard", o.shard, "run only the K-th of N deterministic parts of the suite (CI job matrix)")
      ->type_name("K/N");
  run.add_option("--lab-kernel", o.lab_kernel)->group("");          // the guest's kernel label; the host sets it
  run.add_option("--suite-position", o.suite_position)->group("");  // the guest's first run number; the host sets it
  run.add_flag("--progress", o.progress)->group("");                // the guest's status line; the host sets it
}

void add_plugin_option(CLI::App& cmd, std::vector<std::string>& paths) {
  cmd.add_option("--plugin", paths, "load step kinds from a plugin (a shared object; repeatable)")
      ->type_name("PATH")
      ->allow_extra_args(false);
}

namespace {

// The arguments of run_arguments(), one option at a time.
class RunArguments {
 public:
  void flag(const char* name, bool set) {
    if (set) args_.push_back(name);
  }
  // An option whose empty value is its default.
  void value(const char* name, const std::string& value) {
    if (!value.empty()) one(name, value);
  }
  void values(const char* name, const std::vector<std::string>& values) {
    for (const auto& v : values) one(name, v);
  }
  void positionals(const std::vector<std::string>& values) {
    args_.push_back("--");
    args_.insert(args_.end(), values.begin(), values.end());
  }
  std::vector<std::string> take() { return std::move(args_); }

 private:
  // CLI11 reads `--name=` as `--name` followed by a value still to come:
  // an empty value is an argument of its own.
  void one(const char* name, const std::string& value) {
    if (value.empty())
      args_.insert(args_.end(), {name, ""});
    else
      args_.push_back(std::string(name) + "=" + value);
  }
  std::vector<std::string> args_;
};

}  // namespace

std::vector<std::string> run_arguments(const RunCommandOptions& o, WithScenarios with_scenarios) {
  const RunCommandOptions defaults;
  RunArguments a;
  a.values("--plugin", o.common.plugins);
  a.values("--var-file", o.common.var_files);
  a.values("--var", o.common.vars);
  a.flag("--handed-on", o.common.handed_on);
  a.values("--only", o.common.only);
  a.values("--skip", o.common.skip);
  a.flag("--keep", o.keep);
  a.flag("--force", o.force);
  a.values("--report", o.reports);
  a.flag("--verbose", o.verbose);
  a.flag("--quiet", o.quiet);
  if (o.color != defaults.color) a.value("--color", o.color);
  a.value("--output-dir", o.output_dir);
  a.value("--guest-output", o.guest_output);
  a.value("--kernel-health", o.kernel_health);
  a.flag("--vm", o.vm);
  a.flag("--host", o.host);
  a.value("--kernel", o.kernel);
  a.value("--modules", o.modules);
  if (o.jobs != defaults.jobs) a.value("--jobs", std::to_string(o.jobs));
  a.flag("--fail-fast", o.fail_fast);
  a.flag("--cold-boot", o.cold_boot);
  a.value("--shard", o.shard);
  a.value("--lab-kernel", o.lab_kernel);
  a.value("--suite-position", o.suite_position);
  a.flag("--progress", o.progress);
  if (with_scenarios == WithScenarios::yes) a.positionals(o.scenarios);
  return a.take();
}

namespace {

// The common options as another rxerun, elsewhere, reads them: the
// variables files by their absolute paths (its working directory may
// differ), and the warnings left to this one.
CommonOptions handed_on(const CommonOptions& common) {
  CommonOptions c = common;
  for (auto& file : c.var_files) file = std::filesystem::absolute(file).lexically_normal().string();
  c.handed_on = true;
  return c;
}

// What a suite's child and the lab VM's guest keep of a run's options: the
// variables, tags and plugins, --force and the kernel health policy, and
// the output as the parent shows it.
RunCommandOptions shown_like(const RunCommandOptions& o, bool color, bool progress) {
  RunCommandOptions c;
  c.common = handed_on(o.common);
  c.force = o.force;
  c.verbose = o.verbose;
  c.quiet = o.quiet;
  c.color = color ? "always" : "never";
  c.progress = progress;
  c.kernel_health = o.kernel_health;
  return c;
}

}  // namespace

RunCommandOptions child_run_options(const RunCommandOptions& o, const std::string& scenario, const std::string& report,
                                    bool color, bool progress) {
  RunCommandOptions child = shown_like(o, color, progress);
  child.scenarios = {scenario};
  child.host = true;
  child.lab_kernel = o.lab_kernel;  // in the lab VM's guest: the kernel its runs name
  child.output_dir = o.output_dir;
  child.guest_output = o.guest_output;
  child.reports = {"json:" + report};
  return child;
}

RunCommandOptions lab_vm_run_options(const RunCommandOptions& o, const std::vector<std::string>& scenarios, bool color,
                                     bool progress, const std::string& suite_position) {
  RunCommandOptions guest = shown_like(o, color, progress);
  guest.scenarios = scenarios;
  guest.fail_fast = o.fail_fast;
  guest.suite_position = suite_position;
  return guest;
}

RunCommandOptions agent_run_options(const RunCommandOptions& o, const std::string& output_dir) {
  RunCommandOptions agent;
  agent.common = handed_on(o.common);
  agent.force = o.force;
  agent.kernel_health = o.kernel_health;
  agent.output_dir = output_dir;
  return agent;
}

}  // namespace rxerun
