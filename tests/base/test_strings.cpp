// shell_quote and shell_join: what `plan` and error messages print must split
// back into the argv it came from (tests/e2e/plan_quoting.sh checks that
// with a real shell-words parser).

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
