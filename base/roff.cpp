#include "base/roff.h"

#include <fmt/format.h>

namespace rxerun {

namespace {

// The code point of the UTF-8 sequence at `text[i]`, and its length; a byte
// that starts no valid sequence stands for itself (U+FFFD would hide it).
std::pair<char32_t, std::size_t> roff_code_point(std::string_view text, std::size_t i) {
  const auto byte = static_cast<unsigned char>(text[i]);
  const std::size_t length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  if (length == 1 || i + length > text.size()) return {byte, 1};
  char32_t cp = byte & (0x7f >> length);
  for (std::size_t k = 1; k < length; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
  return {cp, length};
}

}  // namespace

std::string roff_text(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      const auto [cp, length] = roff_code_point(text, i);
      out += fmt::format("\\[u{:04X}]", static_cast<std::uint32_t>(cp));
      i += length;
      continue;
    } else {
      out += c;
    }
    ++i;
  }
  return out;
}

std::string roff_bold(std::string_view text) {
  return "\\fB" + roff_text(text) + "\\fP";
}

std::string roff_italic(std::string_view text) {
  return "\\fI" + roff_text(text) + "\\fP";
}

}  // namespace rxerun
