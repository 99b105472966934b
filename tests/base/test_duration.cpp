#include <doctest/doctest.h>

#include <limits>

#include "base/duration.h"

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

TEST_CASE("duration: a number too large for any duration is flagged as too long, without overflow") {
  bool too_long = false;
  CHECK(parse_duration("99999999999999999999h", &too_long) == std::nullopt);
  CHECK(too_long);
  CHECK(parse_duration("876001h", &too_long) == std::nullopt);
  CHECK(too_long);
  CHECK(parse_duration("9223372036854775807ms", &too_long) == std::nullopt);
  CHECK(too_long);
  CHECK(parse_duration("876000h", &too_long) == kMaxDuration);
  CHECK_FALSE(too_long);
  CHECK(parse_duration("5 s", &too_long) == std::nullopt);
  CHECK_FALSE(too_long);  // not too long: not a duration at all
}

TEST_CASE("duration: sums and products of budgets saturate at a hundred years") {
  CHECK(saturating_add(1s, 2s) == 3s);
  CHECK(saturating_add(kMaxDuration, 1ms) == kMaxDuration);
  CHECK(saturating_add(kMaxDuration, kMaxDuration) == kMaxDuration);
  CHECK(saturating_add(Duration::max(), Duration::max()) == kMaxDuration);
  CHECK(saturating_add(-5s, 2s) == 2s);
  CHECK(saturating_mul(10s, 3) == 30s);
  CHECK(saturating_mul(kMaxDuration, 4) == kMaxDuration);
  CHECK(saturating_mul(kMaxDuration / 2, 2) == kMaxDuration);
  CHECK(saturating_mul(kMaxDuration / 2 + 1ms, 2) == kMaxDuration);
  CHECK(saturating_mul(1ms, std::numeric_limits<long long>::max()) == kMaxDuration);
  CHECK(saturating_mul(Duration::max(), std::numeric_limits<long long>::max()) == kMaxDuration);
  CHECK(saturating_mul(10s, 0) == 0ms);
  CHECK(saturating_mul(10s, -1) == 0ms);
}

TEST_CASE("duration: a deadline past the clock's range is the clock's end, not a wrapped time") {
  using TP = std::chrono::steady_clock::time_point;
  const TP now = TP(std::chrono::hours(24));
  CHECK(saturating_deadline(now, 5s) == now + 5s);
  CHECK(saturating_deadline(now, kMaxDuration) == now + kMaxDuration);  // a hundred years fits in nanoseconds
  CHECK(saturating_deadline(TP::max() - 1s, 5s) == TP::max());
  CHECK(saturating_deadline(TP(std::chrono::hours(24 * 365 * 250)), kMaxDuration) == TP::max());
  CHECK(saturating_deadline(now, Duration::max()) == TP::max());
  CHECK(saturating_deadline(now, 0ms) == now);
}
