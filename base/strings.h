#pragma once
// Small string vocabulary every layer may use.

#include <string>
#include <string_view>
#include <vector>

namespace rxerun {

// `word` as one word of a POSIX shell: as it is when it holds only
// characters no shell treats specially, else in single quotes (a quote
// inside written '\''). What `plan` prints and error messages show can be
// pasted into a shell and splits back into the same argv.
std::string shell_quote(std::string_view word);

// The argv as one command line, each word quoted by shell_quote().
std::string shell_join(const std::vector<std::string>& argv);

// ASCII white space, as isspace() in the C locale: what trim() takes off by
// default.
inline constexpr std::string_view kWhiteSpace = " \t\n\r\v\f";
// Spaces and tabs only: for text where a line break is not padding but an
// error the caller reports (a name inside {{ }}, a matcher).
inline constexpr std::string_view kBlanks = " \t";

// `text` without the characters of `chars` at its start and end: the blanks a
// file, a tool or a person wrote around a value are not part of it. A view
// into `text`, so it must not outlive it.
std::string_view trim(std::string_view text, std::string_view chars = kWhiteSpace);

// The parts with `separator` between each two ("a, b, c"); an empty part
// still gets its separators, so that the count of parts shows.
std::string join(const std::vector<std::string>& parts, std::string_view separator);

// Whether `part` occurs in `text` (std::string::contains is C++23).
bool contains(std::string_view text, std::string_view part);

// An ASCII decimal digit, whatever the locale (std::isdigit asks it).
constexpr bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The words of `text` between runs of white space, as `>>` reads them.
std::vector<std::string> split_words(std::string_view text);

// The last `n` lines of `text` that hold more than whitespace, each trimmed,
// joined by `separator`: a tool's reason in one line of an error message.
std::string last_lines_of(std::string_view text, int n, std::string_view separator);

}  // namespace rxerun
