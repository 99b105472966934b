// A plugin that declares a kind named like a built-in one: refused whole.

#include <rxerun/plugin.h>

RXERUN_PLUGIN(registrar) {
  rxerun::sdk::Kind fine;
  fine.spec.name = "test_fine";
  fine.run = [](const rxerun::sdk::Params&, rxerun::sdk::StepContext&) { return rxerun::StepResult::ok(); };
  registrar.add(fine);
  rxerun::sdk::Kind veth = fine;
  veth.spec.name = "veth";
  registrar.add(veth);
}
