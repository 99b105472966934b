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
#include "app/run_options.h"
#include "engine/exit_code.h"
#include "engine/registry.h"

namespace CLI {
class App;
}

namespace rxerun {

// Everything the command line can say, each command's options in members
// of their own, which CLI11 fills.
struct CommandLine {
  RunCommandOptions run;
  std::vector<std::string> validate_files;
  CommonOptions validate;
  std::string plan_file;
  CommonOptions plan;
  GraphOptions graph;
  std::string cleanup_file;
  RunCommandOptions cleanup;
  std::string steps_kind;
  bool steps_markdown = false;
  AgentOptions agent;
  std::optional<std::string> counters_netns;
  DecodeOptions decode;
  std::vector<std::string> setup_kernels;
  VmExecOptions exec;
  std::string exec_timeout = "10m";
  // --plugin of any command, absolute paths once read; also in each
  // command's CommonOptions.
  std::vector<std::string> plugins;
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
};

// The arguments after the program's name read into `line`: `rxerun
// FILE.yaml` as `rxerun run FILE.yaml`, CLI11's checks, every --var's
// KEY=VALUE form, the plugins' paths made absolute (nothing loaded). The
// command to run, or rxerun's exit code when there is none (--help and
// --version: 0; a usage error, printed: 2).
std::variant<const Command*, int> parse_command_line(std::vector<std::string> args, CommandLine& line);

int run_cli(int argc, char** argv, Registry& registry);

}  // namespace rxerun
