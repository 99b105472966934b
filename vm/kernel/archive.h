#pragma once
// libarchive, owned: a reader that frees itself, and its error in words.

#include <archive.h>

#include <memory>
#include <string>

namespace rxerun::vm {

struct ArchiveReadDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchiveReader = std::unique_ptr<archive, ArchiveReadDeleter>;

inline std::string archive_message(archive* a) {
  const char* s = archive_error_string(a);
  return s ? s : "unknown libarchive error";
}

}  // namespace rxerun::vm
