// netem: the step's logic against the fake Qdiscs: preflight on a kernel
// without netem, refusal of a root qdisc somebody added, the parser of
// percentages and rates, and an undo that reports the qdisc's statistics.

#include <doctest/doctest.h>

#include "engine/loader.h"
#include "engine/registry.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

// The qdisc changes the run made (no reads), as tc commands.
Strings tc(fakes::FakeSystem& f) {
  Strings out;
  for (const auto& a : f.kernel.actions)
    if (a.service == "qdiscs" && !a.read) out.push_back(a.shell);
  return out;
}

struct NetemHarness : fakes::Harness {
  NetemHarness() { fake.links.add_host_link("", {.name = "vB", .kind = "veth", .mtu = 1500}); }
};

}  // namespace

TEST_CASE("netem: a kernel without netem stops the step before anything changes, naming the lab VM") {
  NetemHarness h;
  h.fake.qdiscs.netem = false;
  auto r = h.run("steps:\n  - {name: n, netem: {dev: vB, loss: 30%}}\n");
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "n");
  CHECK(
      s.message ==
      "netem is not available in this kernel (CONFIG_NET_SCH_NETEM); run the scenario in the lab VM: rxerun --vm ...");
  CHECK_FALSE(s.hints.empty());
  CHECK(tc(h.fake).empty());
  CHECK(r.cleanup.undos.empty());  // nothing recorded: nothing was changed
}

TEST_CASE("netem: replaces the kernel's default root qdisc, and cleanup removes it") {
  NetemHarness h;
  h.fake.qdiscs.root["vB"] = "noqueue";  // the kernel's default
  auto r = h.run_keep("steps:\n  - {name: lossy, netem: {dev: vB, loss: 30%}}\n");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "lossy");
  CHECK(s.facts.at("changed") == true);
  CHECK(s.facts.at("packets") == 0);
  CHECK(s.facts.contains("drops"));
  CHECK(h.fake.qdiscs.root.at("vB") == "netem");
  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 1);
  CHECK(c.undos[0].summary == "remove netem from vB");
  CHECK(h.fake.qdiscs.root.count("vB") == 0);
  CHECK(tc(h.fake) == Strings{"tc qdisc add dev vB root netem loss 30%", "tc qdisc del dev vB root"});
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("netem: the values are parsed as documented") {
  NetemHarness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - netem: {dev: vB, loss: 30%, delay: 10ms, jitter: 2ms, duplicate: 1, corrupt: '0.5%', reorder: 25, rate: "
      "1mbit}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(h.fake.qdiscs.specs.count("vB") == 1);
  const auto& spec = h.fake.qdiscs.specs.at("vB");
  CHECK(*spec.loss_pct == doctest::Approx(30));
  CHECK(*spec.duplicate_pct == doctest::Approx(1));
  CHECK(*spec.corrupt_pct == doctest::Approx(0.5));
  CHECK(*spec.reorder_pct == doctest::Approx(25));
  CHECK(spec.delay->count() == 10);
  CHECK(spec.jitter->count() == 2);
  CHECK(*spec.rate_bytes_per_s == 125000);
  CHECK(h.cleanup().clean());
  CHECK(h.fake.qdiscs.root.count("vB") == 0);
}

TEST_CASE("netem: rates in tc's units") {
  const std::pair<const char*, std::uint64_t> cases[] = {
      {"8000", 1000},       {"100kbit", 12500}, {"1mbit", 125000},   {"1gbit", 125000000},
      {"10mbps", 10000000}, {"1kibit", 128},    {"1mibps", 1048576}, {"2.5Gbit", 312500000},
  };
  for (const auto& [text, bytes] : cases) {
    CAPTURE(text);
    NetemHarness h;
    auto r = h.run_keep(std::string("steps:\n  - netem: {dev: vB, rate: '") + text + "'}\n");
    REQUIRE(r.exit_code == 0);
    CHECK(*h.fake.qdiscs.specs.at("vB").rate_bytes_per_s == bytes);
    CHECK(h.cleanup().clean());
  }
}

TEST_CASE("netem: bad values are errors that point at the value, before anything changes") {
  // Percentages as written, and jitter or reorder without a delay, are the
  // loader's (KindSpec::validate): the scenario is refused at the value and
  // nothing runs.
  const Registry registry(steps::all_kinds());
  const std::pair<const char*, const char*> at_load[] = {
      {"loss: lots", "loss is a percentage"}, {"loss: 120%", "between 0 and 100"},
      {"loss: -1", "between 0 and 100"},      {"duplicate: 250", "between 0 and 100"},
      {"jitter: 2ms", "jitter needs delay"},  {"reorder: 10%", "reorder needs delay"},
  };
  for (const auto& [param, why] : at_load) {
    CAPTURE(param);
    auto loaded = load_scenario_text(std::string("steps:\n  - {name: n, netem: {dev: vB, ") + param + "}}\n",
                                     "test.yaml", registry, {});
    REQUIRE_FALSE(loaded.scenario);
    CHECK(loaded.diagnostics.front().message.find(why) != std::string::npos);
    CHECK(loaded.diagnostics.front().mark.line == 2);
    const std::string line = std::string("  - {name: n, netem: {dev: vB, ") + param;  // the value's column
    CHECK(loaded.diagnostics.front().mark.col == static_cast<int>(line.find(": ", line.find(param)) + 3));
  }
  // The rest, and a percentage that comes from an earlier step's fact, when
  // the step runs: an error at the value, before anything changes.
  const std::pair<const char*, const char*> at_run[] = {
      {"loss: '{{steps.c.slept_ms}} parts'", "loss is a percentage"},
      {"rate: fast", "rate is a positive number with a unit"},
      {"rate: 10furlongs", "rate is a positive number with a unit"},
      {"rate: '0'", "rate is a positive number with a unit"},
  };
  for (const auto& [param, why] : at_run) {
    CAPTURE(param);
    NetemHarness h;
    auto r = h.run(std::string("steps:\n  - {name: c, sleep: {duration: 1ms}}\n  - {name: n, netem: {dev: vB, ") +
                   param + "}}\n");
    CHECK(r.exit_code == 3);
    const auto& msg = step_named(r, "n").message;
    CHECK(msg.find(why) != std::string::npos);
    CHECK(msg.rfind("test.yaml:3:", 0) == 0);
    CHECK(tc(h.fake).empty());
  }
  NetemHarness h;
  auto r = h.run("steps:\n  - {name: n, netem: {dev: vB}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "n").message.find("at least one of") != std::string::npos);
}

TEST_CASE("netem: a root qdisc somebody added is not replaced") {
  NetemHarness h;
  h.fake.qdiscs.root["vB"] = "htb";
  auto r = h.run("steps:\n  - {name: n, netem: {dev: vB, loss: 5%}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "n").message.find("vB has a root qdisc 'htb' that rxerun did not add") != std::string::npos);
  CHECK(h.fake.qdiscs.root.at("vB") == "htb");
  CHECK(tc(h.fake).empty());

  NetemHarness h2;
  h2.fake.qdiscs.root["vB"] = "netem";  // one netem per interface: not this step's
  CHECK(h2.run("steps:\n  - netem: {dev: vB, loss: 5%}\n").exit_code == 3);
  CHECK(h2.fake.qdiscs.root.at("vB") == "netem");
}

TEST_CASE("netem: undo succeeds when the qdisc or the interface is gone, and leaves a qdisc that is not netem") {
  NetemHarness h;
  REQUIRE(h.run_keep("steps:\n  - netem: {dev: vB, delay: 5ms}\n").exit_code == 0);
  REQUIRE(h.fake.qdiscs.remove_root("vB"));
  CHECK(h.cleanup().clean());

  NetemHarness h2;
  REQUIRE(h2.run_keep("steps:\n  - netem: {dev: vB, delay: 5ms}\n").exit_code == 0);
  h2.fake.qdiscs.root["vB"] = "tbf";  // somebody replaced it
  auto c = h2.cleanup();
  CHECK_FALSE(c.clean());
  CHECK(c.undos[0].error.find("not rxerun's netem: left alone") != std::string::npos);
  CHECK(h2.fake.qdiscs.root.at("vB") == "tbf");
}

TEST_CASE("netem: revert reports the final statistics") {
  NetemHarness h;
  h.fake.qdiscs.stats = {.packets = 100, .bytes = 9800, .drops = 31, .overlimits = 0, .requeues = 0};
  auto r = h.run(
      "steps:\n"
      "  - {name: lossy, netem: {dev: vB, loss: 30%}}\n"
      "  - {name: lift, revert: lossy, expect: {drops: '> 0', packets: 100}}\n");
  CHECK(r.exit_code == 0);
  CHECK(step_named(r, "lift").facts.at("drops") == 31);
  CHECK(step_named(r, "lift").facts.at("bytes") == 9800);
}

TEST_CASE("netem: plan shows the tc command") {
  const std::string text =
      fakes::Harness().plan("steps:\n  - veth: {name: vB, peer: vA}\n  - netem: {dev: vB, loss: 30%, delay: 10ms}\n");
  CAPTURE(text);
  CHECK(text.find("tc qdisc add dev vB root netem delay 10ms loss 30%") != std::string::npos);
  // The qdisc goes with the veth the run made: cleanup deletes only the veth.
  CHECK(text.find("tc qdisc del dev vB root") == std::string::npos);
  CHECK(text.find("ip link del vB") != std::string::npos);
}

TEST_CASE("netem: plan removes the qdisc from an interface the run did not make") {
  fakes::Harness h;
  const std::string text = h.plan("steps:\n  - netem: {dev: eth0, loss: 30%}\n");
  CAPTURE(text);
  CHECK(text.find("tc qdisc add dev eth0 root netem loss 30%") != std::string::npos);
  CHECK(text.find("tc qdisc del dev eth0 root") != std::string::npos);
}
