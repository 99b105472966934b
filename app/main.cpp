// The composition root: the only place that knows both the engine and the
// list of step kinds.

#include <cstdio>
#include <exception>

#include "app/cli.h"
#include "base/output.h"
#include "engine/registry.h"
#include "steps/kinds.h"

int main(int argc, char** argv) {
  rxerun::protect_standard_streams();
  try {
    rxerun::Registry registry(rxerun::steps::all_kinds());
    return rxerun::run_cli(argc, argv, registry);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rxerun: internal error: %s\n", e.what());
    return rxerun::kExitEnvironment;
  }
}
