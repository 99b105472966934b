// offload: the step's logic against the fake Ethtool.

#include <doctest/doctest.h>

#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

// The features of a veth as the kernel reports them (a subset).
std::map<std::string, sys::Feature> veth_features() {
  return {
      {"rx-gro", {.active = true}},
      {"rx-gro-hw", {.active = false, .fixed = true}},
      {"rx-lro", {.active = false, .fixed = true}},
      {"tx-generic-segmentation", {.active = true}},
      {"tx-tcp-segmentation", {.active = true}},
      {"tx-tcp-ecn-segmentation", {.active = true}},
      {"tx-tcp-mangleid-segmentation", {.active = true}},
      {"tx-tcp6-segmentation", {.active = true}},
      {"tx-checksum-ip-generic", {.active = true}},
      {"tx-checksum-fcoe-crc", {.active = false, .fixed = true}},
      {"tx-scatter-gather", {.active = true}},
      {"tx-scatter-gather-fraglist", {.active = true}},
      {"rx-checksum", {.active = true}},
  };
}

// name -> (active, fixed), comparable.
std::map<std::string, std::pair<bool, bool>> states(const std::map<std::string, sys::Feature>& f) {
  std::map<std::string, std::pair<bool, bool>> out;
  for (const auto& [name, feature] : f) out[name] = {feature.active, feature.fixed};
  return out;
}

struct OffloadHarness : fakes::Harness {
  OffloadHarness() { fake.ethtool.devs["vB"] = veth_features(); }
  bool active(const std::string& feature) { return fake.ethtool.devs.at("vB").at(feature).active; }
};

const std::string kOff = "steps:\n  - {name: off, offload: {dev: vB, gro: off, gso: off, tso: off}}\n";

}  // namespace

TEST_CASE("offload: turns features off, reports before and after, and cleanup restores them") {
  OffloadHarness h;
  auto r = h.run_keep(kOff);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "off");
  CHECK(s.facts.at("gro.before") == "on");
  CHECK(s.facts.at("gro.after") == "off");
  CHECK(s.facts.at("gso.before") == "on");
  CHECK(s.facts.at("gso.after") == "off");
  CHECK(s.facts.at("tso.before") == "on");
  CHECK(s.facts.at("tso.after") == "off");
  CHECK(s.facts.at("changed") == true);
  for (const char* f : {"rx-gro", "tx-generic-segmentation", "tx-tcp-segmentation", "tx-tcp-ecn-segmentation",
                        "tx-tcp-mangleid-segmentation", "tx-tcp6-segmentation"})
    CHECK_MESSAGE(!h.active(f), f);
  CHECK(h.active("tx-scatter-gather"));  // not asked for
  REQUIRE(h.fake.kernel.commands("ethtool").size() == 1);
  CHECK(h.fake.kernel.commands("ethtool")[0] ==
        "ethtool -K vB rx-gro off tx-generic-segmentation off tx-tcp-ecn-segmentation off "
        "tx-tcp-mangleid-segmentation off tx-tcp-segmentation off tx-tcp6-segmentation off");

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "restore gro, gso, tso on vB to the values found");
  CHECK(states(h.fake.ethtool.devs.at("vB")) == states(veth_features()));
  // A second cleanup finds nothing to do.
  auto again = h.cleanup();
  CHECK(again.undos.empty());
  CHECK(h.fake.kernel.commands("ethtool").size() == 2);
}

TEST_CASE("offload: a second apply reports nothing changed and records no undo") {
  OffloadHarness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: first, offload: {dev: vB, gro: off, gso: off}}\n"
      "  - {name: second, offload: {dev: vB, gro: off, gso: off}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "first").facts.at("changed") == true);
  CHECK(step_named(r, "second").facts.at("changed") == false);
  CHECK(step_named(r, "second").facts.at("gro.before") == "off");
  CHECK(step_named(r, "second").facts.at("gro.after") == "off");
  CHECK(r.cleanup.undos.size() == 1);
  CHECK(h.fake.kernel.commands("ethtool") == Strings{"ethtool -K vB rx-gro off tx-generic-segmentation off",
                                                     "ethtool -K vB rx-gro on tx-generic-segmentation on"});
}

TEST_CASE("offload: only what differs changes, and undo restores the values found, not defaults") {
  OffloadHarness h;
  h.fake.ethtool.devs["vB"]["rx-gro"].active = false;  // found off
  auto r = h.run_keep("steps:\n  - {name: s, offload: {dev: vB, gro: on, gso: off}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "s").facts.at("gro.before") == "off");
  CHECK(step_named(r, "s").facts.at("gro.after") == "on");
  CHECK(h.fake.kernel.commands("ethtool") == Strings{"ethtool -K vB rx-gro on tx-generic-segmentation off"});
  CHECK(h.cleanup().clean());
  CHECK(!h.active("rx-gro"));
  CHECK(h.active("tx-generic-segmentation"));

  // A feature already as asked is left out of the request and of the undo.
  OffloadHarness h2;
  h2.fake.ethtool.devs["vB"]["rx-gro"].active = false;
  auto r2 = h2.run_keep("steps:\n  - {name: s, offload: {dev: vB, gro: off, gso: off}}\n");
  REQUIRE(r2.exit_code == 0);
  CHECK(h2.fake.kernel.commands("ethtool") == Strings{"ethtool -K vB tx-generic-segmentation off"});
  h2.fake.ethtool.devs["vB"]["rx-gro"].active = true;  // someone else turns it on meanwhile
  CHECK(h2.cleanup().clean());
  CHECK(h2.fake.kernel.commands("ethtool").back() == "ethtool -K vB tx-generic-segmentation on");
  CHECK(h2.active("rx-gro"));  // not ours to restore
}

TEST_CASE("offload: the kernel's names and ethtool's long names are accepted") {
  OffloadHarness h;
  auto r = h.run_keep(
      "steps:\n  - {name: s, offload: {dev: vB, rx-gro: off, generic-segmentation-offload: off, sg: off}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "s").facts.at("rx-gro.after") == "off");
  CHECK(step_named(r, "s").facts.at("generic-segmentation-offload.after") == "off");
  CHECK(step_named(r, "s").facts.at("sg.after") == "off");
  CHECK(!h.active("rx-gro"));
  CHECK(!h.active("tx-generic-segmentation"));
  CHECK(!h.active("tx-scatter-gather"));
  CHECK(!h.active("tx-scatter-gather-fraglist"));
}

TEST_CASE("offload: an unknown name is an error that suggests the near one") {
  OffloadHarness h;
  auto r = h.run("steps:\n  - {name: s, offload: {dev: vB, gsoo: off}}\n");
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "s");
  CHECK(s.status == StepStatus::Error);
  CHECK(s.message.find("test.yaml:2:") == 0);
  CHECK(s.message.find("vB has no offload feature 'gsoo' (did you mean 'gso'?)") != std::string::npos);
  CHECK(h.fake.kernel.commands("ethtool").empty());
}

TEST_CASE("offload: a fixed feature that would need changing is an error naming it") {
  OffloadHarness h;
  auto r = h.run("steps:\n  - {name: s, offload: {dev: vB, gro: off, lro: on}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "s").message.find("rx-lro is fixed by the driver (off), so 'lro: on' cannot be done") !=
        std::string::npos);
  CHECK(h.fake.kernel.commands("ethtool").empty());  // nothing half done
  CHECK(h.active("rx-gro"));

  // Already as asked: no error.
  OffloadHarness h2;
  auto r2 = h2.run("steps:\n  - {name: s, offload: {dev: vB, lro: off}}\n");
  CHECK(r2.exit_code == 0);
  CHECK(step_named(r2, "s").facts.at("changed") == false);
}

TEST_CASE("offload: a group changes its changeable features and ignores its fixed ones") {
  OffloadHarness h;
  h.fake.ethtool.devs["vB"]["tx-tcp-mangleid-segmentation"] = {.active = true, .fixed = true};
  auto r = h.run("steps:\n  - {name: s, offload: {dev: vB, tso: off, tx: on}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "s").facts.at("tso.after") == "off");
  CHECK(step_named(r, "s").facts.at("tx.before") == "on");
  CHECK(step_named(r, "s").facts.at("tx.after") == "on");  // fcoe-crc stays off: fixed
  CHECK(h.fake.kernel.commands("ethtool")[0] ==
        "ethtool -K vB tx-tcp-ecn-segmentation off tx-tcp-segmentation off tx-tcp6-segmentation off");
}

TEST_CASE("offload: the after facts show what the kernel changed, also features that followed") {
  OffloadHarness h;
  // As the kernel does: no checksum offload, no scatter-gather.
  h.fake.ethtool.devs["vB"]["tx-checksum-ip-generic"] = {.active = true};
  h.fake.ethtool.drags[{"tx-checksum-ip-generic", false}] = {"tx-scatter-gather", false};
  auto r = h.run_keep("steps:\n  - {name: s, offload: {dev: vB, tx: off, sg: on}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "s");
  CHECK(s.facts.at("tx.after") == "off");
  CHECK(s.facts.at("sg.before") == "on");
  CHECK(s.facts.at("sg.after") == "on");  // tx-scatter-gather-fraglist is still on
  CHECK(!h.active("tx-scatter-gather"));
  // sg was as asked already: only tx was requested.
  CHECK(h.fake.kernel.commands("ethtool") == Strings{"ethtool -K vB tx-checksum-ip-generic off"});

  OffloadHarness h2;
  h2.fake.ethtool.devs["vB"]["tx-checksum-ip-generic"] = {.active = true};
  h2.fake.ethtool.devs["vB"].erase("tx-scatter-gather-fraglist");
  h2.fake.ethtool.drags[{"tx-checksum-ip-generic", false}] = {"tx-scatter-gather", false};
  auto r2 = h2.run_keep("steps:\n  - {name: s, offload: {dev: vB, tx: off, sg: on}}\n");
  REQUIRE(r2.exit_code == 0);
  CHECK(step_named(r2, "s").facts.at("sg.after") == "off");  // what the kernel did, not what was asked
}

TEST_CASE("offload: ufo has no kernel feature left: off holds, on is an error") {
  OffloadHarness h;
  auto r = h.run("steps:\n  - {name: s, offload: {dev: vB, ufo: off}}\n");
  CHECK(r.exit_code == 0);
  CHECK(step_named(r, "s").facts.at("ufo.after") == "off");
  CHECK(step_named(r, "s").facts.at("changed") == false);
  auto r2 = h.run("steps:\n  - {name: s, offload: {dev: vB, ufo: on}}\n");
  CHECK(r2.exit_code == 3);
  CHECK(step_named(r2, "s").message.find("no feature behind 'ufo'") != std::string::npos);
}

TEST_CASE("offload: two names that disagree on one feature are an error") {
  OffloadHarness h;
  auto r = h.run("steps:\n  - {name: s, offload: {dev: vB, tso: off, tx-tcp-segmentation: on}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "s").message.find("ask for different values of tx-tcp-segmentation") != std::string::npos);
  CHECK(h.fake.kernel.commands("ethtool").empty());
}

TEST_CASE("offload: a step with no feature is an error") {
  OffloadHarness h;
  auto r = h.run("steps:\n  - {name: s, offload: {dev: vB}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "s").message.find("names no feature") != std::string::npos);
}

TEST_CASE("offload: a missing interface and a refused change are errors") {
  OffloadHarness h;
  auto r = h.run("steps:\n  - {name: s, offload: {dev: vX, gro: off}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "s").message.find("vX") != std::string::npos);

  OffloadHarness h2;
  h2.fake.kernel.fail("ethtool.set_features", EPERM, "", 1, 0, "setting features of vB failed");
  auto r2 = h2.run(kOff);
  CHECK(r2.exit_code == 3);
  CHECK(step_named(r2, "off").status == StepStatus::Error);
}

TEST_CASE("offload: values are checked at load time") {
  OffloadHarness h;
  CHECK(h.diagnostics("steps:\n  - offload: {dev: vB, gro: maybe}\n").find("'gro' must be on or off") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - offload: {gro: off}\n").find("missing required parameter 'dev'") !=
        std::string::npos);
}

TEST_CASE("offload: undo of an interface that is gone succeeds") {
  OffloadHarness h;
  REQUIRE(h.run_keep(kOff).exit_code == 0);
  h.fake.ethtool.devs.erase("vB");
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.journal.pending().empty());
}

TEST_CASE("offload: revert restores now and reports the features as they stood") {
  OffloadHarness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: off, offload: {dev: vB, gro: off}}\n"
      "  - {name: back, revert: off, expect: {gro.after: \"off\"}}\n");
  CHECK(r.exit_code == 0);
  CHECK(step_named(r, "back").facts.at("gro.after") == "off");
  CHECK(h.active("rx-gro"));
  CHECK(r.cleanup.undos.empty());
}

TEST_CASE("offload: plan requests everything asked, as ethtool -K") {
  auto planned = fakes::Harness().plan_run(kOff);
  CHECK(step_named(planned.report, "off").status == StepStatus::Passed);
  const auto& actions = planned.actions;
  REQUIRE(!actions.empty());
  CHECK(actions[0].shell == "ethtool -K vB gro off gso off tso off");
}
