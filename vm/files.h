#pragma once
// Small file helpers for `vm setup`: whole-file reads, writes that a reader
// never sees half done, and I/O errors that say what to do (a full disk is
// the likeliest failure when a kernel tree of several hundred MB unpacks).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.h"

namespace rxerun::vm {

// "cannot WHAT PATH: strerror", plus a hint when the disk is full.
Error io_error(std::string_view what, const std::filesystem::path& path, int err);

Result<std::string> read_whole_file(const std::filesystem::path& path);

// rxerun::write_file_atomic (base/files.h) with mode 0644 whatever the umask
// (readable by the non-root users that boot the lab VM), and io_error's hint
// on a full disk.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view data);

// Writes `data` to `path` (created or truncated) with `mode`.
Result<void> write_whole_file(const std::filesystem::path& path, std::string_view data, unsigned mode = 0644);

// The last `n` non-empty lines of a tool's output, joined with "; " (for
// error messages: apt-get's reason is on its last stderr lines).
std::string tail_lines(std::string_view text, int n);

// Creates `dir` and its missing parents, mode 0755 (readable by the users
// that boot the lab VM).
Result<void> ensure_dir(const std::filesystem::path& dir);

// Whether `path` is a regular file (after symbolic links); false when it
// cannot be looked at.
bool is_regular(const std::filesystem::path& path);

// FNV-1a over texts, each ended by a 0xff byte: the same on every build and
// machine (std::hash is not), for the names of what the cache keeps.
class Digest {
 public:
  void mix(std::string_view text);
  std::string hex() const;  // 16 hex digits

 private:
  std::uint64_t h_ = 1469598103934665603ull;
};

// A size for people: "109 MB", "850 kB".
std::string megabytes(std::uint64_t bytes);

// Removes a tree; "already gone" is success.
Result<void> remove_tree(const std::filesystem::path& path);

}  // namespace rxerun::vm
