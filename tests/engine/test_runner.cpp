// The runner's behaviour, observed through fake kinds and virtual time.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "engine/loader.h"
#include "engine/runner.h"
#include "fakes/fake_kinds.h"
#include "fakes/fake_system.h"
#include "fakes/harness.h"

using namespace rxerun;
using Strings = std::vector<std::string>;

namespace {

// The shared harness, with the fake kinds of tests/fakes/fake_kinds.h.
using Harness = fakes::WorldHarness;

const StepReport& step(const RunReport& r, const std::string& name) {
  return fakes::step_named(r, name);
}

}  // namespace

TEST_CASE("runner: steps run in order and cleanup undoes them newest first") {
  Harness h;
  auto r = h.run(R"(
steps:
  - change: {id: a}
  - change: {id: b}
  - check: {}
  - change: {id: c}
)");
  CHECK(r.exit_code == 0);
  CHECK(h.world.log == Strings{"do a", "do b", "check check-3", "do c", "undo c", "undo b", "undo a"});
  REQUIRE(r.cleanup.undos.size() == 3);
  CHECK(r.cleanup.undos[0].summary == "undo c");
  CHECK(r.cleanup.clean());
  CHECK(h.journal.pending().empty());
}

TEST_CASE("runner: a second cleanup does nothing") {
  Harness h;
  auto r = h.run("steps:\n  - change: {id: a}\n  - change: {id: b}\n");
  CHECK(r.cleanup.undos.size() == 2);
  Runner again(h.registry, h.fake.system, h.journal, h.reporter);
  auto second = again.cleanup("test", "cleanup");
  CHECK(second.undos.empty());
  CHECK(h.world.log == Strings{"do a", "do b", "undo b", "undo a"});
}

TEST_CASE("runner: a failing step stops the run and what was built is undone") {
  Harness h;
  auto r = h.run(R"(
steps:
  - change: {id: a}
  - change: {id: b}
  - name: bad
    check: {outcome: fail}
  - change: {id: c}
)");
  CHECK(r.exit_code == 1);
  CHECK(step(r, "bad").status == StepStatus::Failed);
  CHECK(step(r, "bad").failures == Strings{"expected ok, got fail"});
  CHECK(step(r, "bad").message == "told to fail");
  CHECK(step(r, "change-4").status == StepStatus::NotRun);
  CHECK(h.world.log == Strings{"do a", "do b", "check bad", "undo b", "undo a"});
}

TEST_CASE("runner: expected failures and timeouts pass, unexpected outcomes fail") {
  Harness h;
  auto r = h.run(R"(
steps:
  - {name: f, check: {outcome: fail}, expect: fail}
  - {name: t, check: {outcome: timeout}, expect: timeout}
  - {name: f2, check: {outcome: ok}, expect: {outcome: fail, value: 0}}
)");
  CHECK(step(r, "f").status == StepStatus::Passed);
  CHECK(step(r, "t").status == StepStatus::Passed);
  CHECK(step(r, "f2").status == StepStatus::Failed);
  CHECK(step(r, "f2").failures == Strings{"expected fail, got ok"});
  CHECK(r.exit_code == 1);
}

TEST_CASE("runner: a step error exits 3 and is not retried") {
  Harness h;
  auto r = h.run("steps:\n  - change: {id: a}\n  - {name: e, check: {outcome: error}, retries: 3, delay: 1s}\n");
  CHECK(r.exit_code == 3);
  CHECK(step(r, "e").status == StepStatus::Error);
  CHECK(step(r, "e").attempts == 1);
  CHECK(step(r, "e").message == "told to err");
  CHECK(h.world.log.back() == "undo a");
}

TEST_CASE("runner: fact matchers decide the step") {
  Harness h;
  auto r = h.run(R"(
steps:
  - {name: ok, check: {value: 7}, expect: {value: "> 5", text: "~ ^ACT"}}
  - {name: bad, check: {value: 7}, expect: {value: ">= 100", text: "DOWN", attempt: 1}}
)");
  CHECK(step(r, "ok").status == StepStatus::Passed);
  const auto& bad = step(r, "bad");
  CHECK(bad.status == StepStatus::Failed);
  REQUIRE(bad.failures.size() == 2);
  CHECK(bad.failures[0].find("fact value") == 0);
  CHECK(bad.failures[1].find("fact text") == 0);
  CHECK(bad.facts.at("value") == 7);
}

TEST_CASE("runner: a fact the step did not report is a failure that names what it did report") {
  Harness h;
  // The loader refuses undeclared facts, so reach the runner's check with a
  // fact that is declared but missing: `check` with outcome error reports none.
  auto sc = h.load("steps:\n  - {name: c, check: {}, expect: {value: 0}}\n");
  sc.steps[0].expect.facts[0].fact = "nonesuch";
  Runner runner(h.registry, h.fake.system, h.journal, h.reporter);
  auto r = runner.run(sc);
  REQUIRE(r.steps[0].failures.size() == 1);
  CHECK(r.steps[0].failures[0] == "fact nonesuch was not reported (reported: attempt, text, value)");
}

TEST_CASE("runner: retries until the expectation holds, a late pass is flaky") {
  Harness h;
  auto r = h.run("steps:\n  - {name: s, check: {pass_on_attempt: 3}, retries: 4, delay: 2s}\n");
  CHECK(step(r, "s").status == StepStatus::Flaky);
  CHECK(step(r, "s").attempts == 3);
  CHECK(h.fake.clock.waits == std::vector<Duration>{Duration(2000), Duration(2000)});
  CHECK(r.exit_code == 0);

  Harness h2;
  auto r2 = h2.run("steps:\n  - {name: s, check: {pass_on_attempt: 3}, retries: 1}\n");
  CHECK(step(r2, "s").status == StepStatus::Failed);
  CHECK(step(r2, "s").attempts == 2);
  CHECK(r2.exit_code == 1);
}

TEST_CASE("runner: a step that outlives its timeout ends as timeout") {
  Harness h;
  auto r = h.run(R"(
steps:
  - {name: long, sleep: {duration: 10s}, timeout: 1s, expect: timeout}
  - {name: unexpected, sleep: {duration: 10s}, timeout: 500ms}
)");
  CHECK(step(r, "long").status == StepStatus::Passed);
  CHECK(step(r, "long").outcome == Outcome::Timeout);
  CHECK(step(r, "long").facts.at("slept_ms") == 1000);
  CHECK(step(r, "long").duration == Duration(1000));
  CHECK(step(r, "unexpected").status == StepStatus::Failed);
  CHECK(step(r, "unexpected").outcome == Outcome::Timeout);
  CHECK(r.exit_code == 1);
}

TEST_CASE("runner: the engine's default timeout applies to kinds that declare none") {
  Harness h;
  RunOptions o;
  o.default_timeout = Duration(3000);
  // `sleep` declares none (its duration is the wait); `check` takes the default.
  auto r = h.run("steps:\n  - {name: s, sleep: {duration: 1m}}\n", o);
  CHECK(step(r, "s").status == StepStatus::Passed);
  CHECK(step(r, "s").facts.at("slept_ms") == 60000);
}

TEST_CASE("runner: revert undoes one step now and reports the facts its undo saw") {
  Harness h;
  h.world.packets = 5;
  auto r = h.run(R"(
steps:
  - change: {id: a}
  - {name: block, fault: {id: f}}
  - change: {id: b}
  - {name: lift, revert: block, expect: {packets: "> 0"}}
)");
  CHECK(r.exit_code == 0);
  CHECK(step(r, "lift").facts.at("packets") == 5);
  CHECK(h.world.log == Strings{"do a", "do f", "do b", "undo f", "undo b", "undo a"});

  Harness h2;
  h2.world.packets = 0;
  auto r2 =
      h2.run("steps:\n  - {name: block, fault: {id: f}}\n  - {name: lift, revert: block, expect: {packets: '> 0'}}\n");
  CHECK(step(r2, "lift").status == StepStatus::Failed);
  CHECK(r2.exit_code == 1);
}

TEST_CASE("runner: a revert whose undo fails is an error, and the change stays for cleanup") {
  Harness h;
  h.world.fail_undo = {"f"};
  auto r = h.run("steps:\n  - {name: block, fault: {id: f}}\n  - {name: lift, revert: block}\n");
  CHECK(step(r, "lift").status == StepStatus::Error);
  CHECK(step(r, "lift").message.find("cannot undo f") != std::string::npos);
  CHECK(r.cleanup.undos.size() == 1);
  CHECK_FALSE(r.cleanup.clean());
  CHECK(r.exit_code == 3);
}

TEST_CASE("runner: cleanup that leaves something behind exits 4 and keeps it in the journal") {
  Harness h;
  h.world.fail_undo = {"b"};
  auto r = h.run("steps:\n  - change: {id: a}\n  - change: {id: b}\n  - change: {id: c}\n");
  CHECK(r.exit_code == 4);
  REQUIRE(r.cleanup.undos.size() == 3);
  CHECK_FALSE(r.cleanup.undos[1].ok);
  CHECK(r.cleanup.undos[1].error == "cannot undo b: Device or resource busy");
  // Every other undo still ran.
  CHECK(h.world.log == Strings{"do a", "do b", "do c", "undo c", "undo a"});
  REQUIRE(h.journal.pending().size() == 1);
  CHECK(h.journal.pending()[0].args.at("id") == "b");

  // Residue wins over a failed expectation.
  Harness h2;
  h2.world.fail_undo = {"a"};
  auto r2 = h2.run("steps:\n  - change: {id: a}\n  - check: {outcome: fail}\n");
  CHECK(r2.exit_code == 4);
}

TEST_CASE("runner: variables read facts of earlier steps at run time") {
  Harness h;
  auto r = h.run(R"(
steps:
  - {name: first, check: {value: 42}}
  - {name: second, check: {value: "{{steps.first.value}}"}, expect: {value: 42}}
)");
  CHECK(step(r, "second").status == StepStatus::Passed);
  CHECK(step(r, "second").facts.at("value") == 42);
}

TEST_CASE("runner: a fact reference to a step that did not run says so") {
  Harness h;
  RunOptions o;
  o.skip = {"slow"};
  auto r = h.run(R"(
steps:
  - {name: first, check: {value: 1}}
  - {name: slow, check: {value: 2}, tags: [slow]}
  - {name: skipped, check: {value: "{{steps.slow.value}}"}}
)",
                 o);
  CHECK(step(r, "skipped").message == "test.yaml:5:21: step 'slow' did not report fact 'value' (it did not run)");
  CHECK(step(r, "skipped").status == StepStatus::Error);
}

TEST_CASE("runner: a run-time value of the wrong type is a step error with its place") {
  Harness h;
  auto r = h.run(R"(
steps:
  - {name: first, check: {value: 1}}
  - {name: second, sleep: {duration: "{{steps.first.text}}"}}
)");
  CHECK(step(r, "second").status == StepStatus::Error);
  CHECK(step(r, "second").message.rfind("test.yaml:4:", 0) == 0);
  CHECK(r.exit_code == 3);
}

TEST_CASE("runner: --skip and --only choose tagged steps, untagged steps always run") {
  Harness h;
  RunOptions o;
  o.skip = {"slow"};
  auto r = h.run(R"(
steps:
  - {name: base, check: {}}
  - {name: slow, check: {}, tags: [slow]}
  - {name: fast, check: {}, tags: fast}
)",
                 o);
  CHECK(step(r, "slow").status == StepStatus::Skipped);
  CHECK(step(r, "fast").status == StepStatus::Passed);

  Harness h2;
  RunOptions o2;
  o2.only = {"slow"};
  auto r2 = h2.run(R"(
steps:
  - {name: base, check: {}}
  - {name: slow, check: {}, tags: [slow]}
  - {name: fast, check: {}, tags: fast}
  - {name: f, fault: {id: x}, tags: fast}
  - {revert: f}
)",
                   o2);
  CHECK(step(r2, "base").status == StepStatus::Passed);
  CHECK(step(r2, "slow").status == StepStatus::Passed);
  CHECK(step(r2, "fast").status == StepStatus::Skipped);
  CHECK(step(r2, "revert-5").status == StepStatus::Skipped);
  CHECK(h2.world.log == Strings{"check base", "check slow"});
  CHECK(r2.exit_code == 0);
}

TEST_CASE("runner: --keep leaves the lab up for a later cleanup") {
  Harness h;
  RunOptions o;
  o.keep = true;
  auto r = h.run("steps:\n  - change: {id: a}\n  - change: {id: b}\n", o);
  CHECK(r.cleanup.kept);
  CHECK(r.exit_code == 0);
  CHECK(h.world.log == Strings{"do a", "do b"});
  CHECK(h.journal.pending().size() == 2);
  Runner later(h.registry, h.fake.system, h.journal, h.reporter);
  CHECK(later.cleanup("test", "cleanup").clean());
  CHECK(h.world.log == Strings{"do a", "do b", "undo b", "undo a"});
}

TEST_CASE("runner: Ctrl-C during a step stops the run, cleans up and exits 130") {
  Harness h;
  auto r = h.run("steps:\n  - change: {id: a}\n  - {name: i, interrupt: {}}\n  - change: {id: b}\n");
  CHECK(r.interrupted);
  CHECK(r.exit_code == 130);
  CHECK(step(r, "i").status == StepStatus::Interrupted);
  CHECK(step(r, "change-3").status == StepStatus::NotRun);
  CHECK(h.world.log == Strings{"do a", "interrupt", "undo a"});
  CHECK_FALSE(h.fake.interrupt.requested());  // cleared so cleanup could wait
}

TEST_CASE("runner: Ctrl-C during a wait cuts the wait short") {
  Harness h;
  h.fake.clock.interrupt_at(h.fake.clock.start() + std::chrono::seconds(3));
  auto r = h.run("steps:\n  - change: {id: a}\n  - {name: s, sleep: {duration: 1h}}\n");
  CHECK(r.exit_code == 130);
  CHECK(step(r, "s").status == StepStatus::Interrupted);
  CHECK(step(r, "s").duration == Duration(3000));
  CHECK(h.world.log == Strings{"do a", "undo a"});
}

TEST_CASE("runner: Ctrl-C during a retry delay stops the retries") {
  Harness h;
  h.fake.clock.interrupt_at(h.fake.clock.start() + std::chrono::seconds(1));
  auto r = h.run("steps:\n  - {name: s, check: {pass_on_attempt: 5}, retries: 9, delay: 10s}\n");
  CHECK(step(r, "s").status == StepStatus::Interrupted);
  CHECK(step(r, "s").attempts == 1);
  CHECK(r.exit_code == 130);
}

TEST_CASE("runner: a step with netns runs inside it and its undo goes back there") {
  Harness h;
  h.fake.netns.existing = {"lab"};
  auto r = h.run("steps:\n  - {change: {id: a}, netns: lab}\n  - {change: {id: b}}\n");
  CHECK(r.exit_code == 0);
  // The step, then its undo (no kind of this scenario looks for marked leftovers).
  CHECK(h.fake.netns.log == Strings{"enter lab", "leave lab", "enter lab", "leave lab"});
  CHECK(h.world.netns_at_undo == "lab");  // a is undone last
  CHECK(h.fake.kernel.netns.empty());
}

TEST_CASE("runner: a missing namespace is a step error, an undo in a vanished one is done") {
  Harness h;
  auto r = h.run("steps:\n  - {name: x, check: {}, netns: nowhere}\n");
  CHECK(step(r, "x").status == StepStatus::Error);
  CHECK(step(r, "x").message.find("'nowhere' does not exist") != std::string::npos);
  CHECK(r.exit_code == 3);

  Harness h2;
  h2.fake.netns.existing = {"lab"};
  RunOptions keep;
  keep.keep = true;
  h2.run("steps:\n  - {change: {id: a}, netns: lab}\n", keep);
  h2.fake.netns.existing.clear();  // the namespace went, and took the change along
  Runner later(h2.registry, h2.fake.system, h2.journal, h2.reporter);
  auto c = later.cleanup("test", "cleanup");
  CHECK(c.clean());
  CHECK(h2.journal.pending().empty());
  CHECK(h2.world.log == Strings{"do a"});
}

TEST_CASE("runner: exit codes") {
  RunReport r;
  r.preclean.phase = "preclean";
  r.cleanup.phase = "cleanup";
  CHECK(exit_code_for(r) == 0);
  r.steps.push_back(StepReport{.status = StepStatus::Flaky});
  CHECK(exit_code_for(r) == 0);
  r.steps.push_back(StepReport{.status = StepStatus::Failed});
  CHECK(exit_code_for(r) == 1);
  r.cleanup.undos.push_back(UndoReport{.ok = false});
  CHECK(exit_code_for(r) == 4);
  r.steps.push_back(StepReport{.status = StepStatus::Error});
  CHECK(exit_code_for(r) == 3);
  r.interrupted = true;
  CHECK(exit_code_for(r) == 130);
}

TEST_CASE("runner: preclean replays what a killed run left in the journal") {
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("rxerun-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Harness h;
  {
    // A run that dies (SIGKILL) after two changes: its journal stays.
    auto j = Journal::open(dir.string(), "test");
    REQUIRE(j);
    RunOptions keep;
    keep.keep = true;
    Runner runner(h.registry, h.fake.system, *j, h.reporter, keep);
    runner.run(h.load("steps:\n  - change: {id: a}\n  - change: {id: b}\n"));
  }
  // A torn last line, as a crash in the middle of a write leaves it.
  { std::ofstream(dir / "test.journal", std::ios::app) << R"({"do":3,"step":"x","kind":"chan)"; }

  auto j = Journal::open(dir.string(), "test");
  REQUIRE(j);
  CHECK(j->cut_torn_line());
  CHECK(j->damaged().empty());
  REQUIRE(j->pending().size() == 2);
  h.world.log.clear();
  Runner next(h.registry, h.fake.system, *j, h.reporter);
  auto r = next.run(h.load("steps:\n  - change: {id: c}\n"));
  REQUIRE(r.preclean.undos.size() == 2);
  CHECK(h.world.log == Strings{"undo b", "undo a", "do c", "undo c"});
  CHECK(r.exit_code == 0);
  CHECK_FALSE(fs::exists(dir / "test.journal"));
  fs::remove_all(dir);
}

TEST_CASE("runner: a preclean that cannot undo a leftover stops the run with exit 3") {
  Harness h;
  h.world.fail_undo = {"old"};
  RunOptions keep;
  keep.keep = true;
  h.run("steps:\n  - change: {id: old}\n", keep);
  auto r = h.run("steps:\n  - change: {id: new}\n");
  CHECK_FALSE(r.preclean.clean());
  CHECK(r.steps[0].status == StepStatus::NotRun);
  CHECK(r.exit_code == 3);
}

TEST_CASE("runner: cleanup undoes batchable changes together, after the others") {
  Harness h;
  auto r = h.run(R"(
steps:
  - batch: {id: a}
  - change: {id: x}
  - batch: {id: b}
  - change: {id: y}
  - batch: {id: c}
)");
  CHECK(r.exit_code == 0);
  CHECK(h.world.log == Strings{"do a", "do x", "do b", "do y", "do c", "undo y", "undo x", "batch undo c b a"});
  CHECK(r.cleanup.undos.size() == 5);
  CHECK(h.journal.pending().empty());
}

TEST_CASE("runner: a failing batch falls back to one undo at a time and keeps only the failure") {
  Harness h;
  h.world.fail_undo = {"b"};
  auto r = h.run("steps:\n  - batch: {id: a}\n  - batch: {id: b}\n  - batch: {id: c}\n");
  CHECK(r.exit_code == 4);
  CHECK(h.world.log == Strings{"do a", "do b", "do c", "undo c", "undo a"});
  REQUIRE(h.journal.pending().size() == 1);
  CHECK(h.journal.pending()[0].args.at("id") == "b");
}

TEST_CASE("runner: batches are kept apart by namespace") {
  Harness h;
  h.fake.netns.existing = {"lab"};
  auto r = h.run("steps:\n  - batch: {id: a}\n  - {batch: {id: b}, netns: lab}\n  - batch: {id: c}\n");
  CHECK(r.exit_code == 0);
  CHECK(h.world.log == Strings{"do a", "do b", "do c", "batch undo c a", "batch undo b"});
}

TEST_CASE("runner: revert of a batchable step undoes it at once") {
  Harness h;
  auto r = h.run("steps:\n  - {name: one, batch: {id: a}}\n  - batch: {id: b}\n  - revert: one\n");
  CHECK(r.exit_code == 0);
  CHECK(h.world.log == Strings{"do a", "do b", "undo a", "batch undo b"});
}

TEST_CASE("runner: preclean removes marked leftovers in every namespace the scenario names") {
  Harness h;
  h.fake.netns.existing = {"lab", "other"};
  h.world.leftovers[""] = {"vA"};
  h.world.leftovers["lab"] = {"vB"};
  h.world.leftovers["other"] = {"not-ours-to-look-at"};
  auto r = h.run("steps:\n  - marked: {}\n  - {check: {}, netns: lab}\n  - {check: {}, netns: gone}\n");
  REQUIRE(r.preclean.undos.size() == 2);
  CHECK(r.preclean.undos[0].summary == "removed vA (rxerun:test)");
  CHECK(r.preclean.undos[1].summary == "removed vB (rxerun:test)");
  CHECK(h.world.leftovers["other"].size() == 1);
  // The step in the missing namespace errs; the preclean did not.
  CHECK(r.preclean.clean());
}

TEST_CASE("runner: preclean asks only the kinds the scenario uses") {
  Harness h;
  h.world.leftovers[""] = {"vA"};
  h.world.throw_preclean = true;  // were it asked, the run would stop
  auto r = h.run("steps:\n  - change: {id: a}\n");
  CHECK(r.preclean.undos.empty());
  CHECK(r.exit_code == 0);
  CHECK(h.world.leftovers[""].size() == 1);
}

TEST_CASE("runner: a kind that throws after its change is that step's error, and cleanup undoes the change") {
  Harness h;
  auto r = h.run("steps:\n  - change: {id: a}\n  - explode: {id: x}\n  - change: {id: b}\n");
  CHECK(r.exit_code == 3);
  CHECK(step(r, "explode-2").status == StepStatus::Error);
  CHECK(step(r, "explode-2").message == "step kind 'explode' failed unexpectedly: exploded after its change");
  CHECK(step(r, "change-3").status == StepStatus::NotRun);
  CHECK(h.world.log == Strings{"do a", "undo x", "undo a"});
  CHECK(r.cleanup.clean());
  CHECK(h.journal.pending().empty());
}

TEST_CASE("runner: an undo that throws is residue with its message, the other undos still run") {
  Harness h;
  h.world.throw_undo = {"b"};
  auto r = h.run("steps:\n  - change: {id: a}\n  - change: {id: b}\n  - batch: {id: c}\n");
  CHECK(r.exit_code == 4);
  REQUIRE(r.cleanup.undos.size() == 3);
  CHECK_FALSE(r.cleanup.undos[0].ok);
  CHECK(r.cleanup.undos[0].summary == "undo b");
  CHECK(r.cleanup.undos[0].error.starts_with(
      "cannot read this journal entry's args (written by another rxerun version, or edited?): "));
  CHECK(h.world.log == Strings{"do a", "do b", "do c", "undo a", "batch undo c"});
  REQUIRE(h.journal.pending().size() == 1);
  CHECK(h.journal.pending()[0].args.at("id") == "b");
}

TEST_CASE("runner: a batch undo that throws falls back to one undo at a time") {
  Harness h;
  h.world.throw_undo = {"b"};
  auto r = h.run("steps:\n  - batch: {id: a}\n  - batch: {id: b}\n");
  CHECK(r.exit_code == 4);
  // The batch threw on b; a was then undone on its own, b stays.
  CHECK(h.world.log == Strings{"do a", "do b", "undo a"});
  REQUIRE(h.journal.pending().size() == 1);
  CHECK(h.journal.pending()[0].args.at("id") == "b");
}

TEST_CASE("runner: a preclean that throws is reported and stops the run before any step") {
  Harness h;
  h.world.throw_preclean = true;
  auto r = h.run("steps:\n  - marked: {}\n  - change: {id: a}\n");
  CHECK(r.exit_code == 3);
  REQUIRE_FALSE(r.preclean.undos.empty());
  CHECK(r.preclean.undos[0].error == "preclean of step kind 'marked' failed unexpectedly: preclean exploded");
  CHECK(h.world.log.empty());
}

namespace {
// A reporter with a bug: it throws on every step it is told about.
struct ThrowingReporter final : Reporter {
  int calls = 0;
  void step_finished(const StepReport&) override {
    ++calls;
    throw std::runtime_error("cannot format a fact");
  }
};
}  // namespace

TEST_CASE("runner: a reporter that throws is silenced, the run and its cleanup go on") {
  Harness h;
  ThrowingReporter bad;
  Runner runner(h.registry, h.fake.system, h.journal, bad);
  auto r = runner.run(h.load("steps:\n  - change: {id: a}\n  - change: {id: b}\n"));
  CHECK(r.exit_code == 0);
  CHECK(bad.calls == 1);  // silenced after the first exception
  CHECK(h.world.log == Strings{"do a", "do b", "undo b", "undo a"});
}

TEST_CASE("runner: Ctrl-C during cleanup finishes the undo in progress and leaves the rest in the journal") {
  Harness h;
  RunOptions keep;
  keep.keep = true;
  h.run("steps:\n  - change: {id: a}\n  - change: {id: b}\n  - change: {id: c}\n", keep);
  h.world.log.clear();
  h.world.interrupt_undo = {"b"};
  Runner cleaner(h.registry, h.fake.system, h.journal, h.reporter);
  auto c = cleaner.cleanup("test", "cleanup");
  CHECK(c.interrupted);
  CHECK_FALSE(c.clean());
  CHECK(h.world.log == Strings{"undo c", "undo b"});
  REQUIRE(h.journal.pending().size() == 1);
  CHECK(h.journal.pending()[0].args.at("id") == "a");
  REQUIRE(c.undos.size() == 3);
  CHECK(c.undos[2].summary == "undo a");
  CHECK(c.undos[2].error == "not undone: interrupted (it stays in the journal for `rxerun cleanup`)");

  // The next cleanup finishes the job.
  h.fake.interrupt.clear();
  h.world.interrupt_undo.clear();
  CHECK(cleaner.cleanup("test", "cleanup").clean());
  CHECK(h.world.log == Strings{"undo c", "undo b", "undo a"});
}

TEST_CASE("runner: Ctrl-C during a run's cleanup stops it after the undo in progress, exit 130") {
  Harness h;
  h.world.interrupt_undo = {"b"};
  auto r = h.run("steps:\n  - change: {id: a}\n  - change: {id: b}\n  - change: {id: c}\n");
  CHECK(r.exit_code == 130);
  CHECK(r.cleanup.interrupted);
  CHECK(h.world.log == Strings{"do a", "do b", "do c", "undo c", "undo b"});
  REQUIRE(h.journal.pending().size() == 1);
}

TEST_CASE("runner: an undo receives what identifies the object its change made") {
  Harness h;
  RunOptions keep;
  keep.keep = true;
  h.run("steps:\n  - change: {id: a}\n", keep);
  REQUIRE(h.journal.pending().size() == 1);
  REQUIRE(h.journal.identify(h.journal.pending()[0].seq, {{"ifindex", 7}}));
  nlohmann::json seen;
  Registry probe({Kind{h.registry.find("change")->spec, nullptr,
                       [&](const nlohmann::json& args, UndoContext&) -> Result<nlohmann::json> {
                         seen = args;
                         return nlohmann::json::object();
                       }}});
  Runner cleaner(probe, h.fake.system, h.journal, h.reporter);
  CHECK(cleaner.cleanup("test", "cleanup").clean());
  CHECK(seen == nlohmann::json{{"id", "a"}, {"identity", {{"ifindex", 7}}}});
}

TEST_CASE("runner: a fact that is not UTF-8 is shown escaped, and refused as a parameter, never thrown on") {
  Harness h;
  h.world.text = "v\xe9";
  auto r = h.run("steps:\n  - {name: c, check: {}}\n  - change: {id: \"{{steps.c.text}}\"}\n");
  CHECK(r.exit_code == 3);
  CHECK(step(r, "c").status == StepStatus::Passed);
  CHECK(step(r, "change-2").status == StepStatus::Error);
  CHECK(step(r, "change-2").message.find("a fact of an earlier step put bytes that are not UTF-8 into 'v\\xe9'") !=
        std::string::npos);
  // The reports carry it without throwing.
  CHECK(to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).find("v\xef\xbf\xbd") !=
        std::string::npos);
  CHECK(to_junit_xml(r).find("v\\xe9") != std::string::npos);
}
