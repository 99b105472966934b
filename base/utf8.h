#pragma once
// UTF-8, as rxerun checks it: what users write must be UTF-8 text; what the
// kernel and tools hand back is bytes, escaped wherever it is shown.

#include <cstddef>
#include <optional>
#include <string_view>

namespace rxerun {

// One character of UTF-8 text: its code point and the bytes it took.
struct Utf8Char {
  char32_t code_point = 0;
  std::size_t length = 0;  // 0: not a valid sequence
};

// The character whose UTF-8 sequence starts at text[i] (i < text.size()), or
// length 0 when the bytes there are not one: truncated, a stray
// continuation byte, an overlong form, a UTF-16 surrogate, past U+10FFFF.
// The reports escape such bytes one by one.
Utf8Char decode_utf8(std::string_view text, std::size_t i);

// Length of the UTF-8 sequence that starts at text[i], or 0 when it is not
// one (as decode_utf8()).
std::size_t utf8_length(std::string_view text, std::size_t i);

// The offset of the first byte that does not start a valid sequence, or
// nullopt when all of `text` is UTF-8.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace rxerun
