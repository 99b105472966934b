#pragma once
// What `rxerun run` is asked: its options, how the command line reads them
// (CLI11), and the arguments that read back as the same options. A run
// hands its options on to the rxerun it starts elsewhere (a suite's run in
// a child process, the lab VM's guest, a node's agent): each such rxerun is
// given the arguments run_arguments() makes of the options it is to have,
// so that a flag is spelled in this file only, beside the parser that
// reads it.

#include <cstddef>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace rxerun {

struct CommonOptions {
  std::vector<std::string> plugins;    // --plugin, absolute paths (loaded already)
  std::vector<std::string> vars;       // KEY=VALUE
  std::vector<std::string> var_files;  // --var-file: YAML mappings of names to values, under --var
  std::vector<std::string> only;
  std::vector<std::string> skip;
  // Started by another rxerun (a suite's child, the lab VM's guest, a
  // node's agent), which has shown the warnings about unused variables.
  bool handed_on = false;
  bool operator==(const CommonOptions&) const = default;
};

struct RunCommandOptions {
  std::vector<std::string> scenarios;  // files and directories, as given
  CommonOptions common;
  bool keep = false;
  bool force = false;
  std::vector<std::string> reports;
  bool verbose = false;
  bool quiet = false;
  std::string color = "auto";
  bool vm = false;
  bool host = false;
  std::string kernel;   // --kernel: a label, a list, all, or the path of a kernel of one's own
  std::string modules;  // --modules: with --kernel IMAGE, its modules directory
  std::size_t jobs = 1;
  bool fail_fast = false;
  std::string shard;          // --shard K/N
  std::string kernel_health;  // --kernel-health fail|warn|off; empty: the scenario's kernel_health
  std::string output_dir;     // --output-dir
  std::string guest_output;   // --guest-output: the lab VM's share (set by the host, not by people)
  // Set by the host for the guest, not by people: the lab kernel's label and
  // where this part of the suite starts in the whole ("3/8").
  std::string lab_kernel;
  std::string suite_position;
  bool progress = false;   // the live status line although stdout is no terminal (the lab VM's serial port)
  bool cold_boot = false;  // --cold-boot: lab VMs boot their kernel instead of starting from its snapshot
  bool operator==(const RunCommandOptions&) const = default;
};

// --var, --var-file, --only and --skip, as `run`, `plan` and `__agent` read them.
void add_common_options(CLI::App& command, CommonOptions& options);
// --var-file FILE, repeatable: what every command that takes --var takes too.
void add_var_file_option(CLI::App& command, std::vector<std::string>& files);
// -v, -q and --color, as `run` and `cleanup` read them.
void add_output_options(CLI::App& command, RunCommandOptions& options);
// `run`'s scenarios and options, all but --plugin (add_plugin_option: the
// command line reads it for every command that loads plugins, into one list).
void add_run_options(CLI::App& command, RunCommandOptions& options);
// --plugin PATH, repeatable.
void add_plugin_option(CLI::App& command, std::vector<std::string>& paths);

// Whether run_arguments() ends with the scenarios; a node's agent names its
// one scenario before its options, as its own argument.
enum class WithScenarios { yes, no };

// The arguments after `run` that the command line reads back as `options`
// (the inverse of add_run_options, with --plugin for each of
// options.common.plugins): every option that is not at its default, a
// value as `--name=VALUE` (so that a value starting with '-' stays a
// value; an empty one as `--name ""`), then `--` and the scenarios.
std::vector<std::string> run_arguments(const RunCommandOptions& options, WithScenarios = WithScenarios::yes);

// What a run hands on. Each takes what the rxerun it starts is to do the
// same way (the plugins, variables, tags, --force, the look of the output,
// --kernel-health) and leaves out what belongs to this run alone: the
// other scenarios, the kernels, -j, --shard, the reports.
//
// A suite's run on this kernel, in a child rxerun (app/run_host.h): one
// scenario on the host, the colour and the status line as decided here,
// its report into `report` (a json:PATH target).
RunCommandOptions child_run_options(const RunCommandOptions& options, const std::string& scenario,
                                    const std::string& report, bool color, bool progress);
// The scenarios of one lab VM's boot, as the guest runs them (app/cli_vm.h
// adds what only the boot knows: the kernel, the share's paths); the colour
// and the status line as decided here, `suite_position` ("3/8") where its
// runs' numbers start, empty outside a suite.
RunCommandOptions lab_vm_run_options(const RunCommandOptions& options, const std::vector<std::string>& scenarios,
                                     bool color, bool progress, const std::string& suite_position);
// A node's agent (app/agent.h), whose steps' files go to `output_dir`.
RunCommandOptions agent_run_options(const RunCommandOptions& options, const std::string& output_dir);

}  // namespace rxerun
