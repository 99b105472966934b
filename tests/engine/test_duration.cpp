#include <doctest/doctest.h>

#include "engine/duration.h"

using namespace rxerun;
using namespace std::chrono_literals;

TEST_CASE("duration: parses integer and decimal numbers with a unit") {
  CHECK(parse_duration("500ms") == 500ms);
  CHECK(parse_duration("5s") == 5s);
  CHECK(parse_duration("1.5s") == 1500ms);
  CHECK(parse_duration("1m") == 60s);
  CHECK(parse_duration("1h") == 3600s);
  CHECK(parse_duration("0s") == 0ms);
  CHECK(parse_duration("0.25m") == 15s);
  CHECK(parse_duration("2.5ms") == std::nullopt);  // not a whole millisecond
  CHECK(parse_duration("0.001s") == 1ms);
  CHECK(parse_duration("1.250s") == 1250ms);
}

TEST_CASE("duration: rejects what is not a duration") {
  for (const char* bad : {"",     "5",  "s",  "ms",    "-1s",   "+1s",  "1.s",    ".5s",  "1 s", " 1s", "1s ",
                          "1sec", "1d", "1S", "1e3ms", "0x10s", "1,5s", "1.5.5s", "10us", "abc", "5ss"}) {
    CAPTURE(bad);
    CHECK(parse_duration(bad) == std::nullopt);
  }
}

TEST_CASE("duration: rejects overflow") {
  CHECK(parse_duration("99999999999999999999999s") == std::nullopt);
  CHECK(parse_duration("9223372036854775807ms") == std::nullopt);
  CHECK(parse_duration("876000h") == std::chrono::hours(876000));  // a hundred years is the limit
  CHECK(parse_duration("876001h") == std::nullopt);
  CHECK(parse_duration("1.0000000001s") == std::nullopt);
}

TEST_CASE("duration: format_duration picks the shortest exact spelling") {
  CHECK(format_duration(1500ms) == "1.5s");
  CHECK(format_duration(60000ms) == "1m");
  CHECK(format_duration(250ms) == "250ms");
  CHECK(format_duration(0ms) == "0s");
  CHECK(format_duration(1000ms) == "1s");
  CHECK(format_duration(90s) == "90s");
  CHECK(format_duration(3600s) == "1h");
  CHECK(format_duration(5400s) == "90m");
  CHECK(format_duration(1001ms) == "1.001s");
  CHECK(format_duration(61001ms) == "61.001s");
}

TEST_CASE("duration: format and parse round-trip") {
  for (long long ms : {0LL, 1LL, 999LL, 1000LL, 1001LL, 1500LL, 59999LL, 60000LL, 90000LL, 3600000LL, 3601000LL,
                       86400000LL, 123456789LL}) {
    CAPTURE(ms);
    CHECK(parse_duration(format_duration(Duration(ms))) == Duration(ms));
  }
}

TEST_CASE("duration: format_seconds shows two decimals") {
  CHECK(format_seconds(420ms) == "0.42s");
  CHECK(format_seconds(0ms) == "0.00s");
  CHECK(format_seconds(12345ms) == "12.35s");
}
