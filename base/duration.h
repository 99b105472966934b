#pragma once
// Durations in scenarios are strings with a unit: "500ms", "2s", "1.5s", "1m", "1h".

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "rxerun/duration.h"

namespace rxerun {

// The longest duration rxerun reads or computes: a hundred years (876000h).
// Far beyond any lab, and short enough that a deadline of now plus this, in
// the nanoseconds of std::chrono::steady_clock, can never overflow.
inline constexpr Duration kMaxDuration = std::chrono::hours(876000);

// nullopt when `text` is not a duration; never throws. `too_long` (when
// given) is set when `text` is spelled as one but exceeds kMaxDuration.
std::optional<Duration> parse_duration(std::string_view text, bool* too_long = nullptr);

// Budgets summed from a scenario's durations (timeout x attempts + delays)
// saturate at kMaxDuration instead of overflowing; negative inputs count
// as zero (no budget is negative).
constexpr Duration saturating_add(Duration a, Duration b) {
  const auto x = std::max<Duration::rep>(a.count(), 0), y = std::max<Duration::rep>(b.count(), 0);
  const auto max = kMaxDuration.count();
  return Duration(x >= max || y >= max - x ? max : x + y);
}
constexpr Duration saturating_mul(Duration a, long long n) {
  const auto x = std::max<Duration::rep>(a.count(), 0), max = kMaxDuration.count();
  if (n <= 0 || x == 0) return Duration(0);
  return Duration(x >= max || n > max / x ? max : x * n);
}

// now + d on any clock, or the clock's time_point::max() (no deadline) when
// that is past what the clock can represent.
template <class TimePoint>
constexpr TimePoint saturating_deadline(TimePoint now, Duration d) {
  if (d <= Duration::zero()) return now;
  const auto left = TimePoint::max() - now;
  if (std::chrono::duration_cast<Duration>(left) <= d) return TimePoint::max();
  return now + std::chrono::duration_cast<typename TimePoint::duration>(d);
}

// Shortest exact spelling: 1500ms -> "1.5s", 60000ms -> "1m", 250ms -> "250ms".
std::string format_duration(Duration d);

// Seconds with two decimals, for step timings in output ("0.42s").
std::string format_seconds(Duration d);

// The duration in seconds, for reports that write numbers (1500ms -> 1.5).
constexpr double to_seconds(Duration d) {
  return static_cast<double>(d.count()) / 1000.0;
}

// Seconds from `t` to now on the steady clock, for timings that are measured.
inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace rxerun
