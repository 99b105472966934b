#include "base/size.h"

#include <array>
#include <charconv>
#include <utility>

namespace rxerun {

namespace {

constexpr std::array<std::pair<std::string_view, unsigned>, 5> kBinaryUnits{{
    {"B", 0},
    {"KiB", 10},
    {"MiB", 20},
    {"GiB", 30},
    {"TiB", 40},
}};

bool decimal_unit(std::string_view unit) {
  for (std::string_view u : {"k", "K", "KB", "kB", "M", "MB", "G", "GB", "T", "TB", "Ki", "Mi", "Gi", "Ti"})
    if (unit == u) return true;
  return false;
}

std::optional<std::uint64_t> refuse(SizeProblem* problem, SizeProblem why) {
  if (problem) *problem = why;
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text, SizeProblem* problem) {
  if (problem) *problem = SizeProblem::None;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 20) return refuse(problem, digits ? SizeProblem::TooLarge : SizeProblem::NotASize);
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, n);
  if (ec != std::errc() || end != text.data() + digits) return refuse(problem, SizeProblem::TooLarge);
  const std::string_view unit = text.substr(digits);
  for (const auto& [name, shift] : kBinaryUnits) {
    if (unit != name && !(unit.empty() && shift == 0)) continue;
    if (n > (kMaxSize >> shift)) return refuse(problem, SizeProblem::TooLarge);
    return n << shift;
  }
  return refuse(problem, decimal_unit(unit) ? SizeProblem::DecimalUnit : SizeProblem::NotASize);
}

std::string format_size(std::uint64_t bytes) {
  for (auto it = kBinaryUnits.rbegin(); it != kBinaryUnits.rend(); ++it) {
    const std::uint64_t unit = std::uint64_t{1} << it->second;
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + std::string(it->first);
  }
  return std::to_string(bytes) + "B";
}

}  // namespace rxerun
