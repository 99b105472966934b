#pragma once
// Sizes in scenarios are integers (bytes) or strings with a binary unit:
// 4096, "4096", "512B", "64KiB", "64MiB", "1GiB", "2TiB". Decimal units
// (MB, GB) are refused rather than guessed: 64MB could mean either.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rxerun {

// The largest size rxerun takes: 1 PiB, far beyond a lab's file or device,
// and small enough that a size in bytes never overflows what it is added to.
inline constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 50;

// Why a text is not a size, for "must be a size (64MiB, 1GiB), got 'x': WHY".
enum class SizeProblem { None, NotASize, DecimalUnit, TooLarge };

// Bytes; nullopt when `text` is not a size (`problem` then says why). Never throws.
std::optional<std::uint64_t> parse_size(std::string_view text, SizeProblem* problem = nullptr);

// Shortest exact spelling: 67108864 -> "64MiB", 1536 -> "1536B" ("1.5KiB" is no size).
std::string format_size(std::uint64_t bytes);

}  // namespace rxerun
