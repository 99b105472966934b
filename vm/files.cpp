#include "vm/files.h"

#include <cstdio>

#include "base/fd.h"
#include "base/files.h"
#include "base/strings.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

Result<void> write_all(int fd, std::string_view data, const fs::path& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("write", path, errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace

Error io_error(std::string_view what, const fs::path& path, int err) {
  std::string msg = "cannot " + std::string(what) + " " + path.string() + ": " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT)
    msg += " (the disk is full: a lab kernel takes up to 1 GB under " + path.parent_path().string() +
           "; free some space, or set RXERUN_CACHE_DIR to a larger disk)";
  else if (err == EACCES || err == EPERM || err == EROFS)
    msg += " (run as root for /var/cache/rxerun, or set RXERUN_CACHE_DIR to a writable directory)";
  return make_error(std::move(msg), err);
}

Result<std::string> read_whole_file(const fs::path& path) {
  UniqueFd f(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!f.valid()) return io_error("open", path, errno);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(f.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("read", path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

Result<void> write_whole_file(const fs::path& path, std::string_view data, unsigned mode) {
  UniqueFd f(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!f.valid()) return io_error("create", path, errno);
  // The umask must not make the cache unreadable for other users.
  if (::fchmod(f.get(), mode) != 0) return io_error("chmod", path, errno);
  if (auto r = write_all(f.get(), data, path); !r) return r;
  if (f.close() != 0) return io_error("write", path, errno);
  return {};
}

Result<void> write_file_atomic(const fs::path& path, std::string_view data) {
  auto r = rxerun::write_file_atomic(path, data, "file", 0644, Umask::Ignore);
  if (!r && r.error().code != ELOOP) return io_error("write", path, r.error().code);
  return r;
}

std::string tail_lines(std::string_view text, int n) {
  return last_lines_of(text, n, "; ");
}

Result<void> ensure_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return {};
  if (dir.has_parent_path() && dir.parent_path() != dir)
    if (auto r = ensure_dir(dir.parent_path()); !r) return r;
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return io_error("create directory", dir, errno);
  ::chmod(dir.c_str(), 0755);
  return {};
}

Result<void> remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return io_error("remove", path, ec.value());
  return {};
}

bool is_regular(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::string megabytes(std::uint64_t bytes) {
  if (bytes < 1000000) return std::to_string((bytes + 500) / 1000) + " kB";
  return std::to_string((bytes + 500000) / 1000000) + " MB";
}

void Digest::mix(std::string_view text) {
  for (unsigned char c : text) h_ = (h_ ^ c) * 1099511628211ull;
  h_ = (h_ ^ 0xff) * 1099511628211ull;
}

std::string Digest::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
  return buf;
}

}  // namespace rxerun::vm
