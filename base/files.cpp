#include "base/files.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

namespace rxerun {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int code) {
  return std::strerror(code);
}

// The temporary file in path's directory, created only when nothing (not
// even a dangling link) has that name.
Result<UniqueFd> open_exclusive(const fs::path& temp, unsigned mode) {
  for (;;) {
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) return UniqueFd(fd);
    if (errno != EINTR) return make_error("", errno);
  }
}

// "cannot write report r.json: No space left on device"
Error file_error(std::string_view doing, std::string_view what, const fs::path& file, int code) {
  return make_error(
      "cannot " + std::string(doing) + " " + std::string(what) + " " + file.string() + ": " + errno_text(code), code);
}

}  // namespace

Result<void> refuse_symlink(const fs::path& path, std::string_view what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return {};
  std::string target;
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n > 0) target = " (to " + std::string(buf, static_cast<std::size_t>(n)) + ")";
  return make_error(std::string(what) + " " + path.string() + " is a symbolic link" + target +
                        ": rxerun does not write through symbolic links; name the file itself, or remove the link",
                    ELOOP);
}

std::string random_name(std::size_t length) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string random(length, '\0');
  std::size_t got = 0;
  while (got < length) {
    const ssize_t n = ::getrandom(random.data() + got, length - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;  // no getrandom (pre-3.17 kernel): callers do not rely on it alone
    }
  }
  std::string name;
  for (unsigned char b : random) name += kAlphabet[b % (sizeof kAlphabet - 1)];
  return name;
}

fs::path temporary_name(const fs::path& path) {
  // Without getrandom, O_EXCL still refuses a planted name.
  return fs::path(path.string() + ".rxerun-" + random_name(8));
}

Result<AtomicFile> AtomicFile::create(const fs::path& path, std::string_view what, unsigned mode, Umask umask) {
  // A planted name is refused by O_EXCL; a few new names make a collision
  // with a leftover of a crashed run harmless.
  for (int attempt = 0;; ++attempt) {
    auto file = create_at(path, temporary_name(path), what, mode, umask);
    if (file || file.error().code != EEXIST || attempt == 3) return file;
  }
}

Result<AtomicFile> AtomicFile::create_at(const fs::path& path, const fs::path& temp, std::string_view what,
                                         unsigned mode, Umask umask) {
  if (auto r = refuse_symlink(path, what); !r) return r.error();
  auto fd = open_exclusive(temp, mode);
  // Only a file this call created is ever removed: not one found at `temp`.
  if (!fd) return file_error("write", what, path, fd.error().code);
  AtomicFile file(path, temp, std::string(what), std::move(*fd));
  if (umask == Umask::Ignore && ::fchmod(file.fd_.get(), mode) != 0) return file.io_error("write", path, errno);
  return file;
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_(std::move(other.temp_)),
      what_(std::move(other.what_)),
      fd_(std::move(other.fd_)),
      done_(std::exchange(other.done_, true)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    abort();
    path_ = std::move(other.path_);
    temp_ = std::move(other.temp_);
    what_ = std::move(other.what_);
    fd_ = std::move(other.fd_);
    done_ = std::exchange(other.done_, true);
  }
  return *this;
}

Error AtomicFile::io_error(std::string_view doing, const fs::path& file, int code) const {
  return file_error(doing, what_, file, code);
}

Result<void> AtomicFile::write(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd_.get(), data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("write", path_, errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Result<void> AtomicFile::commit() {
  if (done_ || !fd_.valid()) return make_error("cannot write " + what_ + " " + path_.string() + ": already closed");
  auto fail = [&](Error e) -> Result<void> {
    abort();
    return e;
  };
  // EINVAL/EROFS: a file system without fsync; the rename still orders it.
  if (::fsync(fd_.get()) != 0 && errno != EINVAL && errno != EROFS) return fail(io_error("write", path_, errno));
  if (fd_.close() != 0) return fail(io_error("write", path_, errno));
  // rename() would replace a link, not follow it; refusing keeps the rule
  // simple to state: rxerun leaves a link that appeared meanwhile alone.
  if (auto r = refuse_symlink(path_, what_); !r) return fail(r.error());
  if (::rename(temp_.c_str(), path_.c_str()) != 0) return fail(io_error("write", path_, errno));
  done_ = true;
  return {};
}

void AtomicFile::abort() {
  if (done_) return;
  done_ = true;
  fd_.reset();
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

Result<bool> rename_leftover(const fs::path& temp, const fs::path& path, std::string_view what) {
  struct stat st {};
  if (::lstat(temp.c_str(), &st) != 0) {
    // ENOTDIR: a directory on its path is a file, so it was never made.
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return file_error("read", what, temp, errno);
  }
  if (!S_ISREG(st.st_mode))
    return make_error(std::string(what) + " " + temp.string() + " is not a regular file: left alone", EINVAL);
  if (auto r = refuse_symlink(path, what); !r) return r.error();
  if (::rename(temp.c_str(), path.c_str()) != 0) return file_error("write", what, path, errno);
  return true;
}

Result<void> write_file_atomic(const fs::path& path, std::string_view data, std::string_view what, unsigned mode,
                               Umask umask) {
  auto file = AtomicFile::create(path, what, mode, umask);
  if (!file) return file.error();
  if (auto r = file->write(data); !r) return r;
  return file->commit();
}

Result<void> copy_file_atomic(const fs::path& from, const fs::path& to, std::string_view what, unsigned mode,
                              Umask umask) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!in.valid()) return make_error("cannot read " + from.string() + ": " + errno_text(errno), errno);
  struct stat st {};
  if (::fstat(in.get(), &st) != 0) return make_error("cannot read " + from.string() + ": " + errno_text(errno), errno);
  if (!S_ISREG(st.st_mode)) return make_error("cannot copy " + from.string() + ": not a regular file", EINVAL);
  auto file = AtomicFile::create(to, what, mode, umask);
  if (!file) return file.error();
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(in.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error("cannot read " + from.string() + ": " + errno_text(errno), errno);
    }
    if (n == 0) break;
    if (auto r = file->write(std::string_view(buf, static_cast<std::size_t>(n))); !r) return r;
  }
  return file->commit();
}

Result<std::string> read_file_capped(const fs::path& path, std::size_t max_bytes, std::string_view what) {
  const std::string the = "the " + std::string(what);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return make_error("cannot open " + the + ": " + std::strerror(errno), errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return make_error("cannot read " + the + ": " + std::strerror(errno), errno);
  if (S_ISDIR(st.st_mode)) return make_error("is a directory, not a " + std::string(what) + " file");
  const std::string at_most = "a " + std::string(what) + " is at most " + std::to_string(max_bytes) + " bytes";
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes)
    return make_error("the file is too large (" + std::to_string(st.st_size) + " bytes): " + at_most);
  std::string data;
  char buf[65536];
  while (data.size() <= max_bytes) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("cannot read " + the + ": " + std::strerror(errno), errno);
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  if (data.size() > max_bytes) return make_error("the file is too large: " + at_most);
  return data;
}

std::string kernel_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

bool file_mentions(const fs::path& path, std::string_view needle) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace rxerun
