#include "base/duration.h"

#include <fmt/format.h>
#include <array>
#include <cstdint>

#include "base/strings.h"

namespace rxerun {

namespace {

struct Unit {
  std::string_view suffix;
  std::int64_t ms;
};

// Longest suffix first so that "ms" is not read as "m" followed by junk.
constexpr std::array<Unit, 4> kUnits{{{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}}};

constexpr std::int64_t kMaxMs = kMaxDuration.count();

// Digits to an integer, nullopt past `limit`.
std::optional<std::int64_t> digits_value(std::string_view digits, std::int64_t limit) {
  std::int64_t v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > limit) return std::nullopt;
  }
  return v;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text, bool* too_long) {
  if (too_long) *too_long = false;
  auto too_big = [&]() -> std::optional<Duration> {
    if (too_long) *too_long = true;
    return std::nullopt;
  };
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  const std::string_view whole = text.substr(0, i);
  std::string_view frac;
  if (i < text.size() && text[i] == '.') {
    const std::size_t start = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    frac = text.substr(start, i - start);
    if (frac.empty()) return std::nullopt;  // "1.s"
  }
  if (whole.empty()) return std::nullopt;  // "", "s", ".5s", "-1s"
  const std::string_view suffix = text.substr(i);
  for (const Unit& unit : kUnits) {
    if (suffix != unit.suffix) continue;
    // Exact decimal arithmetic: "1.5s" is 1500ms, "0.0005s" is not a whole millisecond.
    auto w = digits_value(whole, kMaxMs);
    if (!w || *w > kMaxMs / unit.ms) return too_big();
    std::int64_t ms = *w * unit.ms;
    if (!frac.empty()) {
      if (frac.size() > 9) return std::nullopt;  // finer than any unit needs
      std::int64_t scale = 1;
      for (std::size_t k = 0; k < frac.size(); ++k) scale *= 10;
      const std::int64_t f = *digits_value(frac, scale);
      if ((f * unit.ms) % scale != 0) return std::nullopt;
      ms += f * unit.ms / scale;
    }
    if (ms > kMaxMs) return too_big();
    return Duration(ms);
  }
  return std::nullopt;
}

namespace {

// `ms` in `unit` as a decimal without trailing zeros, or "" when not exact
// within three decimals.
std::string spell(std::int64_t ms, const Unit& unit) {
  const std::int64_t whole = ms / unit.ms;
  const std::int64_t rest = ms % unit.ms;
  if (rest == 0) return fmt::format("{}{}", whole, unit.suffix);
  if ((rest * 1000) % unit.ms != 0) return "";
  std::string frac = fmt::format("{:03}", rest * 1000 / unit.ms);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return fmt::format("{}.{}{}", whole, frac, unit.suffix);
}

}  // namespace

std::string format_duration(Duration d) {
  const std::int64_t ms = d.count();
  if (ms < 0) return fmt::format("{}ms", ms);  // not a scenario value; shown as is
  if (ms == 0) return "0s";
  if (ms < 1000) return fmt::format("{}ms", ms);
  // Among the exact spellings in s, m and h, the shortest; the larger unit on a tie.
  std::string best;
  for (const Unit& unit : kUnits) {
    if (unit.ms == 1) continue;
    std::string s = spell(ms, unit);
    if (!s.empty() && (best.empty() || s.size() <= best.size())) best = std::move(s);
  }
  return best.empty() ? fmt::format("{}ms", ms) : best;
}

std::string format_seconds(Duration d) {
  return fmt::format("{:.2f}s", to_seconds(d));
}

}  // namespace rxerun
