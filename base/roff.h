#pragma once
// Text for the manual page (roff, the man macros): what the generated page
// of docs/rxerun.1 is written with, from the commands' and the kinds'
// declarations.

#include <string>
#include <string_view>

namespace rxerun {

// `text` as roff body text: a backslash, a hyphen-minus (typed options must
// stay ASCII '-') and every character outside ASCII as roff escapes
// (\e, \-, \[u00E9]), a line that would start with '.' or '\'' guarded by
// \&, so that no word of it is read as a request. Newlines stay.
std::string roff_text(std::string_view text);

// `text` in bold (\fB...\fP) or italic (\fI...\fP), escaped as roff_text().
std::string roff_bold(std::string_view text);
std::string roff_italic(std::string_view text);

}  // namespace rxerun
