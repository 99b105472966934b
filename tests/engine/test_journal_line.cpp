// The journal's line format on its own (engine/journal_line.h): what the
// reader takes, what is damage, what is torn, and the lines the writer
// makes. tests/engine/test_journal.cpp shows the same through journal files.

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "engine/journal_line.h"

using namespace rxerun;

namespace {

// Reads `lines` (each whole, ended by a newline) with a reader of boot "b1".
JournalContents read_lines(const std::vector<std::string>& lines, const std::string& boot = "b1") {
  JournalReader reader(boot);
  long number = 0;
  for (const auto& l : lines) CHECK(reader.line(l, l.size(), ++number, true));
  return std::move(reader).finish();
}

}  // namespace

TEST_CASE("journal line: entries are taken in order, undone ones dropped, identities joined") {
  const auto read = read_lines({
      R"({"boot":"b1"})",
      R"({"do":1,"kind":"veth","step":"pair","netns":"","summary":"delete veth vA","args":{"name":"vA"},"makes":["link:/vA"]})",
      R"({"do":2,"kind":"address","args":{"cidr":"10.0.0.1/24"},"on":["link:/vA"]})",
      R"({"is":1,"identity":{"ifindex":7}})",
      "",
      R"({"do":3,"kind":"sysctl","args":{}})",
      R"({"undone":[2,9]})",
  });
  CHECK(read.damaged.empty());
  CHECK_FALSE(read.earlier_boot);
  CHECK(read.next_seq == 10);  // past every seq a line uses, "undone" ones too
  REQUIRE(read.pending.size() == 2);
  const auto& pair = read.pending[0];
  CHECK(pair.seq == 1);
  CHECK(pair.line == 2);
  CHECK(pair.step == "pair");
  CHECK(pair.summary == "delete veth vA");
  CHECK(pair.footprint.makes == std::vector<std::string>{"link:/vA"});
  CHECK(pair.identity == nlohmann::json{{"ifindex", 7}});
  CHECK(pair.raw.find(R"("do":1)") != std::string::npos);
  CHECK(read.pending[1].seq == 3);
  CHECK(read.pending[1].line == 6);
}

TEST_CASE("journal line: lines rxerun does not write are damage, each with why and its number") {
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  const auto read = read_lines({
      R"({"do":1,"kind":"k"})",
      "garbage\x01",
      "[1,2]",
      R"({"what":1})",
      R"({"do":0,"kind":"k"})",
      R"({"do":1,"kind":"k"})",
      R"({"is":"x","identity":{}})",
      R"({"is":1,"identity":{"x":1.5}})",
      R"({"undone":[1,"x"]})",
      R"({"boot":7})",
      deep,
  });
  REQUIRE(read.damaged.size() == 10);
  const std::vector<std::string> why = {
      "not JSON",
      "not a JSON object",
      "not a line rxerun writes (no \"do\", \"is\", \"undone\" or \"boot\")",
      "\"do\" is not a sequence number (1 to 2^53)",
      "\"do\" repeats sequence number 1 of line 1",
      "\"is\" is not a sequence number (1 to 2^53)",
      "\"identity\" is not an object of names and integers",
      "\"undone\" holds something that is not a sequence number",
      "\"boot\" is not a string",
      "nested deeper than 64",
  };
  for (std::size_t i = 0; i < why.size(); ++i) {
    CAPTURE(i);
    CHECK(read.damaged[i].number == static_cast<long>(i) + 2);
    CHECK(read.damaged[i].why == why[i]);
  }
  CHECK(read.damaged[0].text == "garbage\\x01");
  // Damage changes nothing: the entry of line 1 is still pending, undone by no one.
  REQUIRE(read.pending.size() == 1);
  CHECK(read.pending[0].seq == 1);
}

TEST_CASE("journal line: an entry whose fields cannot be read is pending, unreadable, trusted with nothing") {
  const auto read = read_lines({
      R"({"do":1,"step":5,"args":{"n":2.5},"on":["link:/vA",3],"makes":["netns:x"]})",
  });
  CHECK(read.damaged.empty());
  REQUIRE(read.pending.size() == 1);
  const auto& e = read.pending[0];
  CHECK(e.unreadable ==
        "\"kind\" is missing; \"step\" is not a string; \"args\" holds a number that is not an integer; \"on\" is not "
        "a list of strings");
  CHECK(e.footprint.on.empty());
  CHECK(e.footprint.makes.empty());
}

TEST_CASE("journal line: a line too long is damage from its start alone") {
  JournalReader reader("b1");
  const std::string start(kShownDamageBytes, 'x');
  CHECK(reader.line(start, kMaxLineBytes + 1, 1, true));
  const auto read = std::move(reader).finish();
  REQUIRE(read.damaged.size() == 1);
  CHECK(read.damaged[0].why == "longer than 8388608 bytes");
  CHECK(read.damaged[0].text == start + "... (8388609 bytes in all)");
}

TEST_CASE("journal line: a last line without its newline is torn unless it is whole") {
  SUBCASE("cut short: torn, neither taken nor damage") {
    JournalReader reader("b1");
    const std::string text = R"({"do":1,"kind":"ve)";
    CHECK_FALSE(reader.line(text, text.size(), 1, false));
    const auto read = std::move(reader).finish();
    CHECK(read.pending.empty());
    CHECK(read.damaged.empty());
  }
  SUBCASE("whole: taken") {
    JournalReader reader("b1");
    const std::string text = R"({"do":1,"kind":"veth"})";
    CHECK(reader.line(text, text.size(), 1, false));
    CHECK(std::move(reader).finish().pending.size() == 1);
  }
  SUBCASE("whole JSON that rxerun does not write: damage") {
    JournalReader reader("b1");
    const std::string text = R"({"what":1})";
    CHECK(reader.line(text, text.size(), 1, false));
    CHECK(std::move(reader).finish().damaged.size() == 1);
  }
  SUBCASE("too long: torn") {
    JournalReader reader("b1");
    CHECK_FALSE(reader.line("{", kMaxLineBytes + 1, 1, false));
    CHECK(std::move(reader).finish().damaged.empty());
  }
}

TEST_CASE(
    "journal line: a journal of another boot is told apart, and without a boot id of its own the reader keeps it") {
  CHECK(read_lines({R"({"boot":"b0"})", R"({"do":1,"kind":"k"})"}).earlier_boot);
  CHECK_FALSE(read_lines({R"({"boot":"b1"})"}).earlier_boot);
  CHECK_FALSE(read_lines({R"({"boot":"b0"})"}, "").earlier_boot);
}

TEST_CASE("journal line: the writer's lines are read back as written") {
  CHECK(identity_line(3, {{"ifindex", 7}}) == R"({"identity":{"ifindex":7},"is":3})");
  CHECK(undone_line(3) == R"({"undone":3})");
  CHECK(undone_line(std::vector<long>{3, 4}) == R"({"undone":[3,4]})");
  CHECK(boot_line("b1") == R"({"boot":"b1"})");
  JournalEntry e{5, "s", "k", "ns", "undo it", {{"n", 1}}, {.on = {"netns:ns"}}};
  e.plugin = "/opt/p.so";
  const auto read = read_lines({boot_line("b1"), entry_line(e), identity_line(5, {{"inode", 9}}), undone_line(4)});
  CHECK(read.damaged.empty());
  REQUIRE(read.pending.size() == 1);
  const auto& back = read.pending[0];
  CHECK(back.seq == 5);
  CHECK(back.step == "s");
  CHECK(back.kind == "k");
  CHECK(back.netns == "ns");
  CHECK(back.summary == "undo it");
  CHECK(back.args == e.args);
  CHECK(back.footprint.on == e.footprint.on);
  CHECK(back.plugin == "/opt/p.so");
  CHECK(back.identity == nlohmann::json{{"inode", 9}});
  CHECK(back.unreadable.empty());
  CHECK(integers_only(nlohmann::json{{"a", {1, 2}}}));
  CHECK_FALSE(integers_only(nlohmann::json{{"a", {1, 2.5}}}));
}
