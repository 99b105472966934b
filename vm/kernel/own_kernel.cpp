#include "vm/kernel/own_kernel.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <map>
#include <system_error>

#include "base/strings.h"
#include "vm/files.h"
#include "vm/initramfs.h"
#include "vm/interrupt_check.h"
#include "vm/kernel/catalogue.h"
#include "vm/kernel/image.h"
#include "vm/kernel/module_tree.h"
#include "vm/kernel/record.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

// One option the lab VM needs.
struct OptionNeed {
  const char* name;  // without CONFIG_
  bool module_ok;    // =m will do (loaded by the initramfs or by the lab)
  const char* why;
};

// What every lab VM boot needs: lab_vm.cpp's qemu_command (microvm with
// ACPI, a PVH boot of vmlinux, two serial ports, virtio-mmio 9p shares) and
// boot_protocol.cpp's /init (a busybox script on a gzip'd initramfs that
// mounts devtmpfs, 9p, tmpfs and overlayfs).
constexpr OptionNeed kBootOptions[] = {
    {"BLK_DEV_INITRD", false, "the initramfs"},
    {"RD_GZIP", false, "the initramfs is gzip'd"},
    {"BINFMT_ELF", false, "busybox and rxerun"},
    {"BINFMT_SCRIPT", false, "/init is a script"},
    {"DEVTMPFS", false, "/dev"},
    {"TMPFS", false, "the root's writable layer"},
    {"PROC_FS", false, "/proc"},
    {"SYSFS", false, "/sys"},
    {"SERIAL_8250", false, "the console and the output port"},
    {"SERIAL_8250_CONSOLE", false, "the console"},
    {"ACPI", false, "microvm describes its virtio-mmio devices in ACPI"},
    {"PVH", false, "qemu boots vmlinux through its PVH entry"},
    {"VIRTIO_MMIO", true, "the 9p shares' transport"},
    {"NET_9P", true, "the host's root and the run's share"},
    {"NET_9P_VIRTIO", true, "the host's root and the run's share"},
    {"9P_FS", true, "the host's root and the run's share"},
    {"OVERLAY_FS", true, "the root file system"},
    {"NET_NS", false, "the lab's network namespaces"},
    {"VETH", true, "the lab's veth pairs"},
};
constexpr OptionNeed kRdmaOptions[] = {
    {"INFINIBAND", true, "the RDMA stack"},
    {"INFINIBAND_USER_ACCESS", true, "verbs from user space: rping, perftest"},
    {"INFINIBAND_ADDR_TRANS", false, "rdma_cm"},
};
constexpr OptionNeed kRxeOption = {"RDMA_RXE", true, "rdma_rxe, which the scenario's steps use"};
constexpr OptionNeed kSiwOption = {"RDMA_SIW", true, "siw, which the scenario's steps use"};
constexpr OptionNeed kNetemOption = {"NET_SCH_NETEM", true, "netem, which the scenario's steps use"};

// CONFIG_NAME=VALUE lines; "# CONFIG_NAME is not set" and others ignored.
std::map<std::string, std::string> config_values(const std::string& text) {
  std::map<std::string, std::string> values;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string_view line = trim(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
    if (!line.starts_with("CONFIG_")) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    values[std::string(line.substr(7, eq - 7))] = std::string(line.substr(eq + 1));
  }
  return values;
}

struct SourceStamp {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

SourceStamp stamp_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return {};
  return {static_cast<std::uint64_t>(st.st_size),
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

// The installation's name: RELEASE-DIGEST of what it is made from.
std::string own_install_key(const OwnKernelFiles& f) {
  Digest d;
  d.mix(f.tree.string());
  d.mix(initramfs_inputs());
  std::vector<fs::path> inputs = {f.image, f.config};
  if (f.build_tree)
    for (const char* n : {"modules.order", "modules.builtin", "modules.builtin.modinfo"}) inputs.push_back(f.tree / n);
  else
    inputs.push_back(f.tree / "modules.dep");
  for (const auto& p : inputs) {
    const SourceStamp s = stamp_of(p);
    d.mix(p.string());
    d.mix(std::to_string(s.size) + ":" + std::to_string(s.mtime_ns));
  }
  std::string release = f.release;
  for (char& c : release)
    if (c == '/' || c == ' ' || c == ',') c = '_';
  return release + "-" + d.hex();
}

Result<void> copy_into(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return io_error("copy " + from.string() + " to", to, ec.value());
  ::chmod(to.c_str(), 0644);
  return {};
}

// modules.order's entries as paths under the build directory:
// "drivers/net/veth.ko" (kbuild writes .o in newer kernels, .ko in older).
std::vector<std::string> ordered_modules(const std::string& order) {
  std::vector<std::string> out;
  for (std::string line : split_words(order)) {
    if (line.starts_with("kernel/")) line.erase(0, 7);
    if (line.size() > 2 && line.compare(line.size() - 2, 2, ".o") == 0) line.replace(line.size() - 2, 2, ".ko");
    out.push_back(line);
  }
  return out;
}

// The build directory's modules into ROOT/lib/modules/RELEASE/kernel/, with
// modules.order (as modules_install writes it) and the modules.builtin files.
Result<std::size_t> install_build_modules(const OwnKernelFiles& f, const fs::path& moddir, int interrupt_fd) {
  auto order = read_whole_file(f.tree / "modules.order");
  if (!order) return order.error();
  const auto modules = ordered_modules(*order);
  std::vector<std::string> missing;
  std::string installed_order;
  for (const auto& rel : modules) {
    if (interrupt_requested(interrupt_fd)) return make_error("interrupted", EINTR);
    const fs::path from = f.tree / rel;
    if (!is_regular(from)) {
      missing.push_back(rel);
      continue;
    }
    const fs::path to = moddir / "kernel" / rel;
    if (auto r = ensure_dir(to.parent_path()); !r) return r.error();
    if (auto r = copy_into(from, to); !r) return r.error();
    installed_order += "kernel/" + rel + "\n";
  }
  if (!missing.empty())
    return make_error(std::to_string(missing.size()) + " of the modules " + (f.tree / "modules.order").string() +
                          " lists are not built (" + missing.front() + (missing.size() > 1 ? ", ..." : "") +
                          "): run `make modules` (or `make`) first",
                      EINVAL);
  if (auto r = write_whole_file(moddir / "modules.order", installed_order); !r) return r.error();
  for (const char* n : {"modules.builtin", "modules.builtin.modinfo"})
    if (auto r = copy_into(f.tree / n, moddir / n); !r) return r.error();
  return modules.size();
}

// Other installations of the same source (an older build of it): they go
// once a new one is in place.
void remove_older_installs(const fs::path& own, const fs::path& keep, const fs::path& source) {
  std::error_code ec;
  std::vector<fs::path> older;
  for (fs::directory_iterator it(own, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path() == keep || it->path().filename().string().starts_with(".")) continue;
    auto named = read_whole_file(it->path() / "source");
    if (named && *named == source.string() + "\n") older.push_back(it->path());
  }
  for (const auto& p : older) (void)remove_tree(p);
}

}  // namespace

Result<OwnKernelFiles> locate_own_kernel(const OwnKernelRequest& request) {
  OwnKernelFiles f;
  std::error_code ec;
  const fs::path path = fs::absolute(request.path, ec);
  if (ec || !fs::exists(path, ec))
    return make_error("no kernel at " + request.path.string() +
                          ": --kernel PATH names a kernel build directory or "
                          "a kernel image",
                      EINVAL);
  if (fs::is_directory(path, ec)) {
    if (!request.modules.empty())
      return make_error(
          "--modules goes with a kernel image: the build directory " + request.path.string() + " has its modules",
          EINVAL);
    f.build_tree = true;
    f.tree = fs::canonical(path, ec);
    if (ec) return make_error("cannot resolve " + path.string() + ": " + ec.message(), EINVAL);
    std::vector<std::string> missing;
    for (const char* n : {".config", "arch/x86/boot/bzImage", "include/config/kernel.release", "modules.order",
                          "modules.builtin", "modules.builtin.modinfo"})
      if (!is_regular(f.tree / n)) missing.push_back(n);
    if (!missing.empty())
      return make_error(request.path.string() + " is not a built kernel tree: it has no " + join(missing, ", ") +
                            " (configure and build it: `make defconfig`, then `make`)",
                        EINVAL);
    f.image = f.tree / "arch/x86/boot/bzImage";
    f.config = f.tree / ".config";
    auto release = read_whole_file(f.tree / "include/config/kernel.release");
    if (!release) return release.error();
    f.release = std::string(trim(*release));
    if (f.release.empty()) return make_error((f.tree / "include/config/kernel.release").string() + " is empty", EINVAL);
    return f;
  }
  // A kernel image and its modules directory.
  f.image = fs::canonical(path, ec);
  if (ec) return make_error("cannot resolve " + path.string() + ": " + ec.message(), EINVAL);
  auto image = read_whole_file(f.image);
  if (!image) return image.error();
  f.release = bzimage_release(*image);
  if (f.release.empty())
    return make_error(request.path.string() + " is not an x86 kernel image (bzImage) that names its release", EINVAL);
  if (request.modules.empty())
    return make_error("kernel image " + request.path.string() + " (" + f.release +
                          ") needs its modules: --modules DIR (as /lib/modules/" + f.release + ")",
                      EINVAL);
  f.tree = fs::canonical(fs::absolute(request.modules, ec), ec);
  if (ec || !fs::is_directory(f.tree, ec))
    return make_error("--modules " + request.modules.string() + " is not a directory", EINVAL);
  if (!is_regular(f.tree / "modules.dep"))
    return make_error("--modules " + request.modules.string() +
                          " has no modules.dep: name a modules directory as `make modules_install` leaves it "
                          "(/lib/modules/" +
                          f.release + ")",
                      EINVAL);
  if (f.tree.filename() != f.release)
    return make_error("--modules " + request.modules.string() + " is for " + f.tree.filename().string() +
                          ", the image is " + f.release,
                      EINVAL);
  // As in /boot; in the module tree (Debian 13's merged-/usr packages); in
  // the build tree that `make modules_install` links as DIR/build.
  for (const fs::path& c :
       {f.image.parent_path() / ("config-" + f.release), f.tree / "config", f.tree / "build/.config"})
    if (is_regular(c)) {
      f.config = c;
      return f;
    }
  return make_error("no configuration for kernel " + f.release + ": none of " +
                        (f.image.parent_path() / ("config-" + f.release)).string() + ", " +
                        (f.tree / "config").string() + ", " + (f.tree / "build/.config").string() + " exists",
                    EINVAL);
}

std::vector<std::string> missing_config_options(const std::string& config_text, const LabNeeds& needs) {
  const auto values = config_values(config_text);
  std::vector<OptionNeed> wanted(std::begin(kBootOptions), std::end(kBootOptions));
  if (needs.rxe || needs.siw) wanted.insert(wanted.end(), std::begin(kRdmaOptions), std::end(kRdmaOptions));
  if (needs.rxe) wanted.push_back(kRxeOption);
  if (needs.siw) wanted.push_back(kSiwOption);
  if (needs.netem) wanted.push_back(kNetemOption);
  std::vector<std::string> missing;
  bool any_module = false;
  for (const auto& o : wanted) {
    const auto it = values.find(o.name);
    const std::string value = it == values.end() ? "" : it->second;
    if (value == "y") continue;
    if (value == "m" && o.module_ok) {
      any_module = true;
      continue;
    }
    missing.push_back(std::string("CONFIG_") + o.name + " (" + o.why + "; " + (o.module_ok ? "=y or =m" : "=y") +
                      (value == "m" ? ", not =m" : "") + ")");
  }
  if (any_module && values.count("MODULES") == 0) missing.push_back("CONFIG_MODULES (options above are modules; =y)");
  return missing;
}

Result<std::vector<std::string>> missing_kernel_options(const fs::path& config, const LabNeeds& needs) {
  auto text = read_whole_file(config);
  if (!text) return text.error();
  return missing_config_options(*text, needs);
}

Result<PreparedKernel> install_own_kernel(const fs::path& cache, const OwnKernelRequest& request,
                                          const std::function<void(const std::string&)>& progress, int interrupt_fd) {
  auto tell = [&](const std::string& line) {
    if (progress) progress(line);
  };
  auto files = locate_own_kernel(request);
  if (!files) return files.error();
  const fs::path own = cache / "own";
  if (auto r = ensure_dir(own); !r) return r.error();
  const fs::path final_dir = own / own_install_key(*files);
  if (auto ready = load_kernel_record(final_dir)) return ready->kernel;  // unchanged since it was installed
  if (auto r = remove_tree(final_dir); !r) return r.error();             // one that did not finish

  if (auto r = check_static_busybox(kHostBusybox); !r) return r.error();
  const fs::path staging = own / ("." + final_dir.filename().string() + ".partial." + std::to_string(::getpid()));
  (void)remove_tree(staging);
  auto built = [&]() -> Result<PreparedKernel> {
    const fs::path root = staging / "root";
    PreparedKernel k;
    k.label = files->release;
    k.release = files->release;
    k.package = "own kernel";
    k.package_version = (files->build_tree ? files->tree : files->image).string();
    k.dir = final_dir;
    if (auto r = ensure_dir(staging); !r) return r.error();
    if (auto r = copy_into(files->image, staging / "vmlinuz"); !r) return r.error();
    if (auto r = copy_into(files->config, staging / "config"); !r) return r.error();
    fs::path moddir = files->tree;  // an installed modules directory is used where it is
    if (files->build_tree) {
      const fs::path staged_moddir = root / "lib/modules" / files->release;
      if (auto r = ensure_dir(staged_moddir); !r) return r.error();
      auto n = install_build_modules(*files, staged_moddir, interrupt_fd);
      if (!n) return n.error();
      if (auto r = run_depmod(root, files->release, interrupt_fd); !r) return r.error();
      tell("installed " + std::to_string(*n) + " modules and ran depmod");
      moddir = staged_moddir;
    }
    if (auto r = extract_vmlinux(staging / "vmlinuz", staging / "vmlinux"); !r) return r.error();
    if (interrupt_requested(interrupt_fd)) return make_error("interrupted", EINTR);
    auto boot_modules = write_lab_initramfs(moddir, staging / "initramfs.cpio.gz");
    if (!boot_modules) return boot_modules.error();
    if (auto r = write_whole_file(staging / "source", (files->build_tree ? files->tree : files->image).string() + "\n");
        !r)
      return r.error();
    k.vmlinux = final_dir / "vmlinux";
    k.bzimage = final_dir / "vmlinuz";
    k.initramfs = final_dir / "initramfs.cpio.gz";
    k.modules = files->build_tree ? final_dir / "root/lib/modules" / files->release : moddir;
    k.rxe_in_netns = rxe_in_netns_since_release(files->release);
    std::vector<std::string> names;
    for (const auto& m : *boot_modules) names.push_back(m.name);
    if (::rename(staging.c_str(), final_dir.c_str()) != 0) {
      const int err = errno;
      if (auto theirs = load_kernel_record(final_dir)) return theirs->kernel;  // installed meanwhile by another run
      return io_error("rename", staging, err);
    }
    if (auto r = write_kernel_record(k, names); !r) return r.error();
    return k;
  }();
  if (!built) {
    (void)remove_tree(staging);
    return built;
  }
  remove_older_installs(own, final_dir, files->build_tree ? files->tree : files->image);
  tell("installed kernel " + built->release + " in " + built->dir.string());
  return built;
}

}  // namespace rxerun::vm
