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

}  // namespace rxerun
