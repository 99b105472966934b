#pragma once
// The command line: a table of subcommands (app/cli.cpp), each with its
// name, its line of help, how its options are added and what runs it,
// read with CLI11 and dispatched by lookup. The registry comes from
// app/main.cpp.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "app/agent.h"
#include "app/cli_decode.h"
#include "app/cli_vm.h"
#include "app/graph.h"
#include "app/report_page.h"
#include "app/run_options.h"
#include "engine/exit_code.h"
#include "engine/registry.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace rxerun {

// Everything the command line can say, each command's options in members
// of their own, which CLI11 fills.
struct CommandLine {
  RunCommandOptions run;
  std::vector<std::string> validate_files;  // files and directories, as given
  CommonOptions validate;
  bool validate_json = false;
  std::vector<std::string> plan_files;  // files and directories, as given
  CommonOptions plan;
  WhereOptions validate_where, plan_where;
  GraphOptions graph;
  std::string cleanup_file;
  RunCommandOptions cleanup;
  std::string steps_kind;
  bool steps_markdown = false;
  AgentOptions agent;
  std::optional<std::string> counters_netns;
  DecodeOptions decode;
  ReportPageOptions report_page;
  std::vector<std::string> setup_kernels;
  bool setup_remove_snapshots = false;
  bool status_json = false;
  VmExecOptions exec;
  std::string exec_timeout = "10m";
  // `rxerun help [COMMAND...]`, or the manual page, or the completion script.
  std::vector<std::string> help_topic;
  bool help_man = false;
  bool help_bash_completion = false;
  // --plugin of any command, absolute paths once read; also in each
  // command's CommonOptions.
  std::vector<std::string> plugins;
};

// One exit code a command can end with, and what it means there.
struct ExitCode {
  int code;
  const char* meaning;
};

// Whether a command takes --plugin: it loads the plugins' kinds before it
// runs.
enum class Plugins { none, loaded };

// One subcommand of rxerun's.
struct Command {
  const char* name;
  const char* help;                                           // its line in --help; "": hidden, not for people
  void (*add_options)(CLI::App& command, CommandLine& line);  // null: it has none
  int (*run)(CommandLine& line, Registry& registry);          // null: one of its subcommands runs
  Plugins plugins = Plugins::none;
  std::span<const Command> subcommands = {};  // `vm setup`, `vm status`, `vm exec`
  std::span<const ExitCode> exit_codes = {};  // what it ends with; empty: one of its subcommands runs
  const char* details = "";                   // more than its line: the manual page's paragraph on it
};

// rxerun's commands, in the order --help lists them.
std::span<const Command> commands();

// The command line as CLI11 reads it, every command of commands() with its
// options, filled into `line`: what parsing, --help, the manual page and
// the completion script are all made from.
void build_command_line(CLI::App& app, CommandLine& line);

// The arguments after the program's name read into `line`: `rxerun
// FILE.yaml` as `rxerun run FILE.yaml` (first_word_is_command()), CLI11's checks, every --var's
// KEY=VALUE form, the plugins' paths made absolute (nothing loaded). The
// command to run, or rxerun's exit code when there is none (--help and
// --version: 0; a usage error, printed: 2).
std::variant<const Command*, int> parse_command_line(std::vector<std::string> args, CommandLine& line);

// The name of an option's value as --help shows it, without the set of
// values CLI11 adds to it ("WHEN", not "WHEN:{auto,always,never}"); "" for
// a flag, which takes none.
std::string value_name(const CLI::Option& option);

// Whether the first argument, `word`, names a command rather than a
// scenario to run: a command's name, or a word that is no file, has no '/'
// and does not end in .yaml or .yml (then a mistyped command). `rxerun
// lab.yaml` and `rxerun ./lab` run; `rxerun valdate x.yaml` is refused with
// the near command's name.
bool first_word_is_command(const std::string& word);

int run_cli(int argc, char** argv, Registry& registry);

}  // namespace rxerun
