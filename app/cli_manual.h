#pragma once
// The manual page, rxerun(1), made from the declarations: the commands'
// table and their CLI11 options (app/cli.h), each command's exit codes, and
// every step kind of the registry; then the hand-written sections
// (docs/rxerun.1.prose). `rxerun help --man` prints it; scripts/generate
// writes it to docs/rxerun.1.

#include <span>
#include <string>

#include "app/cli.h"
#include "engine/registry.h"

namespace rxerun {

// The page in roff (the man macros), for the command line `app` was built
// from `commands` (build_command_line()).
std::string manual_page(CLI::App& app, std::span<const Command> commands, const Registry& registry);

}  // namespace rxerun
