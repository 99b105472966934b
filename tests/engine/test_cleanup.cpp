// Cleanup (engine/cleanup.h) on its own, without a Runner: one entry undone
// now (as `revert` does), the whole journal replayed and reported, and a
// second replay that finds nothing to do; an undo's errno given once.
// tests/engine/test_cleanup_riders.cpp and test_journal_damage.cpp show the
// rest through the runner.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/cleanup.h"
#include "fakes/harness.h"

using namespace rxerun;

namespace {

// Notes what reaches it.
class NotingReporter final : public Reporter {
 public:
  void cleanup_started(std::string_view phase, std::size_t pending) override {
    notes.push_back(std::string(phase) + " of " + std::to_string(pending));
  }
  void undo_finished(const UndoReport& u) override { notes.push_back("undid " + u.summary); }
  void cleanup_finished(const CleanupReport& c) override {
    notes.push_back(c.phase + " done, " + std::to_string(c.undos.size()) + " undos");
  }
  std::vector<std::string> notes;
};

}  // namespace

TEST_CASE("cleanup: one entry undone now goes unreported, the replay reports the rest, and a second finds nothing") {
  fakes::Harness h;
  auto kept = h.run_keep(R"(
steps:
  - veth: {name: vA, peer: vB}
    name: pair
  - address: {dev: vA, cidr: 10.1.0.1/24}
    name: addr
)");
  REQUIRE(kept.exit_code == 0);
  REQUIRE(h.journal.pending().size() == 2);
  NotingReporter noted;
  Cleanup cleanup(h.registry, h.fake.system, h.journal, noted, "test");

  const JournalEntry addr = h.journal.pending().back();
  nlohmann::json facts = nlohmann::json::object();
  const UndoReport undone = cleanup.undo(addr, &facts);
  CHECK(undone.ok);
  CHECK(undone.step == "addr");
  CHECK(noted.notes.empty());  // `revert` reports the step, not its undos
  REQUIRE(h.journal.pending().size() == 1);
  CHECK(h.journal.pending().front().step == "pair");

  const CleanupReport first = cleanup.run("cleanup");
  CHECK(first.clean());
  REQUIRE(first.undos.size() == 1);
  CHECK(first.undos[0].step == "pair");
  CHECK(noted.notes ==
        std::vector<std::string>{"cleanup of 1", "undid " + first.undos[0].summary, "cleanup done, 1 undos"});
  CHECK(h.journal.pending().empty());
  CHECK(h.fake.links.links[""].count("vA") == 0);

  const CleanupReport second = Cleanup(h.registry, h.fake.system, h.journal, noted, "test").run("cleanup");
  CHECK(second.clean());
  CHECK(second.undos.empty());
}

TEST_CASE("cleanup: an undo's error gives its errno's text once") {
  fakes::Harness h;
  h.fake.links.add_host_link("", {.name = "eth0", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  REQUIRE(h.run_keep("steps:\n  - address: {dev: eth0, cidr: 10.1.0.1/24}\n").exit_code == 0);
  NotingReporter noted;
  auto cleanup_error = [&](const char* message) {
    h.fake.kernel.fail("links.remove_address", EBUSY, "", 1, 0, message);
    const CleanupReport c = Cleanup(h.registry, h.fake.system, h.journal, noted, "test").run("cleanup");
    REQUIRE(c.undos.size() == 1);
    return c.undos[0].error;
  };
  SUBCASE("a message that ends with it, as sys/'s do") {
    CHECK(cleanup_error("cannot remove 10.1.0.1/24: Device or resource busy") ==
          "cannot remove 10.1.0.1/24: Device or resource busy");
  }
  SUBCASE("a message without it") {
    CHECK(cleanup_error("cannot remove 10.1.0.1/24") == "cannot remove 10.1.0.1/24: Device or resource busy");
  }
}
