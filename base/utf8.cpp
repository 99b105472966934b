#include "base/utf8.h"

#include <cstdio>

namespace rxerun {

Utf8Char decode_utf8(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  std::size_t length = 0;
  char32_t min = 0;  // below it the sequence is overlong: a shorter one says the same
  char32_t cp = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, min = 0x80, cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, min = 0x800, cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, cp = lead & 0x07;
  } else {
    return {};
  }
  if (i + length > text.size()) return {};
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return {};
  return {cp, length};
}

std::size_t utf8_length(std::string_view text, std::size_t i) {
  return decode_utf8(text, i).length;
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string hex_escape(unsigned char byte) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return {'\\', 'x', kDigits[byte >> 4], kDigits[byte & 0xf]};
}

namespace {

// XML 1.0 "Char": anything else makes the whole file unparsable.
bool xml_char(char32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

// "\uXXXX": a character XML cannot hold, shown.
std::string unicode_escape(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  return buf;
}

}  // namespace

std::string xml_escape(std::string_view s, bool attribute) {
  return escape_utf8(s, [attribute](char32_t cp, std::string_view bytes, std::string& out) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\r': out += "&#13;"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      default:
        if (!xml_char(cp)) {
          out += cp < 0x100 ? hex_escape(static_cast<unsigned char>(cp)) : unicode_escape(cp);
        } else {
          out.append(bytes);
        }
    }
  });
}

std::string excerpt(std::string_view text, std::size_t max) {
  std::size_t cut = text.size();
  if (cut > max) {
    cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  }
  std::string out = escape_utf8(text.substr(0, cut), [](char32_t cp, std::string_view bytes, std::string& o) {
    if (cp == '\n')
      o += "\\n";
    else if (cp == '\t')
      o += "\\t";
    else if (cp < 0x20 || cp == 0x7f)
      o += hex_escape(static_cast<unsigned char>(cp));
    else
      o.append(bytes);
  });
  if (cut < text.size()) out += "...";
  return out;
}

}  // namespace rxerun
