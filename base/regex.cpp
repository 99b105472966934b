#include "base/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/utf8.h"

namespace rxerun {

namespace {

// Bounds on one match: backtracking steps and the heap PCRE2 may take for
// it. Far above what a sane pattern needs on 64 KiB; a pathological one
// ("(a*)*b") stops with an error instead of taking minutes.
constexpr std::uint32_t kMatchLimit = 10'000'000;
constexpr std::uint32_t kHeapLimitKiB = 64 * 1024;

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

struct Regex::Code {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  ~Code() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

Result<Regex> Regex::compile(std::string_view pattern) {
  if (pattern.size() > kMaxPattern)
    return make_error("regex '" + excerpt(pattern) + "' is too complex: longer than " + std::to_string(kMaxPattern) +
                      " characters");
  int code = 0;
  PCRE2_SIZE offset = 0;
  auto compiled = std::make_shared<Code>();
  compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                 PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &offset, nullptr);
  if (!compiled->code)
    return make_error("invalid regex '" + excerpt(pattern) + "': " + pcre2_message(code) + " at offset " +
                      std::to_string(offset));
  compiled->context = pcre2_match_context_create(nullptr);
  if (!compiled->context) return make_error("out of memory compiling regex '" + excerpt(pattern) + "'");
  pcre2_set_match_limit(compiled->context, kMatchLimit);
  pcre2_set_heap_limit(compiled->context, kHeapLimitKiB);
  return Regex(std::move(compiled), std::string(pattern));
}

int Regex::groups() const {
  std::uint32_t n = 0;
  pcre2_pattern_info(code_->code, PCRE2_INFO_CAPTURECOUNT, &n);
  return static_cast<int>(n);
}

// Runs one match; on a match, sets *group to the first capture group (when
// asked and when that group took part).
Result<bool> Regex::match(std::string_view text, std::optional<std::string>* group) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), pcre2_match_data_free);
  if (!data) return make_error("out of memory matching regex '" + excerpt(pattern_) + "'");
  const int r = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, data.get(),
                            code_->context);
  if (r == PCRE2_ERROR_NOMATCH) return false;
  if (r < 0)
    return make_error("matching regex '" + excerpt(pattern_) + "' failed: " + pcre2_message(r) +
                      " (a pattern that backtracks too much on this text?)");
  if (group) {
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    if (r >= 2 && ovector[2] != PCRE2_UNSET) *group = std::string(text.substr(ovector[2], ovector[3] - ovector[2]));
  }
  return true;
}

Result<bool> Regex::search(std::string_view text) const {
  return match(text, nullptr);
}

Result<std::optional<std::string>> Regex::first_group(std::string_view text) const {
  std::optional<std::string> group;
  auto matched = match(text, &group);
  if (!matched) return matched.error();
  return group;
}

}  // namespace rxerun
