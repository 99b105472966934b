// rounded: how a measured value becomes a fact (perftest's rates, the verbs
// check's latencies, every tool pair's durations), in one place.

#include <doctest/doctest.h>

#include "steps/common/traffic.h"

using rxerun::steps::rounded;

TEST_CASE("steps.traffic: rounded keeps `decimals` places and makes a whole number an integer") {
  CHECK(rounded(15.0649, 2) == 15.06);
  CHECK(rounded(15.065001, 2) == 15.07);
  CHECK(rounded(0.0038551, 6) == 0.003855);
  CHECK(rounded(-1.234, 1) == -1.2);
  CHECK(rounded(0.4, 3) == 0.4);
  CHECK(rounded(0.4, 3).is_number_float());
  // Whole numbers read as integers: "bytes: 4096", not 4096.0.
  CHECK(rounded(2.0, 2).is_number_integer());
  CHECK(rounded(2.0, 2) == 2);
  CHECK(rounded(1.996, 2) == 2);
  CHECK(rounded(1.996, 2).is_number_integer());
  CHECK(rounded(0.0004, 3) == 0);
  CHECK(rounded(0.0004, 3).is_number_integer());
  // Past what a double counts exactly it stays a double.
  CHECK(rounded(1e16, 0).is_number_float());
}
