#pragma once
// UTF-8, as rxerun checks it: what users write must be UTF-8 text; what the
// kernel and tools hand back is bytes, escaped wherever it is shown.

#include <cstddef>
#include <optional>
#include <string>
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

// "\xNN": how a byte is shown where it cannot be shown as it is.
std::string hex_escape(unsigned char byte);

// Text shown to people from bytes that may not be UTF-8 (tool output, kernel
// names, hostile input): every valid character goes to
// `on_char(code_point, its bytes, out)`, which appends it as the place needs
// (XML, one terminal line, a diagnostic); every byte that is not UTF-8 is
// appended as hex_escape(byte), so it is seen rather than passed on.
template <class OnChar>
std::string escape_utf8(std::string_view text, OnChar on_char) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char c = decode_utf8(text, i);
    if (c.length == 0) {
      out += hex_escape(static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    on_char(c.code_point, text.substr(i, c.length), out);
    i += c.length;
  }
  return out;
}

// Text for XML: markup characters as references; characters XML 1.0 forbids
// (most C0 controls) and bytes that are not UTF-8 become a visible "\xNN"
// (or "\uXXXX") instead of vanishing, so the reader still sees that
// something odd was there. In attributes (`attribute`), newlines and tabs
// are written as references, which survive attribute normalisation.
std::string xml_escape(std::string_view text, bool attribute);

// A user's value as quoted in a message: cut to about `max` bytes (at a UTF-8
// boundary, "..." appended) with control characters escaped, so that a
// diagnostic stays one short line whatever the file holds.
std::string excerpt(std::string_view text, std::size_t max = 60);

}  // namespace rxerun
