#include "vm/kernel/decompress.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "vm/files.h"
#include "vm/kernel/archive.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

// A raw reader with the in-process filters only: archive_read_support_filter_all
// would also register external programs (lrzip, lzop, grzip).
ArchiveReader raw_reader() {
  ArchiveReader a(archive_read_new());
  if (!a) return a;
  archive_read_support_filter_xz(a.get());
  archive_read_support_filter_zstd(a.get());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_lzma(a.get());
  archive_read_support_filter_bzip2(a.get());
  archive_read_support_filter_lz4(a.get());
  archive_read_support_format_raw(a.get());
  return a;
}

// Opens the single raw entry and checks that a decompression filter is on it.
Result<void> open_entry(archive* a, std::string_view what) {
  archive_entry* entry = nullptr;
  int r = archive_read_next_header(a, &entry);
  if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
    return make_error("cannot decompress " + std::string(what) + ": " + archive_message(a));
  // Filter 0 is the outermost one; "none" alone means plain data.
  if (archive_filter_count(a) < 2 || archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE)
    return make_error("cannot decompress " + std::string(what) + ": not xz, zstd, gzip, lzma, bzip2 or lz4 data");
  return {};
}

}  // namespace

Result<std::string> decompress_buffer(std::string_view data, std::string_view what) {
  ArchiveReader a = raw_reader();
  if (!a) return make_error("out of memory", ENOMEM);
  if (archive_read_open_memory(a.get(), data.data(), data.size()) != ARCHIVE_OK)
    return make_error("cannot decompress " + std::string(what) + ": " + archive_message(a.get()));
  if (auto r = open_entry(a.get(), what); !r) return r.error();
  std::string out;
  char buf[1 << 16];
  for (;;) {
    la_ssize_t n = archive_read_data(a.get(), buf, sizeof buf);
    if (n < 0) return make_error("cannot decompress " + std::string(what) + ": " + archive_message(a.get()));
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

Result<void> decompress_file(const fs::path& in, const fs::path& out) {
  ArchiveReader a = raw_reader();
  if (!a) return make_error("out of memory", ENOMEM);
  if (archive_read_open_filename(a.get(), in.c_str(), 1 << 16) != ARCHIVE_OK)
    return make_error("cannot read " + in.string() + ": " + archive_message(a.get()), archive_errno(a.get()));
  if (auto r = open_entry(a.get(), in.string()); !r) return r;
  int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("create", out, errno);
  if (::fchmod(fd, 0644) != 0) {
    int err = errno;
    ::close(fd);
    return io_error("chmod", out, err);
  }
  char buf[1 << 16];
  for (;;) {
    la_ssize_t n = archive_read_data(a.get(), buf, sizeof buf);
    if (n < 0) {
      ::close(fd);
      return make_error("cannot decompress " + in.string() + ": " + archive_message(a.get()));
    }
    if (n == 0) break;
    for (la_ssize_t off = 0; off < n;) {
      ssize_t w = ::write(fd, buf + off, static_cast<std::size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        int err = errno;
        ::close(fd);
        return io_error("write", out, err);
      }
      off += w;
    }
  }
  if (::close(fd) != 0) return io_error("write", out, errno);
  return {};
}

}  // namespace rxerun::vm
