// `rxerun vm setup`'s library: .deb unpacking, the bzImage's payload, the
// initramfs writer, module decompression, apt output parsing and the cache
// of prepared kernels, all without network; "vm.setup: real 6.1" fetches a
// real kernel (CTest label `network`, not in the default run's list).

#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <elf.h>
#include <netdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/privileged.h"
#include "support/shell.h"
#include "sys/process.h"
#include "vm/boot_protocol.h"
#include "vm/files.h"
#include "vm/initramfs.h"
#include "vm/kernel/apt_private.h"
#include "vm/kernel/deb.h"
#include "vm/kernel/decompress.h"
#include "vm/kernel/image.h"
#include "vm/kernel/kernels.h"
#include "vm/kernel/module_tree.h"
#include "vm/kernel/record.h"
#include "vm/kernel/siw_build.h"

namespace fs = std::filesystem;
using namespace rxerun;
using namespace rxerun::vm;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "rxerun-vmsetup-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
  auto r = read_whole_file(p);
  REQUIRE_MESSAGE(r.ok(), p.string());
  return *r;
}

void spit(const fs::path& p, const std::string& data) {
  fs::create_directories(p.parent_path());
  REQUIRE(write_whole_file(p, data).ok());
}

unsigned mode_of(const fs::path& p) {
  struct stat st;
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// One entry of an archive the tests write.
struct TestEntry {
  std::string name;
  unsigned type = AE_IFREG;
  unsigned perm = 0644;
  std::string data;  // contents, or the symlink/hardlink target
  bool hardlink = false;
};

// An archive in memory: `format` and `filter` are libarchive codes.
std::string write_archive(int format, int filter, const std::vector<TestEntry>& entries) {
  std::string out;
  archive* a = archive_write_new();
  // The generic setter knows no ar; dpkg-deb writes the common (System V) one.
  REQUIRE((format == ARCHIVE_FORMAT_AR_GNU ? archive_write_set_format_ar_svr4(a)
                                           : archive_write_set_format(a, format)) == ARCHIVE_OK);
  REQUIRE(archive_write_add_filter(a, filter) == ARCHIVE_OK);
  archive_write_set_bytes_in_last_block(a, 1);  // no zero padding after a zstd frame
  REQUIRE(archive_write_open(
              a, &out, nullptr,
              [](archive*, void* client, const void* buf, size_t n) -> la_ssize_t {
                static_cast<std::string*>(client)->append(static_cast<const char*>(buf), n);
                return static_cast<la_ssize_t>(n);
              },
              nullptr) == ARCHIVE_OK);
  for (const auto& t : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, t.name.c_str());
    archive_entry_set_perm(e, t.perm);
    archive_entry_set_mtime(e, 1700000000, 0);
    if (t.hardlink) {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_hardlink(e, t.data.c_str());
      archive_entry_set_size(e, 0);
    } else if (t.type == AE_IFLNK) {
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_symlink(e, t.data.c_str());
    } else {
      archive_entry_set_filetype(e, t.type);
      archive_entry_set_size(e, t.type == AE_IFREG ? static_cast<la_int64_t>(t.data.size()) : 0);
    }
    REQUIRE(archive_write_header(a, e) == ARCHIVE_OK);
    if (t.type == AE_IFREG && !t.hardlink && !t.data.empty())
      REQUIRE(archive_write_data(a, t.data.data(), t.data.size()) == static_cast<la_ssize_t>(t.data.size()));
    archive_entry_free(e);
  }
  REQUIRE(archive_write_close(a) == ARCHIVE_OK);
  archive_write_free(a);
  return out;
}

std::string compress(int filter, const std::string& data) {
  return write_archive(ARCHIVE_FORMAT_RAW, filter, {{.name = "data", .data = data}});
}

// A .deb as dpkg-deb lays it out: debian-binary, control.tar.xz, data.tar.*.
fs::path write_deb(const fs::path& path, const std::vector<TestEntry>& data, int data_filter = ARCHIVE_FILTER_XZ) {
  const std::string control = write_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_XZ,
                                            {{.name = "./control", .data = "Package: test\nVersion: 1\n"}});
  const std::string tar = write_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, data_filter, data);
  const std::string member = data_filter == ARCHIVE_FILTER_ZSTD ? "data.tar.zst" : "data.tar.xz";
  spit(path, write_archive(ARCHIVE_FORMAT_AR_GNU, ARCHIVE_FILTER_NONE,
                           {{.name = "debian-binary", .data = "2.0\n"},
                            {.name = "control.tar.xz", .data = control},
                            {.name = member, .data = tar}}));
  return path;
}

// A minimal ELF64 executable header; with `interp`, one PT_INTERP program
// header (a dynamically linked program).
std::string fake_elf(bool interp) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = interp ? 1 : 0;
  eh.e_phoff = interp ? sizeof eh : 0;
  std::string out(reinterpret_cast<const char*>(&eh), sizeof eh);
  if (interp) {
    Elf64_Phdr ph{};
    ph.p_type = PT_INTERP;
    out.append(reinterpret_cast<const char*>(&ph), sizeof ph);
  }
  out += std::string(200, 'k');  // some "code"
  return out;
}

void put_le32(std::string& d, std::size_t off, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) d[off + i] = static_cast<char>(v >> (8 * i));
}

// A bzImage as the x86 boot protocol lays it out: setup sectors, then the
// protected-mode code with the compressed kernel at payload_offset.
std::string bzimage_with_payload(const std::string& payload, unsigned setup_sects = 3) {
  std::string d((setup_sects + 1) * 512 + 0x300 + payload.size() + 64, '\0');
  d[0x1f1] = static_cast<char>(setup_sects);
  d[0x1fe] = '\x55';
  d[0x1ff] = '\xaa';
  std::memcpy(&d[0x202], "HdrS", 4);
  d[0x206] = '\x0f';  // protocol 2.15
  d[0x207] = '\x02';
  put_le32(d, 0x248, 0x300);
  put_le32(d, 0x24c, static_cast<std::uint32_t>(payload.size()));
  std::memcpy(&d[(setup_sects + 1) * 512 + 0x300], payload.data(), payload.size());
  return d;
}

// kbuild's size_append: the uncompressed size after the stream.
std::string with_size(std::string compressed, std::size_t size) {
  std::string le(4, '\0');
  put_le32(le, 0, static_cast<std::uint32_t>(size));
  return compressed + le;
}

struct CpioEntry {
  unsigned type = 0;
  unsigned perm = 0;
  unsigned rdevmajor = 0, rdevminor = 0;
  std::string data;
};

std::map<std::string, CpioEntry> read_cpio(const fs::path& path) {
  std::map<std::string, CpioEntry> out;
  archive* a = archive_read_new();
  archive_read_support_filter_gzip(a);
  archive_read_support_format_cpio(a);
  REQUIRE(archive_read_open_filename(a, path.c_str(), 65536) == ARCHIVE_OK);
  CHECK(archive_filter_code(a, 0) == ARCHIVE_FILTER_GZIP);
  archive_entry* e;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    CHECK(archive_format(a) == ARCHIVE_FORMAT_CPIO_SVR4_NOCRC);  // newc
    CpioEntry c;
    c.type = archive_entry_filetype(e);
    c.perm = archive_entry_perm(e);
    c.rdevmajor = archive_entry_rdevmajor(e);
    c.rdevminor = archive_entry_rdevminor(e);
    CHECK(archive_entry_uid(e) == 0);
    char buf[65536];
    la_ssize_t n;
    while ((n = archive_read_data(a, buf, sizeof buf)) > 0) c.data.append(buf, static_cast<std::size_t>(n));
    out[archive_entry_pathname(e)] = c;
  }
  archive_read_free(a);
  return out;
}

// A kernel directory as `vm setup` leaves it, with its kernel.json.
PreparedKernel fake_prepared(const fs::path& dir, const std::string& label, const std::string& release) {
  PreparedKernel k;
  k.label = label;
  k.release = release;
  k.package = "linux-image-" + release;
  k.package_version = release + "-1";
  k.dir = dir;
  k.vmlinux = dir / "vmlinux";
  k.bzimage = dir / "vmlinuz";
  k.initramfs = dir / "initramfs.cpio.gz";
  k.modules = dir / "root/lib/modules" / release;
  k.rxe_in_netns = label == "7.3";
  spit(k.vmlinux, fake_elf(false));
  spit(k.bzimage, "bz");
  spit(k.initramfs, "cpio");
  spit(k.modules / "modules.dep", "");
  spit(dir / "siw.json", "{\"available\": false, \"why_not\": \"a test kernel\"}");
  REQUIRE(write_kernel_record(k, {"9p"}).ok());
  return k;
}

}  // namespace

TEST_CASE("vm.setup: a .deb unpacks with its files, symlinks, hardlinks and modes") {
  TempDir t;
  for (int filter : {ARCHIVE_FILTER_XZ, ARCHIVE_FILTER_ZSTD}) {
    CAPTURE(filter);
    const fs::path dest = t.path / ("root" + std::to_string(filter));
    fs::create_directories(dest);
    const fs::path deb = write_deb(
        t.path / "pkg.deb",
        {{.name = "./", .type = AE_IFDIR, .perm = 0755},
         {.name = "./usr/lib/modules/6.1.0-test/", .type = AE_IFDIR, .perm = 0700},
         {.name = "./usr/lib/modules/6.1.0-test/kernel/a.ko", .perm = 0600, .data = "module"},
         {.name = "./usr/bin/tool", .perm = 04755, .data = "#!/bin/sh\n"},
         {.name = "./usr/lib/modules/6.1.0-test/vmlinuz", .type = AE_IFLNK, .data = "kernel/a.ko"},
         {.name = "./usr/lib/modules/6.1.0-test/build", .type = AE_IFLNK, .data = "/usr/src/x"},
         {.name = "./usr/share/hard.ko", .data = "./usr/lib/modules/6.1.0-test/kernel/a.ko", .hardlink = true}},
        filter);
    auto r = unpack_deb(deb, dest);
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK(r->files == 3);
    CHECK(slurp(dest / "usr/lib/modules/6.1.0-test/kernel/a.ko") == "module");
    CHECK(mode_of(dest / "usr/lib/modules/6.1.0-test/kernel/a.ko") == 0644);  // readable by everyone
    CHECK(mode_of(dest / "usr/lib/modules/6.1.0-test") == 0755);
    CHECK(mode_of(dest / "usr/bin/tool") == 0755);  // executable, no setuid
    CHECK(fs::read_symlink(dest / "usr/lib/modules/6.1.0-test/vmlinuz") == "kernel/a.ko");
    CHECK(fs::read_symlink(dest / "usr/lib/modules/6.1.0-test/build") == "/usr/src/x");
    CHECK(fs::equivalent(dest / "usr/share/hard.ko", dest / "usr/lib/modules/6.1.0-test/kernel/a.ko"));
    // A second package into the same tree replaces what overlaps.
    REQUIRE(unpack_deb(deb, dest).ok());
    CHECK(slurp(dest / "usr/share/hard.ko") == "module");
  }
}

TEST_CASE("vm.setup: a .deb that would write outside its destination is refused") {
  TempDir t;
  const fs::path dest = t.path / "a/root";
  fs::create_directories(dest);
  struct Bad {
    const char* why;
    std::vector<TestEntry> entries;
  };
  const std::vector<Bad> bad = {
      {"'..'", {{.name = "./ok", .data = "x"}, {.name = "../evil", .data = "evil"}}},
      {"'..' inside", {{.name = "./usr/../../evil", .data = "evil"}}},
      {"absolute", {{.name = "/evil", .data = "evil"}}},
      {"through a symlink", {{.name = "./up", .type = AE_IFLNK, .data = ".."}, {.name = "./up/evil", .data = "evil"}}},
      {"hardlink out", {{.name = "./h", .data = "../evil", .hardlink = true}}},
      {"device", {{.name = "./dev/null", .type = AE_IFCHR}}},
  };
  for (const auto& b : bad) {
    CAPTURE(b.why);
    const fs::path deb = write_deb(t.path / "bad.deb", b.entries);
    auto r = unpack_deb(deb, dest);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("refusing to unpack") != std::string::npos);
    CHECK(r.error().message.find(deb.string()) != std::string::npos);
    CHECK_FALSE(fs::exists(t.path / "a/evil"));
    CHECK_FALSE(fs::exists(t.path / "evil"));
  }
}

TEST_CASE("vm.setup: a file that is not a .deb gets a clear error") {
  TempDir t;
  spit(t.path / "x.deb", "this is not an ar archive at all");
  auto r = unpack_deb(t.path / "x.deb", t.path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("x.deb") != std::string::npos);
  auto missing = unpack_deb(t.path / "missing.deb", t.path);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("missing.deb") != std::string::npos);
}

TEST_CASE("vm.setup: vmlinux comes out of a bzImage's payload") {
  const std::string elf = fake_elf(false) + std::string(100000, 'v');
  SUBCASE("xz (6.1), with the appended size") {
    auto r = vmlinux_from_bzimage(bzimage_with_payload(with_size(compress(ARCHIVE_FILTER_XZ, elf), elf.size())));
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK(*r == elf);
  }
  SUBCASE("zstd (7.3), with the appended size") {
    auto r = vmlinux_from_bzimage(bzimage_with_payload(with_size(compress(ARCHIVE_FILTER_ZSTD, elf), elf.size()), 30));
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK(*r == elf);
  }
  SUBCASE("gzip, without one") {
    auto r = vmlinux_from_bzimage(bzimage_with_payload(compress(ARCHIVE_FILTER_GZIP, elf)));
    REQUIRE_MESSAGE(r.ok(), r.error().message);
    CHECK(*r == elf);
  }
  SUBCASE("setup_sects 0 means 4") {
    std::string image = bzimage_with_payload(with_size(compress(ARCHIVE_FILTER_XZ, elf), elf.size()), 4);
    image[0x1f1] = 0;
    CHECK(vmlinux_from_bzimage(image).ok());
  }
  SUBCASE("a wrong appended size") {
    auto r = vmlinux_from_bzimage(bzimage_with_payload(with_size(compress(ARCHIVE_FILTER_XZ, elf), elf.size() + 1)));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("header says") != std::string::npos);
  }
  SUBCASE("not an ELF inside") {
    const std::string text(5000, 't');
    auto r = vmlinux_from_bzimage(bzimage_with_payload(with_size(compress(ARCHIVE_FILTER_XZ, text), text.size())));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("ELF") != std::string::npos);
  }
  SUBCASE("not a bzImage") {
    auto r = vmlinux_from_bzimage(std::string(4096, 'x'));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("not an x86 bzImage") != std::string::npos);
  }
  SUBCASE("a payload past the end of the file") {
    std::string image = bzimage_with_payload(with_size(compress(ARCHIVE_FILTER_XZ, elf), elf.size()));
    put_le32(image, 0x24c, 0x7fffffff);
    auto r = vmlinux_from_bzimage(image);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("outside") != std::string::npos);
  }
  SUBCASE("uncompressed data") {
    auto r = vmlinux_from_bzimage(bzimage_with_payload(with_size(elf, elf.size())));
    REQUIRE_FALSE(r.ok());
  }
}

TEST_CASE("vm.setup: extract_vmlinux writes the ELF kernel next to the bzImage") {
  TempDir t;
  const std::string elf = fake_elf(false);
  spit(t.path / "vmlinuz", bzimage_with_payload(with_size(compress(ARCHIVE_FILTER_XZ, elf), elf.size())));
  REQUIRE(extract_vmlinux(t.path / "vmlinuz", t.path / "vmlinux").ok());
  CHECK(slurp(t.path / "vmlinux") == elf);
  CHECK(mode_of(t.path / "vmlinux") == 0644);
  spit(t.path / "broken", "no");
  auto r = extract_vmlinux(t.path / "broken", t.path / "vmlinux2");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find((t.path / "broken").string()) != std::string::npos);
  CHECK_FALSE(fs::exists(t.path / "vmlinux2"));
}

TEST_CASE("vm.setup: modules are decompressed in place") {
  TempDir t;
  const fs::path dir = t.path / "lib/modules/7.3.0-test";
  const std::string ko = fake_elf(false) + std::string(3000, 'm');
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("kernel/m" + std::to_string(i));
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int filter = i % 3 == 0 ? ARCHIVE_FILTER_XZ : i % 3 == 1 ? ARCHIVE_FILTER_ZSTD : ARCHIVE_FILTER_GZIP;
    const char* ext = i % 3 == 0 ? ".ko.xz" : i % 3 == 1 ? ".ko.zst" : ".ko.gz";
    spit(dir / (names[i] + ext), compress(filter, ko + names[i]));
  }
  spit(dir / "kernel/plain.ko", ko);
  spit(dir / "modules.order", "kernel/m0.ko\n");
  auto r = decompress_modules(dir, 2);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(*r == names.size());
  for (const auto& n : names) {
    CHECK(slurp(dir / (n + ".ko")) == ko + n);
    CHECK(mode_of(dir / (n + ".ko")) == 0644);
    CHECK_FALSE(fs::exists(dir / (n + ".ko.xz")));
  }
  CHECK(slurp(dir / "kernel/plain.ko") == ko);
  // Idempotent: nothing left to do.
  auto again = decompress_modules(dir, 2);
  REQUIRE(again.ok());
  CHECK(*again == 0);
  // A damaged module fails with its name.
  spit(dir / "kernel/bad.ko.xz", "not xz");
  auto bad = decompress_modules(dir, 2);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("bad.ko.xz") != std::string::npos);
}

TEST_CASE("vm.setup: merged-/usr trees get lib -> usr/lib and their release is found") {
  TempDir t;
  fs::create_directories(t.path / "usr/lib/modules/7.3.4+deb13-amd64");
  REQUIRE(link_merged_usr(t.path).ok());
  CHECK(fs::read_symlink(t.path / "lib") == "usr/lib");
  REQUIRE(link_merged_usr(t.path).ok());  // idempotent
  auto rel = module_release(t.path);
  REQUIRE(rel.ok());
  CHECK(*rel == "7.3.4+deb13-amd64");
  fs::create_directories(t.path / "usr/lib/modules/7.3.5");
  CHECK_FALSE(module_release(t.path).ok());  // two releases: which one?
  TempDir empty;
  auto none = module_release(empty.path);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("no module tree") != std::string::npos);
}

TEST_CASE("vm.setup: the initramfs is a gzip'd newc cpio with /init, busybox, /dev/console and the modules") {
  TempDir t;
  spit(t.path / "busybox", fake_elf(false));
  const std::string ko_a = fake_elf(false) + "virtio";
  const std::string ko_b = fake_elf(false) + "9p";
  spit(t.path / "tree/virtio_mmio.ko", ko_a);
  spit(t.path / "tree/9p.ko.xz", compress(ARCHIVE_FILTER_XZ, ko_b));
  InitramfsSpec spec;
  spec.init = std::string(stage1_init_script());
  spec.busybox = t.path / "busybox";
  spec.modules = {{"virtio_mmio", t.path / "tree/virtio_mmio.ko"}, {"9p", t.path / "tree/9p.ko.xz"}};
  const fs::path out = t.path / "initramfs.cpio.gz";
  auto r = write_initramfs(out, spec);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(mode_of(out) == 0644);
  CHECK_FALSE(fs::exists(out.string() + ".tmp"));

  auto entries = read_cpio(out);
  for (const char* d : {"bin", "dev", "proc", "sys", "lower", "upper", "newroot", "modules"}) {
    CAPTURE(d);
    REQUIRE(entries.count(d));
    CHECK(entries[d].type == AE_IFDIR);
    CHECK(entries[d].perm == 0755);
  }
  CHECK(entries["init"].type == AE_IFREG);
  CHECK(entries["init"].perm == 0755);
  CHECK(entries["init"].data == stage1_init_script());
  CHECK(entries["bin/busybox"].perm == 0755);
  CHECK(entries["bin/busybox"].data == fake_elf(false));
  CHECK(entries["dev/console"].type == AE_IFCHR);
  CHECK(entries["dev/console"].perm == 0600);
  CHECK(entries["dev/console"].rdevmajor == 5);
  CHECK(entries["dev/console"].rdevminor == 1);
  CHECK(entries["modules/virtio_mmio.ko"].data == ko_a);
  CHECK(entries["modules/9p.ko"].data == ko_b);  // decompressed
  CHECK(entries["modules/order"].data == "virtio_mmio\n9p\n");
  CHECK(entries.size() == 14);

  // The same inputs give the same bytes (no timestamps).
  const std::string first = slurp(out);
  REQUIRE(write_initramfs(out, spec).ok());
  CHECK(slurp(out) == first);

  // An independent reader: GNU cpio, when installed.
  if (::access("/usr/bin/cpio", X_OK) == 0) {
    const fs::path plain = t.path / "initramfs.cpio";
    auto raw = decompress_buffer(first, "initramfs");
    REQUIRE(raw.ok());
    spit(plain, *raw);
    const std::string listing = testing::command_output("cpio -itv --quiet -F " + plain.string());
    CHECK(listing.find("crw-------") != std::string::npos);
    CHECK(listing.find("dev/console") != std::string::npos);
    CHECK(listing.find("-rwxr-xr-x   1 root     root") != std::string::npos);
    const std::string names = testing::command_output("cpio -it --quiet -F " + plain.string());
    CHECK(names ==
          "bin\ndev\nproc\nsys\nlower\nupper\nnewroot\nmodules\ndev/console\ninit\nbin/busybox\n"
          "modules/virtio_mmio.ko\nmodules/9p.ko\nmodules/order");
  }
}

// In a prepared kernel's real module tree (depmod's indexes): a module the
// initramfs needs and the tree lacks is an error, an optional one (a node's
// device drivers) is left out when absent and brought with its
// dependencies when present.
TEST_CASE("vm.setup: a boot module the tree lacks is an error, an optional one is left out") {
  const auto prepared = prepared_kernels(search_dirs());
  if (prepared.empty()) testing::skip_test("no lab kernel is prepared (rxerun vm setup)");
  const fs::path moddir = prepared.front().modules;
  auto names = [](const std::vector<BootModule>& mods) {
    std::vector<std::string> out;
    for (const auto& m : mods) out.push_back(m.name);
    return out;
  };
  auto base = resolve_boot_modules(moddir, kInitramfsModules);
  REQUIRE_MESSAGE(base.ok(), base.error().message);
  auto with = resolve_boot_modules(moddir, kInitramfsModules, {"rxerun_no_such_module", "virtio_net"});
  REQUIRE_MESSAGE(with.ok(), with.error().message);
  const auto all = names(*with);
  CHECK(std::count(all.begin(), all.end(), "rxerun_no_such_module") == 0);
  // Debian builds virtio_net as a module, after its dependency net_failover.
  const auto net = std::find(all.begin(), all.end(), "virtio_net");
  REQUIRE(net != all.end());
  CHECK(std::find(all.begin(), net, "net_failover") != net);
  CHECK(all.size() > base->size());
  auto missing = resolve_boot_modules(moddir, {"rxerun_no_such_module"});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("module rxerun_no_such_module is neither in") == 0);
}

TEST_CASE("vm.setup: the initramfs needs a static busybox") {
  TempDir t;
  spit(t.path / "dynamic", fake_elf(true));
  auto dynamic = check_static_busybox(t.path / "dynamic");
  REQUIRE_FALSE(dynamic.ok());
  CHECK(dynamic.error().message.find("dynamically linked") != std::string::npos);
  CHECK(dynamic.error().message.find("apt-get install busybox-static") != std::string::npos);
  auto missing = check_static_busybox(t.path / "missing");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("apt-get install busybox-static") != std::string::npos);
  spit(t.path / "script", "#!/bin/sh\n");
  CHECK_FALSE(check_static_busybox(t.path / "script").ok());
  spit(t.path / "static", fake_elf(false));
  CHECK(check_static_busybox(t.path / "static").ok());

  InitramfsSpec spec;
  spec.busybox = t.path / "dynamic";
  auto r = write_initramfs(t.path / "initramfs.cpio.gz", spec);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("busybox-static") != std::string::npos);
  CHECK_FALSE(fs::exists(t.path / "initramfs.cpio.gz"));
}

TEST_CASE("vm.setup: apt-cache show output is parsed") {
  const std::string text =
      "Package: linux-image-amd64\n"
      "Version: 7.3.4-1~bpo13+1\n"
      "Installed-Size: 13\n"
      "Depends: linux-base-amd64 (= 7.3.4-1~bpo13+1), linux-image-7.3.4+deb13-amd64 (= 7.3.4-1~bpo13+1),\n"
      " linux-modules-amd64 (= 7.3.4-1~bpo13+1)\n"
      "Description: Linux\n"
      " continued\n"
      "Size: 1480\n"
      "\n"
      "Package: linux-image-7.3.4+deb13-amd64\n"
      "Version: 1:7.3.4-1\n"
      "Pre-Depends: kmod:any\n"
      "Depends: dracut | initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool, linux-binary-7.3.4+deb13-amd64 "
      "(= 7.3.4-1~bpo13+1)\n"
      "Size: 1900\n";
  auto p = parse_apt_packages(text);
  REQUIRE(p.size() == 2);
  CHECK(p[0].name == "linux-image-amd64");
  CHECK(p[0].version == "7.3.4-1~bpo13+1");
  CHECK(p[0].depends ==
        std::vector<std::string>{"linux-base-amd64", "linux-image-7.3.4+deb13-amd64", "linux-modules-amd64"});
  CHECK(p[0].size == 1480);
  CHECK(p[0].installed_size == 13 * 1024);
  CHECK(p[1].depends == std::vector<std::string>{"kmod", "dracut", "linux-binary-7.3.4+deb13-amd64"});
  CHECK(deb_file_prefix(p[1].name, p[1].version) == "linux-image-7.3.4+deb13-amd64_1%3a7.3.4-1_");
  CHECK(parse_apt_packages("").empty());
}

TEST_CASE("vm.setup: the private apt state has its own sources.list and never names the host's") {
  TempDir t;
  ::setenv("RXERUN_DEBIAN_MIRROR", "http://mirror.example/debian", 1);
  PrivateApt apt(t.path / "apt/7.3", {"trixie-backports", "trixie", "trixie-security"}, "trixie-backports");
  const std::string text = apt.sources_list_text();
  ::unsetenv("RXERUN_DEBIAN_MIRROR");
  CHECK(text.find("http://mirror.example/debian trixie-backports main\n") != std::string::npos);
  CHECK(text.find("http://mirror.example/debian trixie main\n") != std::string::npos);
  CHECK(text.find("http://deb.debian.org/debian-security trixie-security main\n") != std::string::npos);
  if (fs::exists("/usr/share/keyrings/debian-archive-keyring.gpg"))
    CHECK(text.find("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ") != std::string::npos);
  REQUIRE(apt.prepare().ok());
  CHECK(fs::is_directory(t.path / "apt/7.3/lists/partial"));
  CHECK(fs::is_directory(t.path / "apt/7.3/cache"));
  CHECK(slurp(t.path / "apt/7.3/sources.list").find("trixie-backports main") != std::string::npos);
  CHECK_FALSE(apt.lists_fresh());  // never updated
  spit(t.path / "apt/7.3/updated", "");
  CHECK_FALSE(apt.lists_fresh());  // no lists
  spit(t.path / "apt/7.3/lists/deb.debian.org_debian_dists_trixie_main_binary-amd64_Packages.lz4", "x");
  CHECK(apt.lists_fresh());
  // A stamp from the future: the clock was set back since it was written.
  const fs::path stamp = t.path / "apt/7.3/updated";
  fs::last_write_time(stamp, fs::file_time_type::clock::now() + std::chrono::hours(1));
  CHECK_FALSE(apt.lists_fresh());
  spit(stamp, "");
  // Other sources make the lists stale.
  PrivateApt other(t.path / "apt/7.3", {"trixie"}, "trixie");
  REQUIRE(other.prepare().ok());
  CHECK_FALSE(other.lists_fresh());
}

TEST_CASE("vm.setup: the known kernels") {
  const auto& sources = kernel_sources();
  REQUIRE(sources.size() == 2);
  CHECK(sources[0].label == "6.1");  // oldest first
  CHECK(sources[1].label == "7.3");
  REQUIRE(find_kernel_source("7.3"));
  CHECK(find_kernel_source("7.3")->rxe_in_netns);
  CHECK(find_kernel_source("7.3")->suites.front() == "trixie-backports");
  CHECK(find_kernel_source("7.3")->default_release == "trixie-backports");
  CHECK_FALSE(find_kernel_source("6.1")->rxe_in_netns);
  CHECK(find_kernel_source("6.1")->suites.front() == "bookworm");
  CHECK(find_kernel_source("5.10") == nullptr);
}

TEST_CASE("vm.setup: cache_dir follows RXERUN_CACHE_DIR") {
  const char* old = std::getenv("RXERUN_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("RXERUN_CACHE_DIR", "/some/where", 1);
  CHECK(cache_dir() == "/some/where");
  CHECK(search_dirs().front() == "/some/where");
  if (::geteuid() != 0) CHECK(search_dirs().back() == "/var/cache/rxerun");
  if (old)
    ::setenv("RXERUN_CACHE_DIR", saved.c_str(), 1);
  else
    ::unsetenv("RXERUN_CACHE_DIR");
}

TEST_CASE("vm.setup: prepared_kernels lists ready kernels, newest first, and ignores broken ones") {
  TempDir a, b;
  fake_prepared(a.path / "kernels/6.1", "6.1", "6.1.0-57-amd64");
  fake_prepared(a.path / "kernels/7.3", "7.3", "7.3.4+deb13-amd64");
  fake_prepared(b.path / "kernels/7.3", "7.3", "7.3.9+deb13-amd64");  // a's wins
  fake_prepared(b.path / "kernels/10.1", "10.1", "10.1.0-1-amd64");
  fake_prepared(b.path / "kernels/6.12", "6.12", "6.12.0-1-amd64");
  fs::remove(b.path / "kernels/6.12/vmlinux");  // a file gone
  fake_prepared(b.path / "kernels/6.6", "6.6", "6.6.0-1-amd64");
  spit(b.path / "kernels/6.6/kernel.json", "{\"format\": 1, \"label\": ");  // broken json
  fake_prepared(b.path / "kernels/5.10", "5.10", "5.10.0-1-amd64");
  fs::remove(b.path / "kernels/5.10/kernel.json");                            // an unfinished setup
  fake_prepared(b.path / "kernels/.4.19.partial", "4.19", "4.19.0-1-amd64");  // staging
  fake_prepared(b.path / "kernels/4.9", "4.9", "4.9.0-1-amd64");
  auto j = nlohmann::json::parse(slurp(b.path / "kernels/4.9/kernel.json"));
  j["format"] = kKernelRecordFormat + 1;
  spit(b.path / "kernels/4.9/kernel.json", j.dump());  // a newer rxerun's

  auto k = prepared_kernels({a.path, b.path, a.path / "missing"});
  std::vector<std::string> labels;
  for (const auto& p : k) labels.push_back(p.label);
  CHECK(labels == std::vector<std::string>{"10.1", "7.3", "6.1"});
  REQUIRE(k.size() == 3);
  CHECK(k[1].release == "7.3.4+deb13-amd64");
  CHECK(k[1].dir == a.path / "kernels/7.3");
  CHECK(k[1].rxe_in_netns);
  CHECK(k[1].vmlinux == a.path / "kernels/7.3/vmlinux");
  CHECK(k[1].modules == a.path / "kernels/7.3/root/lib/modules/7.3.4+deb13-amd64");
  CHECK(k[2].package == "linux-image-6.1.0-57-amd64");
  CHECK(prepared_kernels({}).empty());
}

TEST_CASE("vm.setup: an interrupted setup leaves no kernel that looks prepared") {
  TempDir t;
  int p[2];
  REQUIRE(::pipe(p) == 0);
  REQUIRE(::write(p[1], "x", 1) == 1);  // Ctrl-C already pressed
  std::vector<std::string> lines;
  auto r = setup_kernel(
      t.path, *find_kernel_source("7.3"), [&](const std::string& l) { lines.push_back(l); }, p[0]);
  ::close(p[0]);
  ::close(p[1]);
  REQUIRE_FALSE(r.ok());
  CHECK(prepared_kernels({t.path}).empty());
  CHECK_FALSE(fs::exists(t.path / "kernels/7.3"));
  // What the stopped attempt left is empty but for its (reusable) downloads.
  if (fs::exists(t.path / "kernels/.7.3.partial"))
    for (const auto& e : fs::directory_iterator(t.path / "kernels/.7.3.partial")) CHECK(e.path().filename() == "debs");
}

TEST_CASE("vm.setup: a prepared kernel is returned as it is, without network or busybox") {
  TempDir t;
  const PreparedKernel k = fake_prepared(t.path / "kernels/7.3", "7.3", "7.3.4+deb13-amd64");
  const std::string record = slurp(k.dir / "kernel.json");
  std::vector<std::string> lines;
  auto r = setup_kernel(t.path, *find_kernel_source("7.3"), [&](const std::string& l) { lines.push_back(l); });
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->release == k.release);
  CHECK(r->initramfs == k.initramfs);
  CHECK(lines.empty());
  CHECK(slurp(k.dir / "kernel.json") == record);
  CHECK(slurp(k.initramfs) == "cpio");
  CHECK_FALSE(fs::exists(t.path / "apt"));  // no apt-get ran
}

TEST_CASE("vm.setup: a prepared kernel not yet tried for siw stays ready when siw cannot be built now") {
  TempDir t;
  const PreparedKernel k = fake_prepared(t.path / "kernels/6.1", "6.1", "6.1.0-57-amd64");
  fs::remove(k.dir / "siw.json");
  ::setenv("RXERUN_DEBIAN_MIRROR", "http://127.0.0.1:9", 1);  // nothing listens: apt fails at once
  std::vector<std::string> lines;
  auto r = setup_kernel(t.path, *find_kernel_source("6.1"), [&](const std::string& l) { lines.push_back(l); });
  ::unsetenv("RXERUN_DEBIAN_MIRROR");
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->release == k.release);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  CAPTURE(all);
  CHECK(all.find("siw was not built (") != std::string::npos);
  CHECK(all.find("the next `rxerun vm setup` tries again") != std::string::npos);
  CHECK_FALSE(fs::exists(k.dir / "siw.json"));  // nothing recorded: tried again next time
}

TEST_CASE("vm.setup: the kernel record round-trips and guards its format") {
  TempDir t;
  const PreparedKernel k = fake_prepared(t.path / "k", "6.1", "6.1.0-57-amd64");
  auto rec = load_kernel_record(k.dir);
  REQUIRE(rec);
  CHECK(rec->kernel.package_version == "6.1.0-57-amd64-1");
  CHECK(rec->kernel.modules == k.modules);
  CHECK(rec->initramfs_inputs == initramfs_inputs());
  CHECK(rec->initramfs_modules == std::vector<std::string>{"9p"});
  CHECK(mode_of(k.dir / "kernel.json") == 0644);
  CHECK_FALSE(fs::exists(k.dir / "kernel.json.tmp"));
  auto j = nlohmann::json::parse(slurp(k.dir / "kernel.json"));
  CHECK(j["format"] == kKernelRecordFormat);
  j.erase("release");
  spit(k.dir / "kernel.json", j.dump());
  CHECK_FALSE(load_kernel_record(k.dir));
}

// Fetches bookworm's real kernel: ~70 MB download, 30-60 s. Run with
// `ctest -L network` (registered in tests/CMakeLists.txt; skipped in the
// default list, doctest::skip).
TEST_CASE("vm.setup: real 6.1" * doctest::skip()) {
  addrinfo* ai = nullptr;
  if (::getaddrinfo("deb.debian.org", "80", nullptr, &ai) != 0) testing::skip_test("no network (deb.debian.org)");
  ::freeaddrinfo(ai);
  if (!check_static_busybox(kHostBusybox).ok()) testing::skip_test("busybox-static is not installed");
  TempDir t;
  std::vector<std::string> lines;
  auto say = [&](const std::string& l) {
    lines.push_back(l);
    MESSAGE(l);
  };
  auto r = setup_kernel(t.path, *find_kernel_source("6.1"), say);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  const PreparedKernel k = *r;
  CHECK(k.label == "6.1");
  CHECK(k.package == "linux-image-" + k.release);
  CHECK(k.release.rfind("6.1.0-", 0) == 0);
  CHECK(slurp(k.vmlinux).substr(0, 4) ==
        "\x7f"
        "ELF");
  CHECK(fs::is_regular_file(k.modules / "modules.dep"));
  CHECK(fs::is_regular_file(k.modules / "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko"));
  auto entries = read_cpio(k.initramfs);
  // A node's device drivers last (kInitramfsNodeModules): virtio_net after
  // its dependencies, virtio_console (a module in 6.1).
  CHECK(entries["modules/order"].data ==
        "virtio_ring\nvirtio\nvirtio_mmio\n9pnet\n9pnet_virtio\nnetfs\nfscache\n9p\noverlay\n"
        "failover\nnet_failover\nvirtio_net\nvirtio_console\n");
  CHECK(mode_of(k.dir) == 0755);
  CHECK(mode_of(k.initramfs) == 0644);
  auto listed = prepared_kernels({t.path});
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].release == k.release);

  // Again: nothing to do, nothing changes.
  const auto json_before = slurp(k.dir / "kernel.json");
  const auto mtime = fs::last_write_time(k.dir / "kernel.json");
  lines.clear();
  auto again = setup_kernel(t.path, *find_kernel_source("6.1"), say);
  REQUIRE(again.ok());
  CHECK(lines.empty());
  CHECK(again->vmlinux == k.vmlinux);
  CHECK(slurp(k.dir / "kernel.json") == json_before);
  CHECK(fs::last_write_time(k.dir / "kernel.json") == mtime);

  // A changed boot protocol (recorded inputs differ): only the initramfs is rebuilt.
  auto j = nlohmann::json::parse(json_before);
  j["initramfs_inputs"] = "changed";
  spit(k.dir / "kernel.json", j.dump());
  lines.clear();
  auto refreshed = setup_kernel(t.path, *find_kernel_source("6.1"), say);
  REQUIRE_MESSAGE(refreshed.ok(), refreshed.error().message);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("rebuilding the initramfs") != std::string::npos);
  CHECK(load_kernel_record(k.dir)->initramfs_inputs == initramfs_inputs());
  CHECK(fs::last_write_time(k.vmlinux) < fs::last_write_time(k.initramfs));
}

TEST_CASE("vm.setup: part of a tarball unpacks, by the .deb rules (the siw sources of linux-source)") {
  TempDir t;
  const fs::path tarball = t.path / "linux-source-6.1.tar.xz";
  spit(tarball,
       write_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_XZ,
                     {{.name = "linux-source-6.1/", .type = AE_IFDIR, .perm = 0755},
                      {.name = "linux-source-6.1/Makefile", .data = "all:\n"},
                      {.name = "linux-source-6.1/drivers/infiniband/sw/siw/siw_main.c", .data = "int x;\n"},
                      {.name = "linux-source-6.1/drivers/infiniband/sw/siw/Makefile", .data = "obj-m += siw.o\n"},
                      {.name = "linux-source-6.1/drivers/infiniband/sw/rxe/rxe.c", .data = "int y;\n"}}));
  const fs::path dest = t.path / "src";
  fs::create_directories(dest);
  auto r = unpack_tarball(tarball, "linux-source-6.1/drivers/infiniband/sw/siw/", dest);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->files == 2);
  CHECK(slurp(dest / "linux-source-6.1/drivers/infiniband/sw/siw/siw_main.c") == "int x;\n");
  CHECK_FALSE(fs::exists(dest / "linux-source-6.1/drivers/infiniband/sw/rxe"));
  CHECK_FALSE(fs::exists(dest / "linux-source-6.1/Makefile"));

  spit(tarball,
       write_archive(ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, ARCHIVE_FILTER_XZ,
                     {{.name = "linux-source-6.1/drivers/infiniband/sw/siw/../../../../../evil", .data = "x"}}));
  auto bad = unpack_tarball(tarball, "linux-source-6.1/drivers/infiniband/sw/siw/", dest);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("refusing to unpack") != std::string::npos);
  CHECK_FALSE(fs::exists(t.path / "evil"));
}

TEST_CASE("vm.setup: the compiler a kernel's headers name") {
  // Debian's linux-headers-6.1.0-57-amd64/.kernelvariables, and trixie's.
  CHECK(headers_compiler("override ARCH = x86\noverride KERNELRELEASE = 6.1.0-57-amd64\nCCACHE = ccache\n"
                         "CC = $(if $(DEBIAN_KERNEL_USE_CCACHE),$(CCACHE)) $(CROSS_COMPILE)gcc-12\n") == "gcc-12");
  CHECK(headers_compiler("CC = $(if $(DEBIAN_KERNEL_USE_CCACHE),$(CCACHE)) $(CROSS_COMPILE)gcc-14\n") == "gcc-14");
  CHECK(headers_compiler("override ARCH = x86\n") == "");
}

TEST_CASE("vm.setup: the siw outcome is recorded beside the kernel and read back") {
  TempDir t;
  CHECK_FALSE(load_siw_status(t.path));
  spit(t.path / "siw.json", "{\"available\": true, \"how\": \"built from linux-source-6.1 6.1.192-3\"}");
  auto s = load_siw_status(t.path);
  REQUIRE(s);
  CHECK(s->available);
  CHECK(s->how == "built from linux-source-6.1 6.1.192-3");
  spit(t.path / "siw.json", "not json");
  CHECK_FALSE(load_siw_status(t.path));
}
