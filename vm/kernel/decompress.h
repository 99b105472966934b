#pragma once
// Single compressed streams (a .ko.xz, a bzImage's payload), decompressed
// with libarchive's raw format: xz, zstd, gzip, lzma, bzip2 and lz4, all in
// process (no external programs).

#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.h"

namespace rxerun::vm {

// The decompressed bytes of `data`; `what` names it in errors. Data that is
// not compressed in one of the formats above is an error.
Result<std::string> decompress_buffer(std::string_view data, std::string_view what);

// Decompresses the file `in` into `out` (created, mode 0644).
Result<void> decompress_file(const std::filesystem::path& in, const std::filesystem::path& out);

}  // namespace rxerun::vm
