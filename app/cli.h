#pragma once
// The command line: parses arguments with CLI11 and dispatches to the
// engine. The registry comes from app/main.cpp.

#include "engine/exit_code.h"
#include "engine/registry.h"

namespace rxerun {

int run_cli(int argc, char** argv, Registry& registry);

}  // namespace rxerun
