// block: the nftables fault, against the model's nftables (sys/model/nft.h).

#include <doctest/doctest.h>

#include <algorithm>

#include "engine/step.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

constexpr const char* kTable = "inet rxerun-test";

bool mentions(const Strings& commands, const std::string& text) {
  return std::any_of(commands.begin(), commands.end(),
                     [&](const std::string& c) { return c.find(text) != std::string::npos; });
}

// Commands that change something (everything but `list`).
Strings changes(const Strings& commands) {
  Strings out;
  for (const auto& c : commands)
    if (c.rfind("list ", 0) != 0) out.push_back(c);
  return out;
}

// The nft commands the run sent, as a person would type them after `nft`.
Strings nft_commands(fakes::FakeSystem& f) {
  Strings out;
  for (const auto& a : f.kernel.actions)
    if (a.service == "nft") out.push_back(a.what.substr(std::string("nftables: ").size()));
  return out;
}

// Every rule of the model counts `n` more packets whenever time passes (a
// step's retry delay, a sleep), as if traffic flowed.
void traffic(fakes::FakeSystem& f, std::uint64_t n) {
  f.clock.on_wait = [&f, n] {
    for (auto& [name, table] : f.nft.tables)
      for (auto& r : table.rules) {
        r.packets += n;
        r.bytes += 84 * n;
      }
  };
}

struct TestUndoContext final : UndoContext {
  explicit TestUndoContext(sys::System& s) : sys_(s) {}
  sys::System& sys() override { return sys_; }
  const std::string& scenario() const override { return name_; }
  sys::System& sys_;
  std::string name_ = "test";
};

}  // namespace

TEST_CASE("block: adds a counting rule in the run's own table and cleanup removes table and chain") {
  fakes::Harness h;
  auto r = h.run_keep("steps:\n  - name: blk\n    block: {proto: udp, port: 4791}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(changes(nft_commands(h.fake)) ==
        Strings{"add table inet rxerun-test",
                "add chain inet rxerun-test input { type filter hook input priority 0 ; policy accept ; }",
                "add rule inet rxerun-test input udp dport 4791 counter drop comment \"rxerun step blk\""});
  const auto& facts = step_named(r, "blk").facts;
  CHECK(facts["changed"] == true);
  CHECK(facts["table"] == kTable);
  CHECK(facts["chain"] == "input");
  CHECK(facts["packets"] == 0);
  CHECK(facts["handle"].get<long long>() > 0);
  CHECK_FALSE(facts.contains("warning"));
  REQUIRE(h.fake.nft.find_rule(kTable, "rxerun step blk") != nullptr);
  CHECK(h.fake.nft.find_rule(kTable, "rxerun step blk")->handle == facts["handle"].get<long long>());

  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.fake.nft.tables.empty());
  CHECK(nft_commands(h.fake).back() == "delete table inet rxerun-test");

  // Cleanup twice: the second finds nothing to do.
  h.fake.kernel.actions.clear();
  auto again = h.cleanup();
  CHECK(again.undos.empty());
  CHECK(nft_commands(h.fake).empty());
}

TEST_CASE("block: a revert reports the packets and bytes the rule counted") {
  fakes::Harness h;
  traffic(h.fake, 2);
  auto r = h.run(R"(
steps:
  - name: blk
    block: {proto: icmp}
  - name: traffic-flows
    sleep: {duration: 10ms}
  - name: lift
    revert: blk
    expect: {packets: "> 0", bytes: "> 0"}
  - name: after
    sleep: {duration: 1ms}
)");
  CHECK(r.exit_code == 0);
  const auto& lift = step_named(r, "lift");
  CHECK(lift.status == StepStatus::Passed);
  CHECK(lift.facts["packets"].get<long long>() > 0);
  CHECK(lift.facts["bytes"] == 84 * lift.facts["packets"].get<long long>());
  CHECK(h.fake.nft.tables.empty());  // the revert took the table along; cleanup had nothing left
  CHECK(r.cleanup.clean());
  CHECK(mentions(nft_commands(h.fake), "add rule inet rxerun-test input meta l4proto icmp counter drop"));
}

TEST_CASE("block: a second apply finds its rule and changes nothing") {
  fakes::Harness h;
  traffic(h.fake, 1);
  // The first attempt sees 0 packets (the rule is new) and is retried: the
  // second finds the rule it made and reports its count, adding nothing.
  auto r = h.run_keep(R"(
steps:
  - name: blk
    block: {proto: tcp, port: 22, action: reject}
    expect: {packets: "> 0"}
    retries: 1
)");
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "blk");
  CHECK(s.status == StepStatus::Flaky);
  CHECK(s.facts["changed"] == false);
  CHECK(s.facts["packets"].get<long long>() > 0);
  const Strings sent = nft_commands(h.fake);
  CHECK(std::count_if(sent.begin(), sent.end(), [](const std::string& c) { return c.rfind("add rule", 0) == 0; }) == 1);
  CHECK(h.fake.nft.tables.at(kTable).rules.size() == 1);
  CHECK(h.cleanup().clean());
  CHECK(h.fake.nft.tables.empty());
}

TEST_CASE("block: a later run's preclean removes the table a crashed run left") {
  fakes::Harness h;
  const std::string yaml = "steps:\n  - name: blk\n    block: {proto: tcp, port: 22}\n";
  REQUIRE(h.run_keep(yaml).exit_code == 0);
  h.journal = Journal::in_memory();  // the journal is lost; the table is still there
  auto r = h.run(yaml);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.preclean.undos.empty());
  CHECK(step_named(r, "blk").facts["changed"] == true);
  CHECK(h.fake.nft.tables.empty());
}

TEST_CASE("block: steps share the table and a chain per hook, each undo leaves the others' rules") {
  fakes::Harness h;
  auto r = h.run_keep(R"(
steps:
  - name: a
    block: {proto: udp, port: 4791}
  - name: b
    block: {proto: icmp, dev: vB}
  - name: c
    block: {proto: tcp, hook: output, dev: vB}
  - name: d
    block: {dev: vA, hook: forward, action: reject}
  - name: lift-a
    revert: a
)");
  REQUIRE(r.exit_code == 0);
  const auto& t = h.fake.nft.tables.at(kTable);
  CHECK(t.chains.size() == 3);
  CHECK(t.rules.size() == 3);  // a was reverted; b keeps the input chain
  CHECK(h.fake.nft.find_rule(kTable, "rxerun step a") == nullptr);
  REQUIRE(h.fake.nft.find_rule(kTable, "rxerun step b") != nullptr);
  auto text = [&](const char* comment) {
    sys::NftRule r = *h.fake.nft.find_rule(kTable, comment);
    r.comment.clear();
    return sys::nft_rule_text(r);
  };
  CHECK(text("rxerun step b") == "iifname \"vB\" meta l4proto icmp counter drop");
  CHECK(text("rxerun step c") == "oifname \"vB\" meta l4proto tcp counter drop");
  CHECK(text("rxerun step d") == "iifname \"vA\" counter reject");
  CHECK(h.fake.nft.find_rule(kTable, "rxerun step d")->chain == "forward");
  // Only one `add table` and one `add chain` per hook.
  const Strings sent = nft_commands(h.fake);
  CHECK(std::count_if(sent.begin(), sent.end(), [](const std::string& c) { return c.rfind("add table", 0) == 0; }) ==
        1);
  CHECK(std::count_if(sent.begin(), sent.end(),
                      [](const std::string& c) { return c.rfind("add chain inet rxerun-test input", 0) == 0; }) == 1);

  CHECK(h.cleanup().clean());
  CHECK(h.fake.nft.tables.empty());
}

TEST_CASE("block: the host's own tables are never touched") {
  fakes::Harness h;
  h.fake.nft.tables["inet filter"] = {
      .handle = 7, .chains = {"input"}, .rules = {{.chain = "input", .proto = "tcp", .dport = 22, .handle = 3}}};
  h.fake.nft.tables["inet rxerun-other"] = {.handle = 8};  // another scenario's
  auto r = h.run("steps:\n  - name: blk\n    block: {proto: udp}\n");
  CHECK(r.exit_code == 0);
  CHECK(h.fake.nft.tables.size() == 2);
  CHECK(h.fake.nft.tables.count("inet filter") == 1);
  CHECK(h.fake.nft.tables.at("inet filter").rules.size() == 1);
  CHECK(h.fake.nft.tables.count("inet rxerun-other") == 1);
  for (const auto& c : nft_commands(h.fake)) {
    CAPTURE(c);
    CHECK(c.find("rxerun-test") != std::string::npos);
    CHECK(c.find("flush") == std::string::npos);
    CHECK(c.find("ruleset") == std::string::npos);
  }
}

TEST_CASE("block: undo is idempotent and a table that is gone counts as done") {
  fakes::Harness h;
  REQUIRE(h.run_keep("steps:\n  - name: blk\n    block: {proto: udp, port: 9}\n").exit_code == 0);
  h.fake.nft.tables.clear();  // someone (a netns deletion, say) took it along
  auto c = h.cleanup();
  CHECK(c.clean());
  CHECK(h.journal.pending().empty());
}

TEST_CASE("block: a rule that is gone still lets undo remove the empty chain and table") {
  fakes::Harness h;
  REQUIRE(h.run_keep("steps:\n  - name: blk\n    block: {proto: udp, port: 9}\n").exit_code == 0);
  h.fake.nft.tables.at(kTable).rules.clear();  // a crash before the rule was added, say
  CHECK(h.cleanup().clean());
  CHECK(h.fake.nft.tables.empty());
}

TEST_CASE("block: a table holding something else of the run is kept") {
  fakes::Harness h;
  REQUIRE(h.run_keep("steps:\n  - name: blk\n    block: {proto: udp, port: 9}\n").exit_code == 0);
  h.fake.nft.tables.at(kTable).chains.push_back("extra");
  CHECK(h.cleanup().clean());
  REQUIRE(h.fake.nft.tables.count(kTable) == 1);
  CHECK(h.fake.nft.tables.at(kTable).rules.empty());
  CHECK(h.fake.nft.tables.at(kTable).chains.size() == 1);
}

TEST_CASE("block: parameter combinations that cannot work are errors naming the place") {
  fakes::Harness h;
  struct Case {
    std::string yaml;
    std::string says;
  };
  // A port without a protocol that has ports: the loader's (KindSpec::validate), at the port.
  CHECK(h.diagnostics("steps:\n  - block: {proto: icmp, port: 7}\n") ==
        "test.yaml:2:32: icmp has no ports: leave out `port`, or use udp, tcp, sctp, dccp or udplite\n");
  CHECK(h.diagnostics("steps:\n  - block: {proto: icmpv6, port: 7}\n").find("icmpv6 has no ports") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - block: {port: 4791}\n") ==
        "test.yaml:2:19: `port` needs `proto` (udp, tcp, sctp, dccp or udplite)\n");
  // The rest when the step runs.
  for (const auto& c : std::vector<Case>{
           {"steps:\n  - block: {hook: input}\n", "needs `proto` or `dev`"},
       }) {
    CAPTURE(c.yaml);
    h.fake.kernel.actions.clear();
    auto r = h.run(c.yaml);
    CHECK(r.exit_code == 3);
    REQUIRE(r.steps.size() == 1);
    CHECK(r.steps[0].status == StepStatus::Error);
    CHECK(r.steps[0].message.find(c.says) != std::string::npos);
    CHECK(r.steps[0].message.find("test.yaml:2:") == 0);
    CHECK(changes(nft_commands(h.fake)).empty());
  }
  CHECK(h.diagnostics("steps:\n  - block: {proto: gre}\n").find("proto") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - block: {proto: udp, port: 70000}\n").find("port") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - block: {proto: udp, hook: prerouting}\n").find("hook") != std::string::npos);
}

TEST_CASE("block: UDP 4791 on the output hook runs, with a loud warning") {
  fakes::Harness h;
  auto r = h.run("steps:\n  - name: blk\n    block: {proto: udp, port: 4791, hook: output}\n");
  CHECK(r.exit_code == 0);
  const auto& s = step_named(r, "blk");
  REQUIRE(s.hints.size() == 1);
  CHECK(s.hints[0].find("wedges rxe") != std::string::npos);
  CHECK(s.facts["warning"] == s.hints[0]);
  CHECK(mentions(nft_commands(h.fake), "add rule inet rxerun-test output udp dport 4791 counter drop"));
  // Not on input.
  fakes::Harness h2;
  auto r2 = h2.run("steps:\n  - name: blk\n    block: {proto: udp, port: 4791}\n");
  CHECK(step_named(r2, "blk").hints.empty());
}

TEST_CASE("block: nftables errors make the step an error and nothing is left behind") {
  fakes::Harness h;
  h.fake.kernel.fail("nft.add_rule", EOPNOTSUPP);
  auto r = h.run("steps:\n  - name: blk\n    block: {proto: udp, port: 4791}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "blk").status == StepStatus::Error);
  CHECK(step_named(r, "blk").message.find(std::strerror(EOPNOTSUPP)) != std::string::npos);
  CHECK(r.cleanup.clean());
  CHECK(h.fake.nft.tables.empty());  // the journal entry made before the change removed chain and table
}

TEST_CASE("block: a permission error is an error, not a failure") {
  fakes::Harness h;
  h.fake.kernel.fail("nft.add_table", EPERM);
  auto r = h.run("steps:\n  - name: blk\n    block: {proto: udp, port: 4791}\n    expect: fail\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "blk").status == StepStatus::Error);
  CHECK(r.cleanup.clean());
}

TEST_CASE("block: preclean removes a leftover table of the scenario, and only that") {
  fakes::Harness h;
  h.fake.nft.tables["inet rxerun-test"] = {
      .handle = 1, .chains = {"input"}, .rules = {{.chain = "input", .handle = 2}}};
  h.fake.nft.tables["inet rxerun-test2"] = {.handle = 3};
  h.fake.nft.tables["ip filter"] = {.handle = 4};
  const Kind* kind = h.registry.find("block");
  REQUIRE(kind);
  REQUIRE(kind->preclean);
  TestUndoContext ctx(h.fake.system);
  auto removed = kind->preclean(ctx);
  REQUIRE(removed.ok());
  CHECK(*removed == Strings{"nftables table inet rxerun-test"});
  CHECK(h.fake.nft.tables.count("inet rxerun-test") == 0);
  CHECK(h.fake.nft.tables.size() == 2);
  // Nothing left: nothing to say.
  auto again = kind->preclean(ctx);
  REQUIRE(again.ok());
  CHECK(again->empty());
}

TEST_CASE("block: plan shows the nft commands a person would type") {
  auto planned = fakes::Harness().plan_run("name: lab\nsteps:\n  - name: blk\n    block: {proto: udp, port: 4791}\n");
  std::vector<std::string> shells;
  for (const auto& a : planned.actions) shells.push_back(a.shell);
  CHECK(mentions(shells, "nft 'add table inet rxerun-lab'"));
  CHECK(
      mentions(shells, "nft 'add rule inet rxerun-lab input udp dport 4791 counter drop comment \"rxerun step blk\"'"));
}

TEST_CASE("block: plan of a revert shows the read and the deletion of the rule, the chain and the table") {
  const std::string text = fakes::Harness().plan(
      "steps:\n"
      "  - netns: {name: lab}\n"
      "  - {name: blk, block: {proto: icmp}, netns: lab}\n"
      "  - {name: lift, revert: blk}\n");
  CAPTURE(text);
  const auto lift = text.find("lift (revert)");
  const auto cleanup = text.find("cleanup, newest first");
  REQUIRE(lift != std::string::npos);
  REQUIRE(cleanup != std::string::npos);
  const std::string revert = text.substr(lift, cleanup - lift);
  CHECK(revert.find("ip netns exec lab nft 'list table inet rxerun-test'") != std::string::npos);
  // Handles as the kernel numbers them in a fresh table: the chain took 1.
  const auto rule = revert.find("ip netns exec lab nft 'delete rule inet rxerun-test input handle 2'");
  const auto chain = revert.find("ip netns exec lab nft 'delete chain inet rxerun-test input'");
  const auto table = revert.find("ip netns exec lab nft 'delete table inet rxerun-test'");
  CHECK(rule != std::string::npos);
  CHECK(chain != std::string::npos);
  CHECK(table != std::string::npos);
  CHECK(rule < chain);
  CHECK(chain < table);
  // The revert undid it: cleanup only deletes the namespace.
  CHECK(text.find("cleanup, newest first (1 undo):") != std::string::npos);
  CHECK(text.find("nft", cleanup) == std::string::npos);
}

TEST_CASE("block: plan of a rule that stays until cleanup deletes it there") {
  const std::string text = fakes::Harness().plan("steps:\n  - {name: blk, block: {proto: udp, port: 4791}}\n");
  CAPTURE(text);
  const auto cleanup = text.find("cleanup, newest first (1 undo):");
  REQUIRE(cleanup != std::string::npos);
  CHECK(text.find("nft 'delete rule inet rxerun-test input handle 2'", cleanup) != std::string::npos);
  CHECK(text.find("nft 'delete table inet rxerun-test'", cleanup) != std::string::npos);
}

TEST_CASE("block: a '*' in dev (an nftables wildcard) is refused at validation") {
  fakes::Harness h;
  for (const char* dev : {"v*", "*", "v*B"}) {
    CAPTURE(dev);
    const std::string d = h.diagnostics(std::string("steps:\n  - block: {proto: udp, dev: '") + dev + "'}\n");
    CHECK(d.find("test.yaml:2:30: '") == 0);
    CHECK(d.find("holds '*', which nftables reads as a wildcard") != std::string::npos);
  }
  // Through a variable too: the check runs on the expanded value.
  CHECK(h.diagnostics("vars: {d: 'v*'}\nsteps:\n  - block: {proto: udp, dev: '{{d}}'}\n").find("wildcard") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - block: {proto: udp, dev: vB}\n").empty());
}
