#pragma once
// Result<T> and Error are part of the plugin SDK (sdk/rxerun/result.h): one
// definition for rxerun and the plugins built against it.

#include <cstring>
#include <string>

#include "rxerun/result.h"

namespace rxerun {

// An error's message with its errno's text ("cannot open X: No such file
// or directory"), unless the message ends with it already, as most of
// sys/'s do.
inline std::string error_text(const Error& e) {
  if (!e.code) return e.message;
  const std::string errno_text = std::strerror(e.code);
  return e.message.ends_with(errno_text) ? e.message : e.message + ": " + errno_text;
}

}  // namespace rxerun
