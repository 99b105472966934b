// A plugin that says it was built for the SDK version after this one: rxerun
// must refuse it without calling its registration (which would fail the test).

#include <cstdlib>

#include <rxerun/plugin.h>

namespace {
void register_kinds(rxerun::sdk::Registrar&) {
  std::abort();
}
}  // namespace

extern "C" __attribute__((visibility("default")))
const rxerun::sdk::PluginEntry rxerun_plugin{RXERUN_SDK_VERSION + 1, &register_kinds};
