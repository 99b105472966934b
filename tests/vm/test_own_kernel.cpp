// Any Debian kernel by version (the choice of its image package, on recorded
// `apt-cache pkgnames` output) and kernels of one's own (finding their files,
// checking their configuration), all without network, qemu or root; "vm.setup:
// real lookup of any version" reads the real package lists (label `network`).

#include <doctest/doctest.h>
#include <netdb.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/strings.h"
#include "support/privileged.h"
#include "vm/files.h"
#include "vm/kernel/apt_private.h"
#include "vm/kernel/catalogue.h"
#include "vm/kernel/image.h"
#include "vm/kernel/own_kernel.h"

namespace fs = std::filesystem;
using namespace rxerun;
using namespace rxerun::vm;

namespace {

struct OwnTempDir {
  fs::path path;
  OwnTempDir() {
    std::string tmpl = (fs::temp_directory_path() / "rxerun-ownkernel-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~OwnTempDir() { fs::remove_all(path); }
};

void put(const fs::path& p, const std::string& data) {
  fs::create_directories(p.parent_path());
  REQUIRE(write_whole_file(p, data).ok());
}

// `apt-cache pkgnames linux-image-` as recorded through the private apt
// state (bookworm, bookworm-security, trixie, trixie-backports).
std::vector<std::string> recorded_pkgnames() {
  auto text = read_whole_file(fs::path(RXERUN_SOURCE_DIR) / "tests/data/vm/apt-pkgnames-linux-image.txt");
  REQUIRE(text.ok());
  std::vector<std::string> names;
  for (const auto& w : split_words(*text))
    if (w.rfind("linux-", 0) == 0) names.push_back(w);
  REQUIRE(names.size() > 200);
  return names;
}

// A bzImage's first bytes with a setup header whose kernel_version points
// at `version`.
std::string bzimage_with_version(const std::string& version) {
  std::string image(0x1000, '\0');
  image[0x1fe] = '\x55';
  image[0x1ff] = '\xaa';
  image.replace(0x202, 4, "HdrS");
  const unsigned at = 0x800;  // kernel_version is relative to 0x200
  image[0x20e] = static_cast<char>((at - 0x200) & 0xff);
  image[0x20f] = static_cast<char>((at - 0x200) >> 8);
  image.replace(at, version.size(), version);
  return image;
}

// A configuration with every option the lab VM needs, as Debian sets them.
std::string lab_config() {
  return "# Automatically generated file; DO NOT EDIT.\n"
         "CONFIG_MODULES=y\nCONFIG_BLK_DEV_INITRD=y\nCONFIG_RD_GZIP=y\nCONFIG_BINFMT_ELF=y\n"
         "CONFIG_BINFMT_SCRIPT=y\nCONFIG_DEVTMPFS=y\nCONFIG_TMPFS=y\nCONFIG_PROC_FS=y\nCONFIG_SYSFS=y\n"
         "CONFIG_SERIAL_8250=y\nCONFIG_SERIAL_8250_CONSOLE=y\nCONFIG_ACPI=y\nCONFIG_PVH=y\n"
         "CONFIG_VIRTIO_MMIO=m\nCONFIG_NET_9P=m\nCONFIG_NET_9P_VIRTIO=m\nCONFIG_9P_FS=m\nCONFIG_OVERLAY_FS=m\n"
         "CONFIG_NET_NS=y\nCONFIG_VETH=m\nCONFIG_INFINIBAND=m\nCONFIG_INFINIBAND_USER_ACCESS=m\n"
         "CONFIG_INFINIBAND_ADDR_TRANS=y\nCONFIG_RDMA_RXE=m\n# CONFIG_RDMA_SIW is not set\nCONFIG_NET_SCH_NETEM=m\n";
}

std::string without(std::string config, const std::string& line) {
  const auto at = config.find(line + "\n");
  REQUIRE(at != std::string::npos);
  return config.erase(at, line.size() + 1);
}

bool names(const std::vector<std::string>& missing, const std::string& option) {
  for (const auto& m : missing)
    if (m.rfind(option + " ", 0) == 0) return true;
  return false;
}

// A kernel build directory as `make` leaves it (only the files rxerun reads).
void fake_build_tree(const fs::path& dir, const std::string& release) {
  put(dir / ".config", lab_config());
  put(dir / "arch/x86/boot/bzImage", bzimage_with_version(release + " (someone@host) #1 SMP"));
  put(dir / "include/config/kernel.release", release + "\n");
  put(dir / "modules.order", "drivers/net/veth.o\nfs/9p/9p.o\n");
  put(dir / "modules.builtin", "kernel/fs/overlayfs/overlay.ko\n");
  put(dir / "modules.builtin.modinfo", "");
}

}  // namespace

TEST_CASE("vm.kernels: a version picks the newest image package of that version, never another's") {
  const auto all = recorded_pkgnames();
  CHECK(select_image_package(all, "6.1") == "linux-image-6.1.0-57-amd64");         // not 6.12, not -cloud-, not -dbg
  CHECK(select_image_package(all, "6.12") == "linux-image-6.12.118+deb12-amd64");  // newer than trixie's 6.12.117
  CHECK(select_image_package(all, "7.3") == "linux-image-7.3.4+deb13-amd64");
  CHECK(select_image_package(all, "7.2") == "linux-image-7.2.12+deb13-amd64");  // 12 > 9 > 6, as numbers
  CHECK(select_image_package(all, "6.19") == "linux-image-6.19.14+deb13-amd64");
  CHECK(select_image_package(all, "7.0") == "linux-image-7.0.13+deb13-amd64");
  CHECK(select_image_package(all, "6.12.107") == "linux-image-6.12.107+deb13-amd64");  // a full version
  CHECK(select_image_package(all, "6.1.0") == "linux-image-6.1.0-57-amd64");
  CHECK(select_image_package(all, "9.9").empty());
  CHECK(select_image_package(all, "6").empty());
  CHECK(select_image_package(all, "6.16.1").empty());  // 6.16.12 is not 6.16.1
}

TEST_CASE("vm.kernels: the signed image wins over the unsigned one, which serves when alone") {
  CHECK(select_image_package({"linux-image-6.1.0-9-amd64-unsigned", "linux-image-6.1.0-9-amd64"}, "6.1") ==
        "linux-image-6.1.0-9-amd64");
  CHECK(select_image_package({"linux-image-6.1.0-9-amd64-unsigned"}, "6.1") == "linux-image-6.1.0-9-amd64-unsigned");
  CHECK(select_image_package({"linux-image-6.1.0-9-amd64-unsigned", "linux-image-6.1.0-10-amd64"}, "6.1") ==
        "linux-image-6.1.0-10-amd64");
  // Metapackages, templates, flavours and debug symbols are no image.
  CHECK(select_image_package(
            {"linux-image-6.12-amd64", "linux-image-6.12-amd64-signed-template", "linux-image-6.12.1+deb13-rt-amd64",
             "linux-image-6.12.1+deb13-amd64-dbg", "linux-image-6.12.1+deb13-cloud-amd64-unsigned"},
            "6.12")
            .empty());
}

TEST_CASE("vm.kernels: labels, versions and the namespace fact") {
  CHECK(is_kernel_version("6.12"));
  CHECK(is_kernel_version("6.1"));
  CHECK(is_kernel_version("6.12.38"));
  CHECK_FALSE(is_kernel_version("6"));
  CHECK_FALSE(is_kernel_version("6.x"));
  CHECK_FALSE(is_kernel_version("6.1.2.3"));
  CHECK_FALSE(is_kernel_version("../6.1"));
  CHECK_FALSE(is_kernel_version(""));

  // The two known kernels keep their suites and defaults.
  const auto known = kernel_source_for("6.1");
  REQUIRE(known);
  CHECK(known->suites.front() == "bookworm");
  CHECK(known->default_release == "bookworm*");
  CHECK(known->image_version.empty());
  const auto any = kernel_source_for("6.12");
  REQUIRE(any);
  CHECK(any->label == "6.12");
  CHECK(any->image_version == "6.12");
  CHECK(any->suites == debian_suites());
  CHECK(any->default_release.empty());
  CHECK_FALSE(any->rxe_in_netns);
  CHECK(kernel_source_for("7.2")->rxe_in_netns);
  CHECK_FALSE(kernel_source_for("nine"));

  CHECK_FALSE(rxe_in_netns_since_release("6.1.0-57-amd64"));
  CHECK_FALSE(rxe_in_netns_since_release("6.12.38+deb13-amd64"));
  CHECK_FALSE(rxe_in_netns_since_release("7.0.13+deb13-amd64"));
  CHECK(rxe_in_netns_since_release("7.1"));
  CHECK(rxe_in_netns_since_release("7.3.4+deb13-amd64"));
  CHECK(rxe_in_netns_since_release("10.0.0"));
  CHECK_FALSE(rxe_in_netns_since_release("linux"));
}

TEST_CASE("vm.kernels: a configuration with everything the lab needs lacks nothing") {
  CHECK(missing_config_options(lab_config(), LabNeeds{.rxe = true, .netem = true}).empty());
  // siw is not set: only a lab that needs it is refused, for that alone.
  const auto siw = missing_config_options(lab_config(), LabNeeds{.siw = true});
  REQUIRE(siw.size() == 1);
  CHECK(siw.front().rfind("CONFIG_RDMA_SIW (", 0) == 0);
}

TEST_CASE("vm.kernels: every missing option is named, modules only where a module will do") {
  std::string config = without(lab_config(), "CONFIG_RDMA_RXE=m");
  config = without(config, "CONFIG_9P_FS=m");
  config = without(config, "CONFIG_SERIAL_8250_CONSOLE=y") + "CONFIG_SERIAL_8250_CONSOLE=m\n";
  const auto missing = missing_config_options(config, LabNeeds{.rxe = true});
  CHECK(missing.size() == 3);
  CHECK(names(missing, "CONFIG_RDMA_RXE"));
  CHECK(names(missing, "CONFIG_9P_FS"));
  CHECK(names(missing, "CONFIG_SERIAL_8250_CONSOLE"));  // the console cannot be a module
  // Without an rxe step, rdma_rxe is not asked for.
  CHECK_FALSE(names(missing_config_options(config, LabNeeds{}), "CONFIG_RDMA_RXE"));
  CHECK_FALSE(names(missing_config_options(lab_config(), LabNeeds{}), "CONFIG_INFINIBAND"));
  // Modules need module support.
  CHECK(names(missing_config_options(without(lab_config(), "CONFIG_MODULES=y"), LabNeeds{}), "CONFIG_MODULES"));
  // "# CONFIG_X is not set" and an empty file.
  CHECK(names(missing_config_options("# CONFIG_ACPI is not set\n", LabNeeds{}), "CONFIG_ACPI"));
  CHECK(missing_config_options("", LabNeeds{.rxe = true}).size() > 20);
}

TEST_CASE("vm.kernels: a prepared Debian kernel's configuration passes the check") {
  // Debian's 6.1 and 7.3 run every lab: the check must agree (skipped
  // where no kernel is prepared).
  std::vector<fs::path> configs;
  std::error_code ec;
  for (fs::directory_iterator k("/var/cache/rxerun/kernels", ec), end; !ec && k != end; k.increment(ec)) {
    std::error_code ec2;
    for (fs::directory_iterator f(k->path() / "root/boot", ec2), e2; !ec2 && f != e2; f.increment(ec2))
      if (f->path().filename().string().starts_with("config-")) configs.push_back(f->path());
    std::error_code ec3;
    for (fs::directory_iterator m(k->path() / "root/usr/lib/modules", ec3), e3; !ec3 && m != e3; m.increment(ec3))
      configs.push_back(m->path() / "config");
  }
  int checked = 0;
  for (const auto& config : configs) {
    std::error_code exists_ec;
    if (!fs::exists(config, exists_ec)) continue;
    auto missing = missing_kernel_options(config, LabNeeds{.rxe = true, .netem = true});
    REQUIRE(missing.ok());
    CHECK_MESSAGE(missing->empty(), config.string() << ": " << join(*missing, "; "));
    ++checked;
  }
  MESSAGE(checked << " prepared configurations checked");
}

TEST_CASE("vm.kernels: the release a bzImage names") {
  CHECK(bzimage_release(bzimage_with_version("6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1 SMP")) ==
        "6.1.0-57-amd64");
  CHECK(bzimage_release(bzimage_with_version("7.3.0-rc1")) == "7.3.0-rc1");
  CHECK(bzimage_release("not a kernel").empty());
  CHECK(bzimage_release(std::string(0x1000, '\0')).empty());
}

TEST_CASE("vm.kernels: a build directory is found with its release, config and image") {
  OwnTempDir t;
  fake_build_tree(t.path / "linux", "7.4.0-rc2+");
  auto f = locate_own_kernel({.path = t.path / "linux"});
  REQUIRE_MESSAGE(f.ok(), f.error().message);
  CHECK(f->build_tree);
  CHECK(f->release == "7.4.0-rc2+");
  CHECK(f->image == t.path / "linux/arch/x86/boot/bzImage");
  CHECK(f->config == t.path / "linux/.config");
  CHECK(f->tree == t.path / "linux");

  // --modules is for an image.
  auto both = locate_own_kernel({.path = t.path / "linux", .modules = t.path});
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().code == EINVAL);
  CHECK(contains(both.error().message, "--modules goes with a kernel image"));

  // Every missing file is named.
  fs::remove(t.path / "linux/arch/x86/boot/bzImage");
  fs::remove(t.path / "linux/modules.order");
  auto broken = locate_own_kernel({.path = t.path / "linux"});
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().code == EINVAL);
  CHECK(contains(broken.error().message, "arch/x86/boot/bzImage"));
  CHECK(contains(broken.error().message, "modules.order"));
  CHECK_FALSE(contains(broken.error().message, ".config"));

  auto nothing = locate_own_kernel({.path = t.path / "nowhere"});
  REQUIRE_FALSE(nothing.ok());
  CHECK(nothing.error().code == EINVAL);
}

TEST_CASE("vm.kernels: an image is found with its modules and its configuration") {
  OwnTempDir t;
  const std::string rel = "6.1.0-57-amd64";
  put(t.path / "boot" / ("vmlinuz-" + rel), bzimage_with_version(rel + " (debian-kernel@lists.debian.org) #1 SMP"));
  const fs::path mods = t.path / "lib/modules" / rel;
  put(mods / "modules.dep", "");

  // No --modules: said, with the directory it wants.
  auto alone = locate_own_kernel({.path = t.path / "boot" / ("vmlinuz-" + rel)});
  REQUIRE_FALSE(alone.ok());
  CHECK(contains(alone.error().message, "--modules DIR"));
  CHECK(contains(alone.error().message, "/lib/modules/" + rel));

  // No configuration anywhere: every place is named.
  auto unconfigured = locate_own_kernel({.path = t.path / "boot" / ("vmlinuz-" + rel), .modules = mods});
  REQUIRE_FALSE(unconfigured.ok());
  CHECK(contains(unconfigured.error().message, "config-" + rel));
  CHECK(contains(unconfigured.error().message, "build/.config"));

  // DIR/build/.config serves, config-RELEASE beside the image wins.
  put(mods / "build/.config", lab_config());
  auto f = locate_own_kernel({.path = t.path / "boot" / ("vmlinuz-" + rel), .modules = mods});
  REQUIRE_MESSAGE(f.ok(), f.error().message);
  CHECK_FALSE(f->build_tree);
  CHECK(f->release == rel);
  CHECK(f->config == mods / "build/.config");
  CHECK(f->tree == mods);
  put(t.path / "boot" / ("config-" + rel), lab_config());
  f = locate_own_kernel({.path = t.path / "boot" / ("vmlinuz-" + rel), .modules = mods});
  REQUIRE(f.ok());
  CHECK(f->config == t.path / "boot" / ("config-" + rel));

  // Modules of another release, or no modules directory.
  const fs::path other = t.path / "lib/modules/6.1.0-9-amd64";
  put(other / "modules.dep", "");
  auto wrong = locate_own_kernel({.path = t.path / "boot" / ("vmlinuz-" + rel), .modules = other});
  REQUIRE_FALSE(wrong.ok());
  CHECK(contains(wrong.error().message, "6.1.0-9-amd64"));
  fs::remove(mods / "modules.dep");
  auto undepmodded = locate_own_kernel({.path = t.path / "boot" / ("vmlinuz-" + rel), .modules = mods});
  REQUIRE_FALSE(undepmodded.ok());
  CHECK(contains(undepmodded.error().message, "modules.dep"));

  // A file that is no kernel image.
  put(t.path / "notes.txt", "hello");
  auto text = locate_own_kernel({.path = t.path / "notes.txt", .modules = mods});
  REQUIRE_FALSE(text.ok());
  CHECK(text.error().code == EINVAL);
  CHECK(contains(text.error().message, "not an x86 kernel image"));
}

// Network (CTest label `network`): the suites' real package lists, looked up
// as `vm setup --kernel VERSION` does, without downloading a kernel.
TEST_CASE("vm.setup: real lookup of any version" * doctest::skip()) {
  addrinfo* ai = nullptr;
  if (::getaddrinfo("deb.debian.org", "80", nullptr, &ai) != 0) testing::skip_test("no network (deb.debian.org)");
  ::freeaddrinfo(ai);
  OwnTempDir t;
  const auto source = kernel_source_for("6.12");
  REQUIRE(source);
  PrivateApt apt(t.path / "apt", source->suites, source->default_release);
  REQUIRE(apt.prepare().ok());
  auto updated = apt.update();
  REQUIRE_MESSAGE(updated.ok(), updated.error().message);
  auto names = apt.names("linux-image-6.1");
  REQUIRE_MESSAGE(names.ok(), names.error().message);
  const std::string v612 = select_image_package(*names, "6.12");
  const std::string v61 = select_image_package(*names, "6.1");
  MESSAGE("6.12: " << v612 << ", 6.1: " << v61);
  CHECK(v612.rfind("linux-image-6.12.", 0) == 0);
  CHECK(v61.rfind("linux-image-6.1.", 0) == 0);
  auto shown = apt.show({v612});  // a candidate apt can download
  REQUIRE_MESSAGE(shown.ok(), shown.error().message);
  auto none = apt.names("linux-image-9.9");
  REQUIRE(none.ok());
  CHECK(select_image_package(*none, "9.9").empty());
}
