#include "sys/kernel_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "base/fd.h"

namespace rxerun::sys {

namespace {

Error kernel_file_error(const std::string& what, int code) {
  return make_error(what + ": " + std::strerror(code), code);
}

}  // namespace

Result<std::string> read_attr(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return kernel_file_error("cannot read " + path, errno);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return kernel_file_error("cannot read " + path, errno);
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > 65536) break;
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\0')) out.pop_back();
  return out;
}

std::string attr_or_empty(const std::string& path) {
  auto v = read_attr(path);
  return v ? *v : std::string();
}

Result<void> write_attr(const std::string& path, const std::string& value) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return kernel_file_error("cannot open " + path, errno);
  ssize_t n;
  do n = ::write(fd.get(), value.data(), value.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) return kernel_file_error("writing '" + value + "' to " + path, errno);
  return {};
}

Result<void> make_kernel_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0) return kernel_file_error("mkdir " + path, errno);
  return {};
}

Result<void> remove_kernel_dir(const std::string& path) {
  if (::rmdir(path.c_str()) != 0) return kernel_file_error("rmdir " + path, errno);
  return {};
}

Result<void> make_kernel_link(const std::string& target, const std::string& link) {
  if (::symlink(target.c_str(), link.c_str()) != 0) return kernel_file_error("ln -s " + target + " " + link, errno);
  return {};
}

Result<void> remove_kernel_link(const std::string& link) {
  if (::unlink(link.c_str()) != 0) return kernel_file_error("rm " + link, errno);
  return {};
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> subdirectories(const std::string& dir) {
  std::vector<std::string> out;
  for (auto& name : dir_entries(dir)) {
    struct stat st {};
    if (::lstat((dir + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out.push_back(std::move(name));
  }
  return out;
}

bool kernel_path_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string link_target(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

bool parse_unsigned(std::string_view text, unsigned long long* out, int base) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace rxerun::sys
