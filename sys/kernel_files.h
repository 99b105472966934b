#pragma once
// The kernel's own files, as configfs and sysfs want them used: an
// attribute read whole (its trailing newline dropped) and written with one
// write(2), directories made and removed with mkdir(2) and rmdir(2) (which
// is how configfs makes and removes its objects), links with symlink(2).
// Every failure keeps the kernel's errno, in words with the path.

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

// The text of an attribute without its trailing newlines; ENOENT when absent.
Result<std::string> read_attr(const std::string& path);
// "" when it cannot be read.
std::string attr_or_empty(const std::string& path);
// One write(2) of the whole value.
Result<void> write_attr(const std::string& path, const std::string& value);
Result<void> make_kernel_dir(const std::string& path);
Result<void> remove_kernel_dir(const std::string& path);
Result<void> make_kernel_link(const std::string& target, const std::string& link);
Result<void> remove_kernel_link(const std::string& link);
// The names in a directory, sorted; empty when it does not exist.
std::vector<std::string> dir_entries(const std::string& dir);
// The directories in a directory (not its attributes or links), sorted.
std::vector<std::string> subdirectories(const std::string& dir);
// Whether anything (a link too) is at `path`.
bool kernel_path_exists(const std::string& path);
// Where the symbolic link at `path` points, as written; "" when it is none.
std::string link_target(const std::string& path);
// A whole decimal (or `base`) number, nothing else.
bool parse_unsigned(std::string_view text, unsigned long long* out, int base = 10);
template <class T>
bool parse_unsigned(std::string_view text, T* out, int base = 10) {
  unsigned long long n = 0;
  if (!parse_unsigned(text, &n, base) || n > static_cast<unsigned long long>(static_cast<T>(~T{}))) return false;
  *out = static_cast<T>(n);
  return true;
}

}  // namespace rxerun::sys
