#pragma once
// Diagnostics name the place in the scenario file, the way a compiler does:
// FILE:LINE:COL: message.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"

namespace rxerun {

struct Mark {
  int line = 1;  // 1-based
  int col = 1;   // 1-based
};

struct Diagnostic {
  std::string file;
  Mark mark;
  std::string message;

  std::string to_string() const;  // "FILE:LINE:COL: message"
};

// Thrown by the loader only where it cannot go on; collected otherwise.
using Diagnostics = std::vector<Diagnostic>;

// The name `word` most likely meant among `candidates`: a synonym people
// write for it (protocol -> proto, namespace -> netns: a small table in
// diag.cpp), else the closest by edit distance when close enough to be a
// misspelling (distance <= max(1, len/3)), else a candidate that holds the
// word or that the word holds (dur -> duration), both 3 bytes or longer.
std::optional<std::string> suggest(std::string_view word, std::span<const std::string> candidates);

// " (did you mean 'x'?)" or "" — appended to unknown-key/kind messages.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

}  // namespace rxerun
