#pragma once
// Text for the report page's HTML (app/report_page.h): markup characters as
// references, characters HTML cannot hold and bytes that are not UTF-8 as a
// visible "\xNN" (base/utf8.h's xml_escape), so whatever a run produced --
// names, program output, kernel messages -- shows as text, never as markup.

#include <string>
#include <string_view>

#include "base/utf8.h"

namespace rxerun {

// Between tags; newlines stay newlines (a <pre> keeps its lines).
inline std::string html_text(std::string_view text) {
  return xml_escape(text, false);
}
// In an attribute's value, quoted with '"'.
inline std::string html_attr(std::string_view text) {
  return xml_escape(text, true);
}

}  // namespace rxerun
