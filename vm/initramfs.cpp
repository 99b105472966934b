#include "vm/initramfs.h"

#include <archive.h>
#include <archive_entry.h>
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "vm/boot_protocol.h"
#include "vm/files.h"
#include "vm/kernel/decompress.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInstallBusybox = "apt-get install busybox-static";

struct ArchiveWriteDeleter {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using ArchiveWriter = std::unique_ptr<archive, ArchiveWriteDeleter>;
using Entry = std::unique_ptr<archive_entry, EntryDeleter>;

template <class Ehdr, class Phdr>
Result<bool> has_interp(std::string_view d) {
  Ehdr eh;
  std::memcpy(&eh, d.data(), sizeof eh);
  if (eh.e_phentsize != sizeof(Phdr) || eh.e_phoff > d.size() ||
      static_cast<std::uint64_t>(eh.e_phnum) * sizeof(Phdr) > d.size() - eh.e_phoff)
    return make_error("damaged ELF program headers");
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Phdr ph;
    std::memcpy(&ph, d.data() + eh.e_phoff + i * sizeof(Phdr), sizeof ph);
    if (ph.p_type == PT_INTERP) return true;
  }
  return false;
}

// The cpio being written: every entry owned by root, mtime 0 (the same
// inputs give the same bytes), numbered inodes with nlink 1, so the kernel
// sees no hardlinks.
class CpioWriter {
 public:
  explicit CpioWriter(const fs::path& out) : out_(out), a_(archive_write_new()) {}

  Result<void> open() {
    if (!a_) return make_error("out of memory", ENOMEM);
    if (archive_write_set_format_cpio_newc(a_.get()) != ARCHIVE_OK ||
        archive_write_add_filter_gzip(a_.get()) != ARCHIVE_OK)
      return failure("set up");
    archive_write_set_filter_option(a_.get(), "gzip", "timestamp", nullptr);  // none in the gzip header
    if (archive_write_open_filename(a_.get(), out_.c_str()) != ARCHIVE_OK) return failure("create");
    return {};
  }

  Result<void> dir(const std::string& name) { return add(name, AE_IFDIR, 0755, {}); }
  Result<void> file(const std::string& name, unsigned perm, std::string_view data) {
    return add(name, AE_IFREG, perm, data);
  }
  Result<void> char_device(const std::string& name, unsigned perm, unsigned major, unsigned minor) {
    return add(name, AE_IFCHR, perm, {}, major, minor);
  }

  Result<void> close() {
    if (archive_write_close(a_.get()) != ARCHIVE_OK) return failure("write");
    return {};
  }

 private:
  Result<void> add(const std::string& name, unsigned type, unsigned perm, std::string_view data, unsigned major = 0,
                   unsigned minor = 0) {
    Entry e(archive_entry_new());
    if (!e) return make_error("out of memory", ENOMEM);
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_filetype(e.get(), type);
    archive_entry_set_perm(e.get(), perm);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), 0, 0);
    archive_entry_set_ino(e.get(), ++ino_);
    archive_entry_set_nlink(e.get(), type == AE_IFDIR ? 2 : 1);
    if (type == AE_IFCHR) {
      archive_entry_set_rdevmajor(e.get(), major);
      archive_entry_set_rdevminor(e.get(), minor);
    }
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(data.size()));
    if (archive_write_header(a_.get(), e.get()) != ARCHIVE_OK) return failure("write " + name + " into");
    if (!data.empty() && archive_write_data(a_.get(), data.data(), data.size()) != static_cast<la_ssize_t>(data.size()))
      return failure("write " + name + " into");
    return {};
  }

  Error failure(const std::string& what) {
    int err = archive_errno(a_.get());
    if (err == ENOSPC || err == EDQUOT || err == EACCES || err == EROFS) return io_error(what, out_, err);
    const char* s = archive_error_string(a_.get());
    return make_error("cannot " + what + " " + out_.string() + ": " + (s ? s : "libarchive error"), err);
  }

  fs::path out_;
  ArchiveWriter a_;
  unsigned ino_ = 0;
};

}  // namespace

Result<void> check_static_busybox(const fs::path& path) {
  auto data = read_whole_file(path);
  if (!data) {
    if (data.error().code == ENOENT)
      return make_error(path.string() + " not found: the lab VM's initramfs needs a static busybox (" +
                        kInstallBusybox + ")");
    return data.error();
  }
  const std::string& d = *data;
  if (d.size() < EI_NIDENT || d.compare(0, SELFMAG, ELFMAG) != 0)
    return make_error(path.string() + " is not an ELF executable: the lab VM's initramfs needs a static busybox (" +
                      kInstallBusybox + ")");
  Result<bool> interp = false;
  if (d[EI_CLASS] == ELFCLASS64 && d.size() >= sizeof(Elf64_Ehdr))
    interp = has_interp<Elf64_Ehdr, Elf64_Phdr>(d);
  else if (d[EI_CLASS] == ELFCLASS32 && d.size() >= sizeof(Elf32_Ehdr))
    interp = has_interp<Elf32_Ehdr, Elf32_Phdr>(d);
  else
    return make_error(path.string() + ": unknown ELF class");
  if (!interp) return make_error(path.string() + ": " + interp.error().message);
  if (*interp)
    return make_error(path.string() +
                      " is dynamically linked (Debian's busybox package): the lab VM's initramfs runs it before any "
                      "library is there and needs the static one (" +
                      kInstallBusybox + ")");
  return {};
}

Result<void> write_initramfs(const fs::path& out, const InitramfsSpec& spec) {
  if (auto r = check_static_busybox(spec.busybox); !r) return r;
  auto busybox = read_whole_file(spec.busybox);
  if (!busybox) return busybox.error();

  const fs::path tmp = out.string() + ".tmp";
  CpioWriter w(tmp);
  auto body = [&]() -> Result<void> {
    if (auto r = w.open(); !r) return r;
    for (const char* d : {"bin", "dev", "proc", "sys", "lower", "upper", "newroot", "modules"})
      if (auto r = w.dir(d); !r) return r;
    // The kernel opens /dev/console for init's stdio before devtmpfs is mounted.
    if (auto r = w.char_device("dev/console", 0600, 5, 1); !r) return r;
    if (auto r = w.file("init", 0755, spec.init); !r) return r;
    if (auto r = w.file("bin/busybox", 0755, *busybox); !r) return r;
    std::string order;
    for (const auto& m : spec.modules) {
      const std::string file = m.path.filename().string();
      auto data = read_whole_file(m.path);
      if (!data) return data.error();
      if (file.size() < 3 || file.compare(file.size() - 3, 3, ".ko") != 0) {  // .ko.xz and the like
        auto plain = decompress_buffer(*data, m.path.string());
        if (!plain) return plain.error();
        data = std::move(plain);
      }
      if (auto r = w.file("modules/" + m.name + ".ko", 0644, *data); !r) return r;
      order += m.name + "\n";
    }
    if (auto r = w.file("modules/order", 0644, order); !r) return r;
    return w.close();
  };
  if (auto r = body(); !r) {
    ::unlink(tmp.c_str());
    return r;
  }
  if (::chmod(tmp.c_str(), 0644) != 0 || ::rename(tmp.c_str(), out.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return io_error("write", out, err);
  }
  return {};
}

Result<std::vector<BootModule>> write_lab_initramfs(const fs::path& moddir, const fs::path& out) {
  auto modules = resolve_boot_modules(moddir, kInitramfsModules, kInitramfsNodeModules);
  if (!modules) return modules.error();
  InitramfsSpec spec;
  spec.init = std::string(stage1_init_script());
  spec.busybox = kHostBusybox;
  spec.modules = *modules;
  if (auto r = write_initramfs(out, spec); !r) return r.error();
  return modules;
}

}  // namespace rxerun::vm
