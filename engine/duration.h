#pragma once
// Durations in scenarios are strings with a unit: "500ms", "2s", "1.5s", "1m", "1h".

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace rxerun {

using Duration = std::chrono::milliseconds;

// nullopt when `text` is not a duration; never throws.
std::optional<Duration> parse_duration(std::string_view text);

// Shortest exact spelling: 1500ms -> "1.5s", 60000ms -> "1m", 250ms -> "250ms".
std::string format_duration(Duration d);

// Seconds with two decimals, for step timings in output ("0.42s").
std::string format_seconds(Duration d);

}  // namespace rxerun
