// shell_quote and shell_join: what `plan` and error messages print must split
// back into the argv it came from (tests/e2e/plan_quoting.sh checks that
// with a real shell-words parser). trim, join and contains: the one copy
// every layer uses.

#include <doctest/doctest.h>

#include "base/strings.h"

using namespace rxerun;

TEST_CASE("base.strings: shell_quote quotes only what needs it") {
  CHECK(shell_quote("vA") == "vA");
  CHECK(shell_quote("net.ipv4.tcp_rmem=4096") == "net.ipv4.tcp_rmem=4096");
  CHECK(shell_quote("10.0.0.1/24") == "10.0.0.1/24");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  for (const char* special : {"$x", "`id`", "a;b", "a|b", "a&b", "*", "?", "~", "!", "a\"b", "a\\b", "(x)", "<", ">",
                              "#c", "{a,b}", "a\nb", "a\tb"}) {
    CAPTURE(special);
    const std::string q = shell_quote(special);
    CHECK(q.front() == '\'');
    CHECK(q.back() == '\'');
  }
}

TEST_CASE("base.strings: shell_join joins quoted words with one space") {
  CHECK(shell_join({"ip", "link", "add", "vA"}) == "ip link add vA");
  CHECK(shell_join({"echo", "a b", "it's"}) == "echo 'a b' 'it'\\''s'");
  CHECK(shell_join({""}) == "''");
  CHECK(shell_join({}) == "");
}

TEST_CASE("base.strings: trim takes white space off both ends and nothing inside") {
  CHECK(trim("") == "");
  CHECK(trim(" \t\n\r\v\f") == "");
  CHECK(trim("x") == "x");
  CHECK(trim("  a b  ") == "a b");
  CHECK(trim("\tvalue\n") == "value");
  CHECK(trim("\r\n1\r\n") == "1");
  CHECK(trim("a \n b") == "a \n b");
  // A view into the text itself, not a copy.
  const std::string text = "  kept  ";
  CHECK(trim(text).data() == text.data() + 2);
  // An all-space text gives an empty view, still within the text.
  const std::string_view spaces = "   ";
  CHECK(trim(spaces).data() == spaces.data() + spaces.size());
}

TEST_CASE("base.strings: trim with blanks only keeps line breaks, which callers report") {
  CHECK(trim(" \t name \t", kBlanks) == "name");
  CHECK(trim(" name\n ", kBlanks) == "name\n");
  CHECK(trim("\n", kBlanks) == "\n");
  CHECK(trim(" \t ", kBlanks) == "");
  CHECK(trim("xxaxx", "x") == "a");
}

TEST_CASE("base.strings: join puts the separator between each two parts") {
  CHECK(join({}, ", ") == "");
  CHECK(join({"a"}, ", ") == "a");
  CHECK(join({"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(join({"ip", "route", "add"}, " ") == "ip route add");
  CHECK(join({"a", "b"}, "") == "ab");
  // Empty parts keep their separators: the count of parts shows.
  CHECK(join({"", "b"}, ",") == ",b");
  CHECK(join({"a", "", "c"}, ",") == "a,,c");
  CHECK(join({"", ""}, " / ") == " / ");
}

TEST_CASE("base.strings: contains finds a part anywhere, case and all") {
  CHECK(contains("RDMA_CM_EVENT_REJECTED, error 8", "REJECTED"));
  CHECK(contains("abc", "a"));
  CHECK(contains("abc", "c"));
  CHECK(contains("abc", "abc"));
  CHECK(contains("abc", ""));
  CHECK(contains("", ""));
  CHECK_FALSE(contains("", "a"));
  CHECK_FALSE(contains("abc", "abcd"));
  CHECK_FALSE(contains("rejected", "REJECTED"));
  CHECK_FALSE(contains("blka 7", "blka 8"));
}

TEST_CASE("base.strings: last_lines_of keeps the last lines that say something, trimmed") {
  CHECK(last_lines_of("a\n\n  b  \r\n\t\nc\n", 2, "; ") == "b; c");
  CHECK(last_lines_of("one", 3, " / ") == "one");
  CHECK(last_lines_of("x\ny\nz", 5, " / ") == "x / y / z");
  CHECK(last_lines_of("\n \n", 3, "; ").empty());
}
