// Fact matchers as written in `expect:` ("> 0", "~ ^ACT", a plain value) and
// their evaluation against what a step reported.

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "base/strings.h"
#include "engine/checks.h"
#include "engine/model.h"

namespace rxerun {

namespace {

using Op = Matcher::Op;

struct OpSpelling {
  std::string_view text;
  Op op;
};

// Two-character operators first, so that ">=" is not read as ">" "=...".
constexpr std::array<OpSpelling, 8> kOps{{{"==", Op::Eq},
                                          {"!=", Op::Ne},
                                          {">=", Op::Ge},
                                          {"<=", Op::Le},
                                          {"!~", Op::NoMatch},
                                          {">", Op::Gt},
                                          {"<", Op::Lt},
                                          {"~", Op::Match}}};

// A decimal number as a fact or an operand may spell it: -12, 3.5, 1e6. Not
// hex, inf or nan, which no counter is.
bool looks_numeric(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  const std::size_t digits_start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i == digits_start) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t frac_start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == frac_start) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const std::size_t exp_start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == exp_start) return false;
  }
  return i == s.size();
}

// Long double holds every 64-bit counter exactly, so big counters compare right.
std::optional<long double> as_number(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return static_cast<long double>(v.get<unsigned long long>());
  if (v.is_number_integer()) return static_cast<long double>(v.get<long long>());
  if (v.is_number_float()) return static_cast<long double>(v.get<double>());
  if (!v.is_string()) return std::nullopt;
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > 400 || !looks_numeric(s)) return std::nullopt;
  errno = 0;
  const long double x = std::strtold(s.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(x)) return std::nullopt;
  return x;
}

// How a value compares as text: strings raw, bools true/false, numbers as JSON.
std::string as_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// How a value is shown in a reason: strings quoted, long ones cut.
std::string shown(const nlohmann::json& v) {
  if (v.is_string()) return "\"" + excerpt(v.get_ref<const std::string&>()) + "\"";
  return excerpt(v.dump());
}

bool values_equal(const nlohmann::json& a, const nlohmann::json& b) {
  if (b.is_array())
    return a.is_array() && a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), values_equal);
  auto x = as_number(a);
  auto y = as_number(b);
  if (x && y) return *x == *y;
  return as_text(a) == as_text(b);
}

// The operand of >, >=, <, <= as JSON: an integer when it is one (64-bit
// counters stay exact), else a double.
nlohmann::json number_json(std::string_view text, long double x) {
  if (auto i = exact_integer(text)) return *i;
  return static_cast<double>(x);
}

}  // namespace

std::optional<nlohmann::json> exact_integer(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  long long i = 0;
  if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
      ec == std::errc() && end == text.data() + text.size())
    return i;
  unsigned long long u = 0;
  if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), u);
      ec == std::errc() && end == text.data() + text.size())
    return u;
  return std::nullopt;
}

namespace {

std::optional<Regex> compile(const std::string& pattern, std::string* error) {
  auto compiled = Regex::compile(pattern);
  if (!compiled) {
    *error = compiled.error().message;
    return std::nullopt;
  }
  return std::move(*compiled);
}

std::string_view op_text(Op op) {
  for (const auto& s : kOps)
    if (s.op == op) return s.text;
  return "?";
}

Matcher plain_matcher(const nlohmann::json& written) {
  Matcher m;
  m.op = Op::Eq;
  m.operand = written;
  m.text = written.is_string() ? written.get<std::string>() : written.dump();
  return m;
}

std::optional<Matcher> operator_matcher(const OpSpelling& spelling, std::string_view whole, std::string_view operand,
                                        std::string* error) {
  Matcher m;
  m.op = spelling.op;
  m.text = std::string(whole);
  if (operand.empty()) {
    *error = fmt::format("matcher '{}' has no operand", excerpt(whole));
    return std::nullopt;
  }
  switch (spelling.op) {
    case Op::Eq:
    case Op::Ne: m.operand = std::string(operand); return m;
    case Op::Match:
    case Op::NoMatch:
      m.operand = std::string(operand);
      m.regex = compile(std::string(operand), error);
      if (!m.regex) return std::nullopt;
      return m;
    default: break;
  }
  auto x = as_number(nlohmann::json(std::string(operand)));
  if (!x) {
    *error = fmt::format("matcher '{}': '{}' needs a number, got '{}' (write '== {}' to compare as text)",
                         excerpt(whole), spelling.text, excerpt(operand), excerpt(trim(whole, kBlanks)));
    return std::nullopt;
  }
  m.operand = number_json(operand, *x);
  return m;
}

bool compare(Op op, long double a, long double b) {
  switch (op) {
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    default: return false;
  }
}

}  // namespace

std::optional<Matcher> parse_matcher(const nlohmann::json& written, std::string* error) {
  std::string ignored;
  if (!error) error = &ignored;
  if (written.is_null()) {
    *error = "a matcher needs a value: a plain value, or a string such as \"> 0\" or \"~ REGEX\"";
    return std::nullopt;
  }
  if (written.is_object()) {
    *error = "a matcher is a value, a list of values or a string such as \"> 0\", got a mapping";
    return std::nullopt;
  }
  if (written.is_array()) {  // a list fact, equal item by item
    for (const auto& item : written)
      if (item.is_null() || item.is_array() || item.is_object()) {
        *error = list_matcher_item_error(item.is_null() ? "nothing" : item.is_array() ? "a list" : "a mapping");
        return std::nullopt;
      }
    return plain_matcher(written);
  }
  if (!written.is_string()) return plain_matcher(written);
  const std::string_view whole = written.get_ref<const std::string&>();
  const std::string_view text = trim(whole, kBlanks);
  for (const auto& spelling : kOps) {
    if (text.starts_with(spelling.text))
      return operator_matcher(spelling, text, trim(text.substr(spelling.text.size()), kBlanks), error);
  }
  return plain_matcher(written);
}

std::string list_matcher_item_error(std::string_view got) {
  return fmt::format("a list matcher holds plain values (each item equal to the fact's), got {} in it", got);
}

std::optional<std::string> Matcher::check(const nlohmann::json& actual) const {
  // A plain value is shown as a value ("DOWN" is not "UP"); an operator as written.
  const bool written_with_op = op != Op::Eq || text.starts_with("==");
  switch (op) {
    case Op::Eq:
      if (values_equal(actual, operand)) return std::nullopt;
      return fmt::format("{} is not {}", shown(actual), written_with_op ? excerpt(text) : shown(operand));
    case Op::Ne:
      if (!values_equal(actual, operand)) return std::nullopt;
      return fmt::format("{} is not {}", shown(actual), excerpt(text));
    case Op::Match:
    case Op::NoMatch: {
      std::string error;
      const std::optional<Regex> compiled = regex ? regex : compile(as_text(operand), &error);
      if (!compiled) return error;
      const auto found = compiled->search(as_text(actual));
      if (!found) return fmt::format("{} against {}: {}", shown(actual), excerpt(text), found.error().message);
      if (*found == (op == Op::Match)) return std::nullopt;
      return fmt::format("{} {} {}", shown(actual), op == Op::Match ? "does not match" : "matches", excerpt(text));
    }
    default: break;
  }
  auto a = as_number(actual);
  auto b = as_number(operand);
  if (!a) return fmt::format("{} is not a number ({} {})", shown(actual), op_text(op), as_text(operand));
  if (!b) return fmt::format("the operand of {} is not a number", excerpt(text));
  if (compare(op, *a, *b)) return std::nullopt;
  return fmt::format("{} is not {} {}", shown(actual), op_text(op), as_text(operand));
}

}  // namespace rxerun
