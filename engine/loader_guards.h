#pragma once
// Checks on a scenario's text before yaml-cpp sees it: encoding, and a bound
// on nesting (yaml-cpp recurses once per level, which a crafted file turns
// into a stack overflow).

#include <optional>
#include <string>
#include <string_view>

#include "engine/diag.h"

namespace rxerun::loading {

// yaml-cpp's own guard allows ~2000 levels; real scenarios nest a handful.
inline constexpr int kMaxNesting = 64;

// Aliases let a small file expand to an exponential tree; every walk of the
// document stops past this many nodes.
inline constexpr long kMaxNodes = 200'000;

// Binary data, invalid UTF-8 and control characters, at the first bad byte.
std::optional<Diagnostic> check_encoding(std::string_view text, const std::string& file);

// Where nesting first passes kMaxNesting (a cheap over-approximation of
// YAML's nesting: block levels from indentation, flow levels from brackets
// outside quotes and comments), if it does.
std::optional<Mark> nesting_too_deep(std::string_view text);

}  // namespace rxerun::loading
