// sysctl: the step's logic against the model's Sysctl.

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "engine/loader.h"
#include "engine/registry.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

// The sysctl writes, as `sysctl -w` takes them: KEY=VALUE.
Strings writes(fakes::FakeSystem& f) {
  Strings out;
  for (const auto& c : f.kernel.commands("sysctl")) out.push_back(c.substr(c.rfind("sysctl -w ") + 10));
  return out;
}

const std::string kKey = "net.ipv4.conf.vB.rp_filter";

struct SysctlHarness : fakes::Harness {
  SysctlHarness() {
    fake.sysctl.values[kKey] = "2";
    fake.sysctl.values["net.ipv4.tcp_rmem"] = "4096\t131072\t6291456";
    fake.sysctl.values["kernel.hostname"] = "host";
  }
};

}  // namespace

TEST_CASE("sysctl: writes the value, reports before and after, and cleanup restores the value found") {
  SysctlHarness h;
  auto r = h.run_keep("steps:\n  - {name: s, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "s");
  CHECK(s.facts.at("before") == "2");
  CHECK(s.facts.at("after") == "0");
  CHECK(s.facts.at("changed") == true);
  CHECK(h.fake.sysctl.values.at(kKey) == "0");

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "set net.ipv4.conf.vB.rp_filter back to 2");
  CHECK(h.fake.sysctl.values.at(kKey) == "2");  // the value found, not a default
  CHECK(h.cleanup().undos.empty());
  CHECK(writes(h.fake) == Strings{kKey + "=0", kKey + "=2"});
}

TEST_CASE("sysctl: the same value is not written and records no undo") {
  SysctlHarness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: a, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 1}}\n"
      "  - {name: b, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: '1'}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("changed") == false);
  CHECK(step_named(r, "b").facts.at("before") == "1");
  CHECK(step_named(r, "b").facts.at("after") == "1");
  CHECK(r.cleanup.undos.size() == 1);
  CHECK(writes(h.fake) == Strings{kKey + "=1", kKey + "=2"});

  SysctlHarness h2;
  auto r2 = h2.run("steps:\n  - {name: a, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 2}}\n");
  CHECK(step_named(r2, "a").facts.at("changed") == false);
  CHECK(r2.cleanup.undos.empty());
  CHECK(writes(h2.fake).empty());
}

TEST_CASE("sysctl: values compare after trimming, whatever separates their fields") {
  SysctlHarness h;
  auto r = h.run("steps:\n  - {name: s, sysctl: {key: net.ipv4.tcp_rmem, value: ' 4096 131072  6291456 '}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "s").facts.at("changed") == false);
  CHECK(writes(h.fake).empty());
}

TEST_CASE("sysctl: booleans are written as 1 and 0, and expectations compare numbers") {
  SysctlHarness h;
  auto r = h.run("steps:\n  - {name: s, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: true}, expect: {after: 1}}\n");
  CHECK(r.exit_code == 0);
  CHECK(writes(h.fake).front() == kKey + "=1");
}

TEST_CASE("sysctl: keys outside net. are refused and nothing is written") {
  // As written: the loader refuses the scenario at the key.
  const Registry registry(steps::all_kinds());
  for (const char* key : {"kernel.hostname", "net/../kernel/hostname", "net..ipv4", "network.x", "/net/ipv4", "net"}) {
    CAPTURE(key);
    auto loaded = load_scenario_text(std::string("steps:\n  - {name: s, sysctl: {key: '") + key + "', value: 1}}\n",
                                     "test.yaml", registry, {});
    REQUIRE_FALSE(loaded.scenario);
    CHECK(loaded.diagnostics.front().mark.line == 2);
  }
  // From an earlier step's fact: refused when the step runs, nothing written.
  SysctlHarness h;
  h.fake.tools.on_start = [](const sys::ToolSpec&) {
    return sys::ProgramRun{.out = "kernel.hostname", .exit = sys::ExitStatus{}};
  };
  auto r = h.run(
      "steps:\n  - {name: k, exec: {argv: [echo]}}\n"
      "  - {name: s, sysctl: {key: '{{steps.k.stdout}}', value: evil}}\n");
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "s");
  CHECK(s.status == StepStatus::Error);
  CHECK(s.message.find("test.yaml:3:") == 0);
  CHECK(s.message.find("only keys under net. can be set") != std::string::npos);
  CHECK(h.fake.sysctl.values.at("kernel.hostname") == "host");
  CHECK(writes(h.fake).empty());
}

TEST_CASE("sysctl: a key with slashes is taken as a path below /proc/sys") {
  SysctlHarness h;
  h.fake.sysctl.values["net/ipv4/conf/eth0.100/rp_filter"] = "1";
  auto r = h.run("steps:\n  - {name: s, sysctl: {key: net/ipv4/conf/eth0.100/rp_filter, value: 0}}\n");
  CHECK(r.exit_code == 0);
  CHECK(writes(h.fake) == Strings{"net/ipv4/conf/eth0.100/rp_filter=0", "net/ipv4/conf/eth0.100/rp_filter=1"});
}

TEST_CASE("sysctl: an unknown key and a refused write are errors") {
  SysctlHarness h;
  auto r = h.run("steps:\n  - {name: s, sysctl: {key: net.ipv4.conf.vX.rp_filter, value: 0}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "s").message.find("net.ipv4.conf.vX.rp_filter") != std::string::npos);

  SysctlHarness h2;
  h2.fake.kernel.fail("sysctl.write", EACCES, kKey, 1, 0, "cannot write sysctl " + kKey);
  auto r2 = h2.run("steps:\n  - {name: s, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}}\n");
  CHECK(r2.exit_code == 3);
  CHECK(step_named(r2, "s").status == StepStatus::Error);
  CHECK(h2.fake.sysctl.values.at(kKey) == "2");
}

TEST_CASE("sysctl: parameters are checked at load time") {
  SysctlHarness h;
  CHECK(h.diagnostics("steps:\n  - sysctl: {key: net.ipv4.ip_forward}\n").find("missing required parameter 'value'") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - sysctl: {key: net.ipv4.ip_forward, value: [1]}\n")
            .find("'value' must be a string, number or bool") != std::string::npos);
}

TEST_CASE("sysctl: undo of a key that is gone succeeds") {
  SysctlHarness h;
  REQUIRE(h.run_keep("steps:\n  - sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}\n").exit_code == 0);
  h.fake.sysctl.values.erase(kKey);  // the interface was deleted, its keys with it
  CHECK(h.cleanup().clean());
  CHECK(h.journal.pending().empty());
}

TEST_CASE("sysctl: revert restores now and reports the value as it stood") {
  SysctlHarness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: set, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}}\n"
      "  - {name: back, revert: set, expect: {after: 0}}\n");
  CHECK(r.exit_code == 0);
  CHECK(h.fake.sysctl.values.at(kKey) == "2");
  CHECK(r.cleanup.undos.empty());
}

TEST_CASE("sysctl: plan shows sysctl -w") {
  auto planned =
      fakes::Harness().plan_run("steps:\n  - {name: s, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}}\n");
  CHECK(step_named(planned.report, "s").status == StepStatus::Passed);
  const auto& actions = planned.actions;
  REQUIRE(!actions.empty());
  CHECK(actions[0].shell == "sysctl -w net.ipv4.conf.vB.rp_filter=0");
}

TEST_CASE("sysctl: plan inside a namespace of its own restores a value known at run time, not '?'") {
  const std::string text = fakes::Harness().plan(
      "steps:\n"
      "  - netns: {name: lab}\n"
      "  - {name: s, sysctl: {key: net.ipv4.conf.all.rp_filter, value: 0}, netns: lab}\n"
      "  - {name: back, revert: s}\n");
  CAPTURE(text);
  CHECK(text.find("ip netns exec lab sysctl -w net.ipv4.conf.all.rp_filter=0") != std::string::npos);
  CHECK(text.find("=?") == std::string::npos);
  const auto back = text.find("back (revert)");
  REQUIRE(back != std::string::npos);
  CHECK(
      text.find("\n       # set net.ipv4.conf.all.rp_filter back to the value it had before, known only at run time\n",
                back) != std::string::npos);
  CHECK(text.find("1 of them not previewable") != std::string::npos);
}

TEST_CASE("sysctl: plan in rxerun's own namespace restores the host's value, read from /proc/sys") {
  std::ifstream in("/proc/sys/net/ipv4/ip_forward");
  std::string host;
  REQUIRE(std::getline(in, host));
  const std::string other = host == "1" ? "0" : "1";
  const std::string text =
      fakes::Harness().plan("steps:\n  - {name: s, sysctl: {key: net.ipv4.ip_forward, value: " + other + "}}\n");
  CAPTURE(text);
  const auto cleanup = text.find("cleanup, newest first (1 undo):");
  REQUIRE(cleanup != std::string::npos);
  CHECK(text.find("sysctl -w net.ipv4.ip_forward=" + host, cleanup) != std::string::npos);
}

TEST_CASE("sysctl: plan keeps what it wrote apart per namespace") {
  const auto planned = fakes::Harness().plan_run(
      "steps:\n"
      "  - netns: {name: a}\n"
      "  - netns: {name: b}\n"
      "  - {name: in-a, sysctl: {key: net.ipv4.conf.all.forwarding, value: 1}, netns: a}\n"
      "  - {name: in-b, sysctl: {key: net.ipv4.conf.all.forwarding, value: 1}, netns: b}\n");
  CHECK(step_named(planned.report, "in-b").facts.at("changed") == true);
  Strings shells;
  for (const auto& a : planned.actions) shells.push_back(a.shell);
  CHECK(std::count(shells.begin(), shells.end(), "ip netns exec a sysctl -w net.ipv4.conf.all.forwarding=1") == 1);
  CHECK(std::count(shells.begin(), shells.end(), "ip netns exec b sysctl -w net.ipv4.conf.all.forwarding=1") == 1);
}
