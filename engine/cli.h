#pragma once
// The command line (product.md, "Command line"): parses arguments with
// CLI11 and dispatches to the engine. The registry comes from app/main.cpp.

#include "engine/registry.h"

namespace rxerun {

// Exit codes, as product.md promises them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitEnvironment = 3;
inline constexpr int kExitResidue = 4;
inline constexpr int kExitInterrupted = 130;

int run_cli(int argc, char** argv, const Registry& registry);

}  // namespace rxerun
