// Text for the manual page (base/roff.h): nothing in it is read as a roff
// request or escape, and what is not ASCII survives.

#include <doctest/doctest.h>

#include "base/roff.h"

using namespace rxerun;

TEST_CASE("roff: hyphens, backslashes, leading dots and UTF-8 are escaped") {
  CHECK(roff_text("--var KEY=VALUE") == "\\-\\-var KEY=VALUE");
  CHECK(roff_text("a\\b") == "a\\eb");
  CHECK(roff_text(".TH x\n'quoted\nplain .dot") == "\\&.TH x\n\\&'quoted\nplain .dot");
  CHECK(roff_text("rxerun — labs") == "rxerun \\[u2014] labs");
  CHECK(roff_text("café") == "caf\\[u00E9]");
  CHECK(roff_bold("-o") == "\\fB\\-o\\fP");
  CHECK(roff_italic("FILE") == "\\fIFILE\\fP");
}
