#include "vm/kernel/deb.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vm/files.h"
#include "vm/interrupt_check.h"
#include "vm/kernel/archive.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

// The inner tar is read from the outer ar member's data, block by block.
struct InnerSource {
  archive* outer = nullptr;
  char buf[1 << 16];
};

la_ssize_t read_from_outer(archive*, void* client, const void** block) {
  auto* src = static_cast<InnerSource*>(client);
  *block = src->buf;
  return archive_read_data(src->outer, src->buf, sizeof src->buf);
}

// The relative components of an entry's path, or an error for a path that
// would leave the destination.
Result<std::vector<std::string>> safe_components(const std::string& path) {
  if (!path.empty() && path[0] == '/') return make_error("absolute path '" + path + "'");
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string c = path.substr(start, end - start);
    if (c == "..") return make_error("path '" + path + "' leaves the destination ('..')");
    if (!c.empty() && c != ".") out.push_back(std::move(c));
    start = end + 1;
  }
  return out;
}

class Extractor {
 public:
  Extractor(const fs::path& deb, const fs::path& dest) : deb_(deb), dest_(dest) {}

  Result<void> entry(archive* a, archive_entry* e, UnpackStats& stats) {
    const char* raw = archive_entry_pathname(e);
    const std::string name = raw ? raw : "";
    auto comps = safe_components(name);
    if (!comps) return refuse(comps.error().message);
    if (comps->empty()) return {};  // "./", the destination itself
    auto parent = make_parents(*comps, name);
    if (!parent) return parent.error();
    const fs::path target = *parent / comps->back();

    if (const char* link = archive_entry_hardlink(e)) {
      auto lcomps = safe_components(link);
      if (!lcomps) return refuse("hardlink '" + name + "' to " + lcomps.error().message);
      if (lcomps->empty()) return refuse("hardlink '" + name + "' to the destination itself");
      auto lparent = make_parents(*lcomps, link);
      if (!lparent) return lparent.error();
      const fs::path source = *lparent / lcomps->back();
      if (auto r = replace(target); !r) return r;
      if (::link(source.c_str(), target.c_str()) != 0) return io_error("hardlink", target, errno);
      ++stats.files;
      return {};
    }

    switch (archive_entry_filetype(e)) {
      case AE_IFDIR: {
        struct stat st;
        if (::lstat(target.c_str(), &st) == 0) {
          if (S_ISDIR(st.st_mode)) return {};
          return refuse("'" + name + "' is a directory but an earlier entry made it a file or symlink");
        }
        if (::mkdir(target.c_str(), 0755) != 0 || ::chmod(target.c_str(), 0755) != 0)
          return io_error("create directory", target, errno);
        return {};
      }
      case AE_IFLNK: {
        const char* to = archive_entry_symlink(e);
        if (!to || !*to) return refuse("symlink '" + name + "' without a target");
        if (auto r = replace(target); !r) return r;
        // The target may be absolute (build -> /usr/src/...): it only dangles,
        // since nothing is ever written through a symlink (make_parents).
        if (::symlink(to, target.c_str()) != 0) return io_error("create symlink", target, errno);
        return {};
      }
      case AE_IFREG: ++stats.files; return regular(a, e, target, stats);
      default: return refuse("'" + name + "' is a device node, fifo or socket");
    }
  }

 private:
  Error refuse(const std::string& why) const { return make_error("refusing to unpack " + deb_.string() + ": " + why); }

  // Creates the parent directories of an entry under dest_, refusing to go
  // through a symlink (an entry could otherwise write outside dest_).
  Result<fs::path> make_parents(const std::vector<std::string>& comps, const std::string& name) {
    fs::path p = dest_;
    for (std::size_t i = 0; i + 1 < comps.size(); ++i) {
      p /= comps[i];
      struct stat st;
      if (::lstat(p.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) continue;
        if (S_ISLNK(st.st_mode)) return refuse("'" + name + "' goes through the symlink " + p.string());
        return refuse("'" + name + "' goes through the file " + p.string());
      }
      if (errno != ENOENT) return io_error("stat", p, errno);
      if (::mkdir(p.c_str(), 0755) != 0 || ::chmod(p.c_str(), 0755) != 0) return io_error("create directory", p, errno);
    }
    return p;
  }

  Result<void> replace(const fs::path& target) {
    struct stat st;
    if (::lstat(target.c_str(), &st) != 0) return {};
    if (S_ISDIR(st.st_mode)) return refuse(target.string() + " is a directory, the package has a file there");
    if (::unlink(target.c_str()) != 0) return io_error("replace", target, errno);
    return {};
  }

  Result<void> regular(archive* a, archive_entry* e, const fs::path& target, UnpackStats& stats) {
    if (auto r = replace(target); !r) return r;
    // Keep the executable bits; drop setuid/setgid/sticky and group/other
    // write; everyone may read (other users boot this kernel).
    const mode_t mode = (archive_entry_perm(e) & 0755) | 0644;
    int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) return io_error("create", target, errno);
    Result<void> result;
    char buf[1 << 16];
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf, sizeof buf);
      if (n < 0) {
        result = make_error("cannot unpack " + deb_.string() + ": " + archive_message(a));
        break;
      }
      if (n == 0) break;
      stats.bytes += static_cast<std::uint64_t>(n);
      la_ssize_t off = 0;
      while (off < n) {
        ssize_t w = ::write(fd, buf + off, static_cast<std::size_t>(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) break;
        off += w;
      }
      if (off < n) {
        result = io_error("write", target, errno);
        break;
      }
    }
    if (result && ::fchmod(fd, mode) != 0) result = io_error("chmod", target, errno);
    if (::close(fd) != 0 && result) result = io_error("write", target, errno);
    return result;
  }

  fs::path deb_;
  fs::path dest_;
};

// A reader of compressed tarballs, the compressions Debian uses.
ArchiveReader tar_reader() {
  ArchiveReader a(archive_read_new());
  if (!a) return a;
  archive_read_support_filter_xz(a.get());
  archive_read_support_filter_zstd(a.get());
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_bzip2(a.get());
  archive_read_support_filter_lzma(a.get());
  archive_read_support_format_tar(a.get());
  return a;
}

// Writes the entries of an open tar (those under `prefix`, all when empty)
// into `dest`; `what` names it in errors.
Result<void> extract_entries(archive* tar, const fs::path& what, const std::string& prefix, const fs::path& dest,
                             UnpackStats& stats, int interrupt_fd) {
  Extractor x(what, dest);
  for (unsigned n = 1;; ++n) {
    if (n % 64 == 0 && interrupt_requested(interrupt_fd)) return make_error("interrupted", EINTR);
    archive_entry* e = nullptr;
    int r = archive_read_next_header(tar, &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      return make_error("cannot read the data of " + what.string() + ": " + archive_message(tar));
    if (!prefix.empty()) {
      const char* raw = archive_entry_pathname(e);
      if (!raw || std::string_view(raw).substr(0, prefix.size()) != prefix) continue;
    }
    if (auto done = x.entry(tar, e, stats); !done) return done;
  }
  return {};
}

Result<void> unpack_data_tar(archive* outer, const fs::path& deb, const fs::path& dest, UnpackStats& stats,
                             int interrupt_fd) {
  ArchiveReader inner = tar_reader();
  if (!inner) return make_error("out of memory", ENOMEM);
  auto src = std::make_unique<InnerSource>();
  src->outer = outer;
  if (archive_read_open(inner.get(), src.get(), nullptr, read_from_outer, nullptr) != ARCHIVE_OK)
    return make_error("cannot read the data of " + deb.string() + ": " + archive_message(inner.get()));
  return extract_entries(inner.get(), deb, "", dest, stats, interrupt_fd);
}

}  // namespace

Result<UnpackStats> unpack_deb(const fs::path& deb, const fs::path& dest, int interrupt_fd) {
  ArchiveReader outer(archive_read_new());
  if (!outer) return make_error("out of memory", ENOMEM);
  archive_read_support_format_ar(outer.get());
  if (archive_read_open_filename(outer.get(), deb.c_str(), 1 << 16) != ARCHIVE_OK)
    return make_error("cannot read " + deb.string() + ": " + archive_message(outer.get()), archive_errno(outer.get()));
  UnpackStats stats;
  bool seen_binary = false, seen_data = false;
  for (;;) {
    archive_entry* e = nullptr;
    int r = archive_read_next_header(outer.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      return make_error(deb.string() + " is not a Debian package: " + archive_message(outer.get()));
    const std::string name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    if (name == "debian-binary") seen_binary = true;
    if (name.rfind("data.tar", 0) != 0) continue;
    if (!seen_binary)
      return make_error(deb.string() + " is not a Debian package (no debian-binary before " + name + ")");
    if (auto u = unpack_data_tar(outer.get(), deb, dest, stats, interrupt_fd); !u) return u.error();
    seen_data = true;
    break;
  }
  if (!seen_data) return make_error(deb.string() + " is not a Debian package (no data.tar member)");
  return stats;
}

Result<UnpackStats> unpack_tarball(const fs::path& tarball, const std::string& prefix, const fs::path& dest,
                                   int interrupt_fd) {
  ArchiveReader tar = tar_reader();
  if (!tar) return make_error("out of memory", ENOMEM);
  if (archive_read_open_filename(tar.get(), tarball.c_str(), 1 << 16) != ARCHIVE_OK)
    return make_error("cannot read " + tarball.string() + ": " + archive_message(tar.get()), archive_errno(tar.get()));
  UnpackStats stats;
  if (auto r = extract_entries(tar.get(), tarball, prefix, dest, stats, interrupt_fd); !r) return r.error();
  return stats;
}

}  // namespace rxerun::vm
