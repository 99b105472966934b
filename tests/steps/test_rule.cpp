// rule: the step's logic against the fake Routes, whose rules start as a
// new namespace's (pref 0 local, 32766 main, 32767 default).

#include <doctest/doctest.h>

#include <sys/socket.h>

#include <algorithm>

#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/kinds.h"

using namespace rxerun;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

const Strings kDefault = {"pref 0 lookup local", "pref 32766 lookup main", "pref 32767 lookup default"};

// The forced wire's rules, the local table moved the safe way round.
const char* kForcedWire =
    "steps:\n"
    "  - {name: r100, rule: {pref: 100, iif: lo, to: 10.10.0.2/32, table: 100}}\n"
    "  - {name: r101, rule: {pref: 101, iif: lo, to: 10.10.0.1/32, table: 101}}\n"
    "  - {name: local-1000, rule: {pref: 1000, table: local}}\n"
    "  - {name: no-local-0, rule: {pref: 0, table: local, action: delete}}\n";

}  // namespace

TEST_CASE("rule: the forced wire's rules go in, the local rule moves, and cleanup restores the rule set exactly") {
  fakes::Harness h;
  auto r = h.run_keep(kForcedWire);
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "r100").facts.at("rule") == "pref 100 iif lo to 10.10.0.2/32 lookup 100");
  CHECK(step_named(r, "r100").facts.at("changed") == true);
  CHECK(step_named(r, "r100").facts.at("family") == "inet");
  CHECK(step_named(r, "local-1000").facts.at("table") == "local");
  CHECK(step_named(r, "no-local-0").facts.at("changed") == true);
  CHECK(step_named(r, "no-local-0").facts.at("rule") == "pref 0 lookup local");
  CHECK(h.fake.routes.rule_lines(AF_INET) ==
        Strings{"pref 100 iif lo to 10.10.0.2/32 lookup 100", "pref 101 iif lo to 10.10.0.1/32 lookup 101",
                "pref 1000 lookup local", "pref 32766 lookup main", "pref 32767 lookup default"});

  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() == 4);
  CHECK(c.undos[0].summary == "put back rule pref 0 lookup local");  // newest first: local is back before 1000 goes
  CHECK(c.undos[1].summary == "delete rule pref 1000 lookup local");
  CHECK(h.fake.routes.rule_lines(AF_INET) == kDefault);
  // Put back as the kernel had it, its protocol included.
  CHECK(h.fake.routes.rule_sets[AF_INET][0].protocol == 2);
  CHECK(h.fake.routes.rule_sets[AF_INET6].size() == 2);  // IPv6's untouched
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("rule: the removal is journalled before it is made, with the rule as the kernel listed it") {
  fakes::Harness h;
  REQUIRE(h.run_keep("steps:\n"
                     "  - {name: local-1000, rule: {pref: 1000, table: local}}\n"
                     "  - {name: no-local-0, rule: {pref: 0, table: local, action: delete}}\n")
              .exit_code == 0);
  const auto& pending = h.journal.pending();
  REQUIRE(pending.size() == 2);
  CHECK(pending[1].summary == "put back rule pref 0 lookup local");
  CHECK(pending[1].args.at("op") == "add");
  CHECK(pending[1].args.at("rule").at("pref") == 0);
  CHECK(pending[1].args.at("rule").at("table") == 255);
  CHECK(pending[1].args.at("rule").at("protocol") == 2);

  // After a crash, another process restores it from those arguments alone.
  fakes::Harness later;
  later.fake.routes.rule_sets = h.fake.routes.rule_sets;
  for (const auto& e : pending) REQUIRE(later.journal.append(e));
  CHECK(later.cleanup().clean());
  CHECK(later.fake.routes.rule_lines(AF_INET) == kDefault);
}

TEST_CASE("rule: adding a rule that is there is unchanged, a second apply too") {
  fakes::Harness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: a, rule: {pref: 100, iif: lo, to: 10.10.0.2, table: 100}}\n"
      "  - {name: b, rule: {pref: 100, iif: lo, to: 10.10.0.2/32, table: 100}}\n"
      "  - {name: main, rule: {pref: 32766, table: main}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "a").facts.at("changed") == true);
  CHECK(step_named(r, "b").facts.at("changed") == false);
  CHECK(step_named(r, "main").facts.at("changed") == false);
  CHECK(r.cleanup.undos.size() == 1);
  CHECK(h.fake.routes.rule_lines(AF_INET) == kDefault);
}

TEST_CASE("rule: deleting a rule that is not there changes nothing and says what is at that pref") {
  fakes::Harness h;
  auto r = h.run("steps:\n  - {name: d, rule: {pref: 0, table: main, action: delete}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "d").facts.at("changed") == false);
  REQUIRE(step_named(r, "d").hints.size() == 1);
  CHECK(step_named(r, "d").hints[0].find("at pref 0 there is: pref 0 lookup local") != std::string::npos);
  CHECK(r.cleanup.undos.empty());
  CHECK(h.fake.kernel.commands("routes").empty());
}

TEST_CASE("rule: the last rule that looks up the local table is never deleted") {
  fakes::Harness h;
  auto r = h.run(
      "steps:\n"
      "  - {name: no-local-0, rule: {pref: 0, table: local, action: delete}}\n"
      "  - {name: local-1000, rule: {pref: 1000, table: local}}\n");
  CHECK(r.exit_code == 3);
  const auto& s = step_named(r, "no-local-0");
  CAPTURE(s.message);
  CHECK(s.message.find("it is the last rule that looks up the local table") != std::string::npos);
  CHECK(s.message.find("add the new one first") != std::string::npos);
  CHECK(h.fake.routes.rule_lines(AF_INET) == kDefault);
  CHECK(h.fake.kernel.commands("routes").empty());
  CHECK(r.cleanup.undos.empty());
}

TEST_CASE("rule: undo of an add deletes exactly that rule, never a wider one the kernel would take first") {
  fakes::Harness h;
  REQUIRE(h.run_keep("steps:\n  - {name: a, rule: {pref: 100, to: 10.10.0.2/32, table: 100}}\n").exit_code == 0);
  // Someone adds a rule at the same pref whose selectors the kernel's delete would also match, first.
  auto& rules = h.fake.routes.rule_sets[AF_INET];
  sys::Rule wider{.family = AF_INET, .pref = 100, .to = "10.10.0.2/32", .iif = "lo", .table = 100};
  rules.insert(rules.begin() + 1, wider);
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());
  REQUIRE(c.undos.size() == 1);
  CAPTURE(c.undos[0].error);
  CHECK(c.undos[0].error.find("the kernel would take rule pref 100 iif lo to 10.10.0.2/32 lookup 100 first") !=
        std::string::npos);
  CHECK(h.fake.routes.rule_lines(AF_INET).size() == 5);  // both still there
}

TEST_CASE("rule: undo succeeds when the rule is gone, and a rule put back already is left alone") {
  fakes::Harness h;
  REQUIRE(h.run_keep(kForcedWire).exit_code == 0);
  auto& rules = h.fake.routes.rule_sets[AF_INET];
  rules.erase(rules.begin());  // pref 100 went by hand
  rules.insert(rules.begin(), sys::Rule{.family = AF_INET, .pref = 0, .table = 255, .protocol = 2});  // local back
  CHECK(h.cleanup().clean());
  CHECK(h.fake.routes.rule_lines(AF_INET) == kDefault);
}

TEST_CASE("rule: an undo whose rule differs from the one there only in its protocol leaves that rule alone") {
  fakes::Harness h;
  REQUIRE(h.run_keep("steps:\n  - {name: a, rule: {pref: 100, to: 10.10.0.2/32, table: 100}}\n").exit_code == 0);
  // Hand-edited, or written by another rxerun: the kernel's delete, which
  // names the protocol, would match no rule, though one like it is there.
  JournalEntry edited = h.journal.pending().at(0);
  edited.args["rule"]["protocol"] = 4;
  Journal journal = Journal::in_memory();
  REQUIRE(journal.append(edited));
  Runner runner(h.registry, h.fake.system, journal, h.reporter);
  CHECK(runner.cleanup("test", "cleanup").clean());
  const auto& rules = h.fake.routes.rule_sets[AF_INET];
  CHECK(std::any_of(rules.begin(), rules.end(), [](const sys::Rule& r) { return r.pref == 100; }));
}

TEST_CASE("rule: IPv6 by its addresses or by family, and fwmark with and without a mask") {
  fakes::Harness h;
  auto r = h.run_keep(
      "steps:\n"
      "  - {name: six, rule: {pref: 200, from: 'fd00::1', table: 200}}\n"
      "  - {name: fam, rule: {pref: 201, family: inet6, oif: vB, table: main}}\n"
      "  - {name: mark, rule: {pref: 300, fwmark: '0x10', table: 300}}\n"
      "  - {name: masked, rule: {pref: 301, fwmark: 16/0xff, from: all, table: 301}}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "six").facts.at("family") == "inet6");
  CHECK(step_named(r, "six").facts.at("rule") == "pref 200 from fd00::1/128 lookup 200");
  CHECK(step_named(r, "fam").facts.at("rule") == "pref 201 oif vB lookup main");
  CHECK(step_named(r, "mark").facts.at("rule") == "pref 300 fwmark 0x10 lookup 300");
  CHECK(step_named(r, "masked").facts.at("rule") == "pref 301 fwmark 0x10/0xff lookup 301");
  CHECK(h.fake.routes.rule_sets[AF_INET6].size() == 4);
  CHECK(h.cleanup().clean());
  CHECK(h.fake.routes.rule_sets[AF_INET6].size() == 2);
  CHECK(h.fake.routes.rule_lines(AF_INET) == kDefault);
}

TEST_CASE("rule: the kernel's EEXIST is explained") {
  fakes::Harness h;
  h.fake.kernel.fail("routes.add_rule", EEXIST, "", 1, 0, "cannot add rule pref 5 lookup 5: File exists");
  auto r = h.run("steps:\n  - {name: a, rule: {pref: 5, table: 5}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "a").message.find("give this one another pref") != std::string::npos);
  CHECK(r.cleanup.clean());
}

TEST_CASE("rule: parameters are checked at load time, with the place") {
  fakes::Harness h;
  CHECK(h.diagnostics("steps:\n  - rule: {pref: 1, table: local, to: 10.0.0.1/8}\n").find("the prefix is 10.0.0.0/8") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - rule: {pref: 1, table: local, to: 10.0.0.1, from: 'fd00::1'}\n")
            .find("'to' is inet, the rule inet6 (the other address)") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - rule: {pref: 1, table: local, to: 10.0.0.1, family: inet6}\n")
            .find("'to' is inet, the rule inet6 ('family')") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - rule: {pref: 1, table: 0}\n").find("'table' must be a number") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - rule: {pref: 1, table: 1, fwmark: x}\n").find("'fwmark' must be MARK") !=
        std::string::npos);
  CHECK(h.diagnostics("steps:\n  - rule: {table: 1}\n").find("missing required parameter 'pref'") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - rule: {pref: -1, table: 1}\n").find("'pref' must be >= 0") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - rule: {pref: 1, table: 1, action: remove}\n")
            .find("'action' must be one of add, delete") != std::string::npos);
}

TEST_CASE("rule: plan shows ip rule add and del, and cleanup putting the kernel's rule back first") {
  auto planned = fakes::Harness().plan_run(
      "steps:\n"
      "  - {rule: {pref: 100, iif: lo, to: 10.10.0.2/32, table: 100}}\n"
      "  - {rule: {pref: 1000, table: local}}\n"
      "  - {rule: {pref: 0, table: local, action: delete}}\n");
  Strings shells;
  for (const auto& a : planned.actions) shells.push_back(a.shell);
  CHECK(shells == Strings{"ip rule add pref 100 iif lo to 10.10.0.2/32 lookup 100",
                          "ip rule add pref 1000 lookup local", "ip rule del pref 0 lookup local",
                          // cleanup, newest first
                          "ip rule add pref 0 lookup local protocol kernel", "ip rule del pref 1000 lookup local",
                          "ip rule del pref 100 iif lo to 10.10.0.2/32 lookup 100"});
}

TEST_CASE("rule: plan inside a namespace leaves the rules to its deletion, and refuses as the run would") {
  auto planned = fakes::Harness().plan_run(
      "steps:\n"
      "  - netns: {name: lab}\n"
      "  - {rule: {pref: 1000, table: local}, netns: lab}\n"
      "  - {rule: {pref: 0, table: local, action: delete}, netns: lab}\n"
      "  - {name: six, rule: {pref: 0, table: local, action: delete, family: inet6}}\n");
  Strings shells;
  for (const auto& a : planned.actions) shells.push_back(a.shell);
  CAPTURE(shells);
  CHECK(std::count(shells.begin(), shells.end(), "ip netns exec lab ip rule del pref 0 lookup local") == 1);
  CHECK(std::count(shells.begin(), shells.end(), "ip netns del lab") == 1);
  CHECK(std::none_of(shells.begin(), shells.end(),
                     [](const std::string& s) { return s.find("ip rule add pref 0") != std::string::npos; }));
  // No local rule at 1000 for IPv6 in rxerun's own namespace.
  const auto& six = step_named(planned.report, "six");
  CHECK(six.status == StepStatus::Error);
  CHECK(six.message.find("last rule that looks up the local table") != std::string::npos);
}
