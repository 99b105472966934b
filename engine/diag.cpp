#include "engine/diag.h"

#include "base/utf8.h"

#include <fmt/format.h>
#include <algorithm>
#include <vector>

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

// Words people write for a name rxerun spells otherwise (other tools', or
// plain English), each with the names it may mean, in order of preference:
// the first one among the candidates is the suggestion.
struct Synonym {
  std::string_view word;
  std::vector<std::string_view> names;
};
const std::vector<Synonym>& synonyms() {
  static const std::vector<Synonym> kSynonyms{
      {"protocol", {"proto"}},
      {"retry", {"retries"}},
      {"attempts", {"retries"}},
      {"namespace", {"netns"}},
      {"ns", {"netns"}},
      {"interface", {"dev", "netdev"}},
      {"iface", {"dev", "netdev"}},
      {"device", {"dev", "netdev"}},
      {"ifname", {"dev", "netdev"}},
      {"destination", {"dst", "to"}},
      {"dest", {"dst", "to"}},
      {"target", {"to", "dst"}},
      {"source", {"src", "from"}},
      {"gateway", {"via"}},
      {"gw", {"via"}},
      {"prefix", {"cidr"}},
      {"ip", {"cidr", "addr", "to"}},
      {"direction", {"hook"}},
      {"chain", {"hook"}},
      {"latency", {"delay"}},
      {"packet_loss", {"loss"}},
      {"command", {"shell", "argv"}},
      {"cmd", {"shell", "argv"}},
      {"args", {"argv"}},
      {"environment", {"env"}},
      {"status", {"state"}},
      {"iters", {"iterations"}},
      {"packets", {"count"}},
      {"time", {"duration"}},
      {"kernel_version", {"kernel"}},
  };
  return kSynonyms;
}

std::optional<std::string> synonym_of(std::string_view word, std::span<const std::string> candidates) {
  for (const Synonym& s : synonyms()) {
    if (s.word != word) continue;
    for (std::string_view name : s.names)
      if (auto it = std::find(candidates.begin(), candidates.end(), name); it != candidates.end()) return *it;
  }
  return std::nullopt;
}

// A candidate that holds the word, or that the word holds ("dur" ->
// "duration", "gid_idx" has no such one, "server_addr" -> "server"), both
// at least 3 bytes long; of several, the nearest in length.
std::optional<std::string> containing(std::string_view word, std::span<const std::string> candidates) {
  constexpr std::size_t kMinPart = 3;
  if (word.size() < kMinPart) return std::nullopt;
  std::optional<std::string> best;
  std::size_t best_gap = std::string::npos;
  for (const std::string& c : candidates) {
    if (c.size() < kMinPart) continue;
    if (c.find(word) == std::string::npos && word.find(c) == std::string_view::npos) continue;
    const std::size_t gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (gap < best_gap) {
      best_gap = gap;
      best = c;
    }
  }
  return best;
}

}  // namespace

std::optional<std::string> suggest(std::string_view word, std::span<const std::string> candidates) {
  // Bounded so that a huge unknown key (a fuzzer's, or a pasted blob) costs nothing.
  constexpr std::size_t kMaxWord = 256;
  if (word.empty() || word.size() > kMaxWord) return std::nullopt;
  if (auto s = synonym_of(word, candidates)) return s;
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
  return best ? best : containing(word, candidates);
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  auto s = suggest(word, candidates);
  return s ? fmt::format(" (did you mean '{}'?)", *s) : std::string();
}

}  // namespace rxerun
