#include <doctest/doctest.h>

#include "base/size.h"

using namespace rxerun;

TEST_CASE("size: bytes and binary units") {
  CHECK(parse_size("0") == 0u);
  CHECK(parse_size("4096") == 4096u);
  CHECK(parse_size("512B") == 512u);
  CHECK(parse_size("64KiB") == 64u * 1024);
  CHECK(parse_size("64MiB") == 64u * 1024 * 1024);
  CHECK(parse_size("1GiB") == std::uint64_t{1} << 30);
  CHECK(parse_size("2TiB") == std::uint64_t{2} << 40);
  CHECK(parse_size("1024TiB") == kMaxSize);
}

TEST_CASE("size: what is not a size, and why") {
  SizeProblem why = SizeProblem::None;
  for (const char* text : {"", "MiB", "-1", "1.5GiB", "64 MiB", "64mib", "0x10", "64MiBs", "1e3"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_size(text, &why));
    CHECK(why == SizeProblem::NotASize);
  }
  for (const char* text : {"64MB", "1G", "1GB", "10k", "2Ti"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_size(text, &why));
    CHECK(why == SizeProblem::DecimalUnit);
  }
  for (const char* text : {"1025TiB", "99999999999999999999999", "18446744073709551616"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_size(text, &why));
    CHECK(why == SizeProblem::TooLarge);
  }
}

TEST_CASE("size: the shortest exact spelling") {
  CHECK(format_size(0) == "0B");
  CHECK(format_size(1536) == "1536B");
  CHECK(format_size(4096) == "4KiB");
  CHECK(format_size(64u * 1024 * 1024) == "64MiB");
  CHECK(format_size(std::uint64_t{3} << 30) == "3GiB");
  CHECK(format_size(kMaxSize) == "1024TiB");
}
