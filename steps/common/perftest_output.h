#pragma once
// perftest's report (ib_write_bw, ib_read_lat, ...), run with LC_ALL=C:
// the result table under its header line, and the GIDs from the banner.
//
//  #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
//  1024       5000             27.64              22.02               0.022544
//
// perftest's MB is 2^20 bytes (its format factor is 0x100000), so the
// figures are MiB/s. Only the numbers are read; which columns there are
// comes from the header, so the bandwidth, latency and duration variants
// (and columns a later perftest adds) all parse.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace rxerun::steps {

struct PerftestReport {
  // Fact name -> value, in the table's order: bytes, iterations,
  // bw_peak_mib_s, bw_avg_mib_s, msg_rate_mpps; or lat_min_us, lat_max_us,
  // lat_typical_us, lat_avg_us, lat_stdev_us, lat_p99_us, lat_p999_us.
  // Columns without a known name are left out.
  std::vector<std::pair<std::string, double>> figures;
  std::string local_gid;  // "::ffff:10.10.0.2" (inet_ntop's form); "" when the banner has none
  std::string remote_gid;
  // perftest times with the CPU's cycle counter, calibrated against the
  // clock; when that fails ("Correlation coefficient r^2: 0.12 < 0.9",
  // common under software emulation) it prints 0 for every rate and time.
  // Then this holds its line, and only bytes and iterations are in figures.
  std::string uncalibrated;
};

// The first result row. An error saying what is missing when the output has
// no table (the tool failed before it, or this is not perftest's output).
// `err` is perftest's stderr, where it writes the calibration complaint.
Result<PerftestReport> parse_perftest_output(std::string_view out, std::string_view err = {});

// The header's column names: " #bytes #iterations    t_min[usec] ..." ->
// {"#bytes", "#iterations", "t_min[usec]", ...}. A name is words up to one
// that ends in ']' or starts with '#'.
std::vector<std::string> perftest_columns(std::string_view header);

}  // namespace rxerun::steps
