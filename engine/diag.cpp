#include "engine/diag.h"

#include "base/utf8.h"

#include <fmt/format.h>
#include <algorithm>

namespace rxerun {

std::string Diagnostic::to_string() const {
  return fmt::format("{}:{}:{}: {}", file, mark.line, mark.col, message);
}

namespace {

// Levenshtein distance, counting a swap of two neighbours as one edit
// (optimal string alignment): "frist" is one typo away from "first", not two.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::optional<std::string> suggest(std::string_view word, std::span<const std::string> candidates) {
  // Bounded so that a huge unknown key (a fuzzer's, or a pasted blob) costs nothing.
  constexpr std::size_t kMaxWord = 256;
  if (word.empty() || word.size() > kMaxWord) return std::nullopt;
  const std::size_t threshold = std::max<std::size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = threshold + 1;
  for (const std::string& c : candidates) {
    if (c.size() > word.size() + threshold || word.size() > c.size() + threshold) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  auto s = suggest(word, candidates);
  return s ? fmt::format(" (did you mean '{}'?)", *s) : std::string();
}

}  // namespace rxerun
