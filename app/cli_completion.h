#pragma once
// The bash completion script, completions/rxerun.bash, made from the
// command line's declarations: each command's subcommands and options as
// CLI11 has them (app/cli.h), what each option's value is (from its value's
// name and its set of values), and the lab kernels rxerun knows.
// `rxerun help --bash-completion` prints it; scripts/generate writes it.

#include <span>
#include <string>

#include "app/cli.h"

namespace rxerun {

// The script for the command line `app` was built from `commands`
// (build_command_line()).
std::string bash_completion(CLI::App& app, std::span<const Command> commands);

}  // namespace rxerun
