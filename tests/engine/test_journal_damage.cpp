// A journal that is damaged, or holds entries an undo cannot read, is
// replayed as far as it can be and the rest is reported as residue: observed
// through the fake kinds (tests/fakes/fake_kinds.h) and a journal file in a
// temporary directory.

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/journal.h"
#include "engine/report.h"
#include "engine/runner.h"
#include "fakes/fake_kinds.h"
#include "fakes/harness.h"

using namespace rxerun;
using Strings = std::vector<std::string>;
namespace fs = std::filesystem;

namespace {

using Harness = fakes::WorldHarness;

struct TempStateDir {
  fs::path dir = fs::temp_directory_path() / ("rxerun-damage-" + std::to_string(::getpid()));
  TempStateDir() {
    fs::remove_all(dir);
    fs::create_directory(dir);
    fs::permissions(dir, fs::perms::owner_all);
  }
  ~TempStateDir() { fs::remove_all(dir); }
  void write(const std::string& text) const { std::ofstream(dir / "test.journal") << text; }
  std::vector<fs::path> kept() const {
    std::vector<fs::path> out;
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().filename().string().rfind("test.journal.damaged-", 0) == 0) out.push_back(f.path());
    return out;
  }
};

std::string change(long seq, const std::string& id, const std::string& kind = "change") {
  return R"({"do":)" + std::to_string(seq) + R"(,"step":"s)" + std::to_string(seq) + R"(","kind":")" + kind +
         R"(","summary":"undo )" + id + R"(","args":{"id":")" + id + R"("}})" + "\n";
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const UndoReport* failed(const CleanupReport& c, const std::string& summary) {
  for (const auto& u : c.undos)
    if (!u.ok && u.summary == summary) return &u;
  return nullptr;
}

}  // namespace

TEST_CASE("journal damage: cleanup undoes the good entries, lists the bad lines and keeps the file aside") {
  TempStateDir state;
  const std::string text = change(1, "a") + "{\"do\":2,\"step\":\"s2\",\"kind\":\"change\",\"ar\n" +  // torn mid-file
                           change(3, "b") + "not json at all\n" + change(4, "c") + R"({"undone":4})" + "\n";
  state.write(text);
  Harness h;
  {
    auto j = Journal::open(state.dir.string(), "test");
    REQUIRE(j);
    Runner runner(h.registry, h.fake.system, *j, h.reporter);
    auto c = runner.cleanup("test", "cleanup");
    CHECK(h.world.log == Strings{"undo b", "undo a"});
    CHECK_FALSE(c.clean());
    const UndoReport* damage = failed(c, "journal lines 2, 4");
    REQUIRE(damage);
    CHECK(damage->kind == "journal");
    const auto kept = state.kept();
    REQUIRE(kept.size() == 1);
    CHECK(damage->error ==
          "unreadable: whatever they recorded was not undone (check by hand); the journal is kept as " +
              kept[0].string());
    CHECK(damage->journal_text ==
          "line 2 (not JSON): {\"do\":2,\"step\":\"s2\",\"kind\":\"change\",\"ar\n"
          "line 4 (not JSON): not json at all");
    // Kept as it was, with what this cleanup wrote; no journal left in its place.
    CHECK(read_all(kept[0]).rfind(text, 0) == 0);
    CHECK_FALSE(fs::exists(state.dir / "test.journal"));
    // The JSON report carries the lines too.
    RunReport report;
    report.cleanup = c;
    const auto json = to_json(report);
    CHECK(json["cleanup"]["undos"].back()["journal"] == damage->journal_text);
  }
  // Told once: the next cleanup has nothing to do.
  auto j = Journal::open(state.dir.string(), "test");
  REQUIRE(j);
  Runner runner(h.registry, h.fake.system, *j, h.reporter);
  auto c = runner.cleanup("test", "cleanup");
  CHECK(c.clean());
  CHECK(c.undos.empty());
  CHECK(h.world.log == Strings{"undo b", "undo a"});
}

TEST_CASE("journal damage: an entry an undo cannot read is residue with its text, the others are undone once") {
  TempStateDir state;
  state.write(change(1, "a") + R"({"do":2,"step":"s2","kind":"change","summary":"undo ?","args":{"ID":"x"}})" + "\n" +
              change(3, "b", "teleport") + R"({"do":4,"step":"s4","summary":"no kind","args":{"id":"d"}})" + "\n" +
              R"({"do":5,"step":"s5","kind":"change","summary":"undo e","args":{"id":5}})" + "\n" + change(6, "f"));
  Harness h;
  for (int round = 1; round <= 2; ++round) {
    CAPTURE(round);
    auto j = Journal::open(state.dir.string(), "test");
    REQUIRE(j);
    Runner runner(h.registry, h.fake.system, *j, h.reporter);
    auto c = runner.cleanup("test", "cleanup");
    CHECK(h.world.log == Strings{"undo f", "undo a"});  // never twice
    CHECK(c.undos.size() == (round == 1 ? 6u : 4u));
    const UndoReport* args = failed(c, "undo ?");
    REQUIRE(args);
    CHECK(args->error.find("cannot read this journal entry's args") == 0);
    CHECK(args->error.find("key 'id' not found") != std::string::npos);
    CHECK(args->journal_text == R"(line 2: {"do":2,"step":"s2","kind":"change","summary":"undo ?","args":{"ID":"x"}})");
    const UndoReport* unknown = failed(c, "undo b");
    REQUIRE(unknown);
    CHECK(unknown->error.find("no undo for step kind 'teleport'") == 0);
    CHECK(unknown->journal_text.find(R"("kind":"teleport")") != std::string::npos);
    const UndoReport* no_kind = failed(c, "no kind");
    REQUIRE(no_kind);
    CHECK(no_kind->error ==
          "cannot read this journal entry: \"kind\" is missing (written by another rxerun version, "
          "or edited?)");
    const UndoReport* typed = failed(c, "undo e");
    REQUIRE(typed);
    CHECK(typed->error.find("type must be string, but is number") != std::string::npos);
    CHECK_FALSE(c.clean());
    CHECK(j->pending().size() == 4);
    CHECK(state.kept().empty());  // nothing damaged: the journal stays where it is
  }
}

TEST_CASE("journal damage: a batch undo that cannot read one entry still undoes the others") {
  TempStateDir state;
  state.write(change(1, "a", "batch") + R"({"do":2,"step":"s2","kind":"batch","summary":"undo ?","args":{}})" + "\n" +
              change(3, "c", "batch"));
  Harness h;
  auto j = Journal::open(state.dir.string(), "test");
  REQUIRE(j);
  Runner runner(h.registry, h.fake.system, *j, h.reporter);
  auto c = runner.cleanup("test", "cleanup");
  CHECK(h.world.log == Strings{"undo c", "undo a"});
  REQUIRE(failed(c, "undo ?"));
  CHECK(j->pending().size() == 1);
}

TEST_CASE("journal damage: a run's preclean reports it and stops, and the run after that is clean") {
  TempStateDir state;
  state.write(change(1, "old") + "\x01garbage\n");
  Harness h;
  {
    auto j = Journal::open(state.dir.string(), "test");
    REQUIRE(j);
    Runner runner(h.registry, h.fake.system, *j, h.reporter);
    auto r = runner.run(h.load("steps:\n  - change: {id: new}\n"));
    CHECK(r.exit_code == 3);
    CHECK(r.steps[0].status == StepStatus::NotRun);
    REQUIRE(failed(r.preclean, "journal line 2"));
    CHECK(failed(r.preclean, "journal line 2")->journal_text == "line 2 (not JSON): \\x01garbage");
    CHECK(h.world.log == Strings{"undo old"});
  }
  auto j = Journal::open(state.dir.string(), "test");
  REQUIRE(j);
  Runner runner(h.registry, h.fake.system, *j, h.reporter);
  auto r = runner.run(h.load("steps:\n  - change: {id: new}\n"));
  CHECK(r.exit_code == 0);
  CHECK(h.world.log == Strings{"undo old", "do new", "undo new"});
  CHECK(state.kept().size() == 1);
}

TEST_CASE("journal damage: a torn last line and then a new run: not damage, nothing swallowed") {
  TempStateDir state;
  Harness h;
  {
    auto j = Journal::open(state.dir.string(), "test");
    REQUIRE(j);
    RunOptions keep;
    keep.keep = true;
    Runner runner(h.registry, h.fake.system, *j, h.reporter, keep);
    CHECK(runner.run(h.load("steps:\n  - change: {id: a}\n")).exit_code == 0);
  }
  { std::ofstream(state.dir / "test.journal", std::ios::app) << R"({"do":2,"step":"x","kind":"chan)"; }
  {
    auto j = Journal::open(state.dir.string(), "test");
    REQUIRE(j);
    RunOptions keep;
    keep.keep = true;
    Runner runner(h.registry, h.fake.system, *j, h.reporter, keep);
    auto r = runner.run(h.load("steps:\n  - change: {id: b}\n"));
    CHECK(r.exit_code == 0);
    CHECK(r.preclean.clean());
  }
  auto j = Journal::open(state.dir.string(), "test");
  REQUIRE(j);
  CHECK(j->damaged().empty());
  REQUIRE(j->pending().size() == 1);
  CHECK(j->pending()[0].args == nlohmann::json{{"id", "b"}});
  Runner runner(h.registry, h.fake.system, *j, h.reporter);
  CHECK(runner.cleanup("test", "cleanup").clean());
  CHECK(h.world.log == Strings{"do a", "undo a", "do b", "undo b"});
  CHECK(state.kept().empty());
}

TEST_CASE("journal damage: the terminal shows the journal's text under what was left") {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* out = ::open_memstream(&buf, &len);
  REQUIRE(out);
  {
    TerminalReporter t(out, {});
    t.undo_finished(UndoReport{.step = "s",
                               .kind = "change",
                               .summary = "undo x",
                               .ok = false,
                               .error = "boom",
                               .journal_text = "line 3: {\"do\":2}"});
  }
  std::fclose(out);
  const std::string text(buf, len);
  std::free(buf);
  CHECK(text.find("boom\n        journal line 3: {\"do\":2}\n") != std::string::npos);
}
