// decode_utf8, utf8_length and first_invalid_utf8: one decoder for the
// loader's checks and for the reports, which escape what it refuses byte by
// byte. Invalid: truncated, a stray continuation byte, overlong forms,
// UTF-16 surrogates, past U+10FFFF, lead bytes no UTF-8 uses.

#include <doctest/doctest.h>

#include "base/utf8.h"

using namespace rxerun;

namespace {

// Whether `bytes` decodes at 0 to `cp` in all of its bytes.
bool decodes_to(std::string_view bytes, char32_t cp) {
  const Utf8Char c = decode_utf8(bytes, 0);
  return c.code_point == cp && c.length == bytes.size();
}

bool invalid(std::string_view bytes) {
  return decode_utf8(bytes, 0).length == 0;
}

}  // namespace

TEST_CASE("base.utf8: decode_utf8 reads one code point of each length") {
  CHECK(decodes_to("A", U'A'));
  CHECK(decodes_to(std::string_view("\0", 1), U'\0'));
  CHECK(decodes_to("\x7F", 0x7F));
  CHECK(decodes_to("\xC2\x80", 0x80));        // the first two-byte one
  CHECK(decodes_to("\xC3\xA9", 0xE9));        // é
  CHECK(decodes_to("\xDF\xBF", 0x7FF));       // the last two-byte one
  CHECK(decodes_to("\xE0\xA0\x80", 0x800));   // the first three-byte one
  CHECK(decodes_to("\xE4\xB8\xAD", 0x4E2D));  // 中
  CHECK(decodes_to("\xED\x9F\xBF", 0xD7FF));  // just below the surrogates
  CHECK(decodes_to("\xEE\x80\x80", 0xE000));  // just above them
  CHECK(decodes_to("\xEF\xBF\xBF", 0xFFFF));
  CHECK(decodes_to("\xF0\x90\x80\x80", 0x10000));   // the first four-byte one
  CHECK(decodes_to("\xF0\x9F\x98\x80", 0x1F600));   // an emoji
  CHECK(decodes_to("\xF4\x8F\xBF\xBF", 0x10FFFF));  // the last code point
}

TEST_CASE("base.utf8: decode_utf8 decodes at an offset and looks no further than the sequence") {
  const std::string_view text = "a\xC3\xA9z";
  CHECK(decode_utf8(text, 0).length == 1);
  const Utf8Char e = decode_utf8(text, 1);
  CHECK(e.code_point == 0xE9);
  CHECK(e.length == 2);
  CHECK(decode_utf8(text, 3).code_point == U'z');
  CHECK(decode_utf8(text, 2).length == 0);  // the middle of é
}

TEST_CASE("base.utf8: decode_utf8 refuses what is not UTF-8, with length 0") {
  // Truncated: the text ends inside the sequence.
  CHECK(invalid("\xC3"));
  CHECK(invalid("\xE4\xB8"));
  CHECK(invalid("\xF0\x9F\x98"));
  // A continuation byte where a character starts.
  CHECK(invalid("\x80"));
  CHECK(invalid("\xBF"));
  // A lead byte followed by something other than continuation bytes.
  CHECK(invalid("\xC3\x28"));
  CHECK(invalid("\xE4\x41\xAD"));
  CHECK(invalid("\xF0\x9F\xC3\xA9"));
  // Overlong: the same code point in more bytes than it needs.
  CHECK(invalid("\xC0\x80"));
  CHECK(invalid("\xC1\xBF"));
  CHECK(invalid("\xE0\x80\x80"));
  CHECK(invalid("\xE0\x9F\xBF"));
  CHECK(invalid("\xF0\x80\x80\x80"));
  CHECK(invalid("\xF0\x8F\xBF\xBF"));
  // UTF-16 surrogates have no place in UTF-8.
  CHECK(invalid("\xED\xA0\x80"));
  CHECK(invalid("\xED\xBF\xBF"));
  // Past U+10FFFF.
  CHECK(invalid("\xF4\x90\x80\x80"));
  CHECK(invalid("\xF7\xBF\xBF\xBF"));
  // Lead bytes of five- and six-byte forms, and bytes UTF-8 never uses.
  CHECK(invalid("\xF8\x88\x80\x80\x80"));
  CHECK(invalid("\xFC\x84\x80\x80\x80\x80"));
  CHECK(invalid("\xFE"));
  CHECK(invalid("\xFF"));
}

TEST_CASE("base.utf8: utf8_length and first_invalid_utf8 agree with the decoder") {
  CHECK(utf8_length("\xE4\xB8\xAD", 0) == 3);
  CHECK(utf8_length("\xC0\x80", 0) == 0);
  CHECK(first_invalid_utf8("") == std::nullopt);
  CHECK(first_invalid_utf8("plain \xE4\xB8\xAD\xF0\x9F\x98\x80") == std::nullopt);
  CHECK(first_invalid_utf8("ab\xC0\x80") == std::size_t{2});
  CHECK(first_invalid_utf8("\xE4\xB8\xAD\xED\xA0\x80") == std::size_t{3});
  CHECK(first_invalid_utf8("ok\xE4\xB8") == std::size_t{2});
}

TEST_CASE("base.utf8: escape_utf8 hands valid characters on and shows each bad byte as \\xNN") {
  CHECK(hex_escape(0x00) == "\\x00");
  CHECK(hex_escape(0xe9) == "\\xe9");
  CHECK(hex_escape(0xff) == "\\xff");
  std::vector<char32_t> seen;
  const auto keep = [&](char32_t cp, std::string_view bytes, std::string& out) {
    seen.push_back(cp);
    out.append(bytes);
  };
  CHECK(escape_utf8("", keep).empty());
  CHECK(escape_utf8("a\xE4\xB8\xAD", keep) == "a\xE4\xB8\xAD");
  CHECK(seen == std::vector<char32_t>{U'a', U'\u4E2D'});
  // A truncated sequence is two bad bytes, each escaped; the text goes on after them.
  seen.clear();
  CHECK(escape_utf8("v\xE4\xB8!", keep) == "v\\xe4\\xb8!");
  CHECK(seen == std::vector<char32_t>{U'v', U'!'});
  // The callback decides how a valid character is shown.
  CHECK(escape_utf8("a\nb", [](char32_t cp, std::string_view bytes, std::string& out) {
          if (cp == '\n')
            out += "\\n";
          else
            out.append(bytes);
        }) == "a\\nb");
}
