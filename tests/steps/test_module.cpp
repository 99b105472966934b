// module: loading a kernel module with parameters against the fake Rdma:
// what the run loaded is unloaded at cleanup (users first), what was loaded
// before stays, a module loaded already with other parameters is an error,
// and bad names are refused at validation.

#include <doctest/doctest.h>

#include "base/strings.h"
#include "fakes/harness.h"

using namespace rxerun;
using fakes::step_named;

using Strings = std::vector<std::string>;

namespace {

struct ModuleHarness : fakes::Harness {
  ModuleHarness() {
    fake.modules.known["null_blk"] = {"configfs"};
    fake.modules.known["configfs"] = {};
    fake.modules.known_parameters["null_blk"] = {{"nr_devices", "1"}, {"queue_mode", "2"}, {"shared_tags", "N"}};
  }
};

}  // namespace

TEST_CASE("module: loads with its parameters and dependencies, and cleanup unloads both, users first") {
  ModuleHarness h;
  auto r = h.run_keep(
      "steps:\n  - {name: m, module: {name: null_blk, params: {nr_devices: 0, shared_tags: true}}, expect: "
      "{loaded: true, parameters.nr_devices: \"0\", parameters.shared_tags: Y}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "m");
  CHECK(s.facts.at("parameters.queue_mode") == "2");
  CHECK(h.fake.kernel.commands({"modules", "rdma"}) ==
        std::vector<std::string>{"modprobe null_blk nr_devices=0 shared_tags=1"});
  CHECK(h.fake.modules.live.count("configfs") == 1);

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "unload null_blk and 1 module it needed (loaded by this run) once nothing uses it");
  CHECK(h.fake.kernel.commands({"modules", "rdma"}) ==
        std::vector<std::string>{"modprobe null_blk nr_devices=0 shared_tags=1", "modprobe -r null_blk",
                                 "modprobe -r configfs"});
  CHECK(h.fake.modules.live.empty());
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("module: loaded before the run it is left loaded, and with other parameters it is an error") {
  ModuleHarness h;
  h.fake.modules.live = {"null_blk", "configfs"};
  h.fake.modules.shown_parameters["null_blk"] = {{"nr_devices", "1"}, {"shared_tags", "N"}};
  auto same = h.run("steps:\n  - {name: m, module: {name: null_blk, params: {nr_devices: 1, shared_tags: off}}}\n");
  REQUIRE(same.exit_code == 0);
  CHECK(step_named(same, "m").facts.at("loaded") == false);
  CHECK(same.cleanup.undos.empty());
  CHECK(h.fake.modules.live.count("null_blk") == 1);

  auto other = h.run("steps:\n  - {name: m, module: {name: null_blk, params: {nr_devices: 0}}}\n");
  CHECK(other.exit_code == 3);
  CHECK(step_named(other, "m").message ==
        "module null_blk is loaded already (not by this run) with nr_devices=1; it cannot take nr_devices=0 without "
        "being unloaded first (a loaded module keeps its parameters)");
  CHECK(h.fake.kernel.commands({"modules", "rdma"}).empty());
}

TEST_CASE("module: a module in use at cleanup stays loaded and is reported, not an error") {
  ModuleHarness h;
  REQUIRE(h.run_keep("steps:\n  - {name: m, module: {name: null_blk}}\n").exit_code == 0);
  h.fake.kernel.fail("modules.unload", EBUSY, "null_blk", 1, 1000);
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.fake.modules.live.count("null_blk") == 1);

  // revert shows what the undo saw.
  ModuleHarness r;
  r.fake.kernel.fail("modules.unload", EBUSY, "null_blk", 1, 1000);
  auto run = r.run("steps:\n  - {name: m, module: {name: null_blk}}\n  - {name: back, revert: m}\n");
  REQUIRE(run.exit_code == 0);
  CHECK(step_named(run, "back").facts.at("modules_left") == nlohmann::json{"null_blk", "configfs"});
}

TEST_CASE("module: a module the kernel has not, or a parameter it refuses, is an error that leaves nothing") {
  ModuleHarness h;
  auto none = h.run("steps:\n  - {name: m, module: {name: no_such_mod}}\n");
  CHECK(none.exit_code == 3);
  CHECK(contains(step_named(none, "m").message, "this kernel has no module no_such_mod"));
  CHECK(none.cleanup.undos.empty());

  auto refused = h.run("steps:\n  - {name: m, module: {name: null_blk, params: {bogus: 1}}}\n");
  CHECK(refused.exit_code == 3);
  CHECK(step_named(refused, "m").message == "cannot load module null_blk: Invalid argument");
  CHECK(refused.cleanup.clean());
  CHECK(h.fake.modules.live.empty());
}

TEST_CASE("module: names and parameters that cannot be passed on are refused at validation") {
  ModuleHarness h;
  const std::string d = h.diagnostics("steps:\n  - module: {name: \"a b\", params: {\"x y\": 1, ok: \"1 2\"}}\n");
  CAPTURE(d);
  CHECK(contains(d, "test.yaml:2:20: 'a b' is not a kernel module name"));
  CHECK(contains(d, "'x y' is not a module parameter name"));
  CHECK(contains(d, "a module parameter's value has no spaces"));
  CHECK(h.fake.kernel.commands({"modules", "rdma"}).empty());
}

TEST_CASE("module: plan shows the modprobe it stands for") {
  ModuleHarness h;
  auto p = h.plan("steps:\n  - module: {name: null_blk, params: {nr_devices: 0}}\n");
  CHECK(contains(p, "modprobe null_blk nr_devices=0"));
}
