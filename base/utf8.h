#pragma once
// UTF-8, as rxerun checks it: what users write must be UTF-8 text; what the
// kernel and tools hand back is bytes, escaped wherever it is shown.

#include <cstddef>
#include <optional>
#include <string_view>

namespace rxerun {

// Length of the UTF-8 sequence that starts at text[i], or 0 when it is not
// one (overlong forms, UTF-16 surrogates and code points past Unicode
// included).
std::size_t utf8_length(std::string_view text, std::size_t i);

// The offset of the first byte that does not start a valid sequence, or
// nullopt when all of `text` is UTF-8.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace rxerun
