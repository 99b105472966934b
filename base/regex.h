#pragma once
// Regular expressions that users write (`~` and `!~` matchers, exec's
// `extract`), searched in texts as long as a program's output. PCRE2 does
// the work: its matching keeps its backtracking on the heap, within limits
// set here, where std::regex recurses once per character of the subject and
// overflows the stack on 64 KiB of output (".*x").
//
// Patterns are Perl/ECMAScript-like (PCRE2 syntax), UTF-8; a subject that
// is not valid UTF-8 (a tool's raw output) is searched as it is, its bad
// bytes matching nothing.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace rxerun {

class Regex {
 public:
  // Longest pattern accepted: a matcher or an extraction, not a program.
  static constexpr std::size_t kMaxPattern = 512;

  // Error: "invalid regex '[a-': missing terminating ] for character class
  // at offset 3", or that it is longer than kMaxPattern.
  static Result<Regex> compile(std::string_view pattern);

  // Whether the pattern matches somewhere in `text`. Error: the match
  // needed more work than the limits allow (a pattern that backtracks
  // catastrophically on this text).
  Result<bool> search(std::string_view text) const;

  // The first capture group of the first match; nullopt when nothing
  // matches, or when the first group took no part in the match. Error as
  // search().
  Result<std::optional<std::string>> first_group(std::string_view text) const;

  // How many capture groups the pattern has.
  int groups() const;
  const std::string& pattern() const { return pattern_; }

 private:
  struct Code;
  Result<bool> match(std::string_view text, std::optional<std::string>* group) const;
  Regex(std::shared_ptr<const Code> code, std::string pattern) : code_(std::move(code)), pattern_(std::move(pattern)) {}
  std::shared_ptr<const Code> code_;
  std::string pattern_;
};

}  // namespace rxerun
