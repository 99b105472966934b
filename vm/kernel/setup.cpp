#include "vm/kernel/setup.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <system_error>

#include "base/duration.h"
#include "base/fd.h"
#include "base/strings.h"
#include "vm/boot_protocol.h"
#include "vm/files.h"
#include "vm/initramfs.h"
#include "vm/interrupt_check.h"
#include "vm/kernel/apt_private.h"
#include "vm/kernel/deb.h"
#include "vm/kernel/image.h"
#include "vm/kernel/module_tree.h"
#include "vm/kernel/record.h"
#include "vm/kernel/siw_build.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

constexpr unsigned kDecompressThreads = 2;  // the machines have two cores

std::string elapsed_text(std::chrono::steady_clock::time_point t0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds_since(t0));
  return buf;
}

// Creates `dir` and its missing parents, each readable by everyone whatever
// the umask (a non-root user's `--vm` reads root's /var/cache/rxerun).
// An flock on CACHE/lock for the whole setup: two `vm setup`s (or `scripts/
// setup` and a user) never build into the same directory at once.
class CacheLock {
 public:
  Result<void> acquire(const fs::path& cache, const std::function<void(const std::string&)>& say, int interrupt_fd) {
    const fs::path path = cache / "lock";
    fd_.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!fd_.valid()) return io_error("open", path, errno);
    bool told = false;
    while (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) return io_error("lock", path, errno);
      if (!told) say("waiting for another `rxerun vm setup` to finish (it holds " + path.string() + ")");
      told = true;
      pollfd p{interrupt_fd, POLLIN, 0};
      if (::poll(&p, 1, 200) > 0 && (p.revents & POLLIN)) return make_error("interrupted", EINTR);
    }
    return {};
  }

 private:
  UniqueFd fd_;  // closing it releases the flock
};

// The staging directory of a build that did not finish: everything but the
// downloaded packages goes (a tree of several hundred MB), on failure and
// before a new attempt.
Result<void> clear_staging(const fs::path& staging) {
  std::error_code ec;
  std::vector<fs::path> doomed;  // listed first: removing while iterating may skip entries
  for (fs::directory_iterator it(staging, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != "debs") doomed.push_back(it->path());
  for (const auto& p : doomed)
    if (auto r = remove_tree(p); !r) return r;
  return {};
}

struct Packages {
  AptPackage image;             // linux-image-ABI
  std::vector<AptPackage> all;  // image first, then its linux-*-ABI parts
};

// linux-image-amd64's versioned dependency (the ABI package), then the
// packages a split kernel (trixie and later) puts its parts in: every
// linux-*-ABI it depends on, transitively.
// For a kernel looked up by version (KernelSource::image_version), the
// newest linux-image-VERSION.N...-amd64 of any suite instead.
Result<std::string> image_package_name(PrivateApt& apt, const KernelSource& source) {
  if (!source.image_version.empty()) {
    auto names = apt.names("linux-image-" + source.image_version);
    if (!names) return names.error();
    std::string name = select_image_package(*names, source.image_version);
    if (name.empty())
      return make_error("Debian has no kernel " + source.image_version + ": no linux-image-" + source.image_version +
                        ".*-amd64 package in " + join(source.suites, ", ") + " (package lists in " +
                        apt.state().string() + ")");
    return name;
  }
  auto meta = apt.show({"linux-image-amd64"});
  if (!meta) return meta.error();
  std::string image_name;
  for (const auto& d : meta->front().depends)
    if (d.rfind("linux-image-", 0) == 0 && d.size() > 12 && std::isdigit(static_cast<unsigned char>(d[12])))
      image_name = d;
  if (image_name.empty())
    return make_error("linux-image-amd64 " + meta->front().version + " depends on no linux-image-VERSION package");
  return image_name;
}

Result<Packages> resolve_packages(PrivateApt& apt, const KernelSource& source) {
  auto found = image_package_name(apt, source);
  if (!found) return found.error();
  const std::string image_name = *found;
  const std::string abi_suffix = "-" + image_name.substr(12);

  Packages out;
  std::set<std::string> seen = {image_name};
  std::vector<std::string> level = {image_name};
  while (!level.empty()) {
    auto shown = apt.show(level);
    if (!shown) return shown.error();
    level.clear();
    for (auto& p : *shown) {
      for (const auto& d : p.depends)
        if (d.rfind("linux-", 0) == 0 && d.size() > abi_suffix.size() &&
            d.compare(d.size() - abi_suffix.size(), abi_suffix.size(), abi_suffix) == 0 && seen.insert(d).second)
          level.push_back(d);
      if (p.name == image_name) out.image = p;
      out.all.push_back(std::move(p));
    }
  }
  std::stable_partition(out.all.begin(), out.all.end(), [&](const AptPackage& p) { return p.name == image_name; });
  return out;
}

// The private apt state: CACHE/apt/LABEL for a known kernel; one for every
// kernel looked up by version (they share their suites), CACHE/apt/debian.
fs::path apt_state_dir(const fs::path& cache, const KernelSource& source) {
  return cache / "apt" / (source.image_version.empty() ? source.label : std::string("debian"));
}

Result<void> check_space(const fs::path& dir, std::uint64_t need, const std::string& label) {
  struct statvfs st;
  if (::statvfs(dir.c_str(), &st) != 0) return {};
  const std::uint64_t avail = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  if (avail >= need) return {};
  return make_error("not enough disk space for kernel " + label + " in " + dir.string() + ": it needs about " +
                        megabytes(need) + ", " + megabytes(avail) +
                        " are free (free some space, or set RXERUN_CACHE_DIR to a larger disk)",
                    ENOSPC);
}

// The bzImage: boot/vmlinuz-RELEASE (6.1), or usr/lib/modules/RELEASE/vmlinuz
// in the merged-/usr layout (7.3).
std::optional<fs::path> find_bzimage(const fs::path& root, const std::string& release) {
  for (const fs::path& p : {root / "boot" / ("vmlinuz-" + release), root / "lib/modules" / release / "vmlinuz"})
    if (std::error_code ec; fs::is_regular_file(p, ec)) return p;
  return std::nullopt;
}

Result<void> link_or_copy(const fs::path& from, const fs::path& to) {
  if (::link(from.c_str(), to.c_str()) == 0) return {};
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return io_error("copy " + from.string() + " to", to, ec.value());
  ::chmod(to.c_str(), 0644);
  return {};
}

std::vector<std::string> module_names(const std::vector<BootModule>& modules) {
  std::vector<std::string> names;
  for (const auto& m : modules) names.push_back(m.name);
  return names;
}

class Setup {
 public:
  Setup(fs::path cache, const KernelSource& source, const std::function<void(const std::string&)>& progress,
        int interrupt_fd)
      : cache_(std::move(cache)), source_(source), progress_(progress), interrupt_fd_(interrupt_fd) {}

  Result<PreparedKernel> run() {
    if (auto r = ensure_dir(cache_ / "kernels"); !r) return r.error();
    std::error_code ec;
    cache_ = fs::canonical(cache_, ec);
    if (ec) return io_error("resolve", cache_, ec.value());
    final_ = cache_ / "kernels" / source_.label;
    staging_ = cache_ / "kernels" / ("." + source_.label + ".partial");

    if (auto ready = load_kernel_record(final_);
        ready && ready->initramfs_inputs == initramfs_inputs() && load_siw_status(final_))
      return ready->kernel;  // fast path: nothing to do, nothing changed

    // The initramfs needs busybox-static: say so before a 100 MB download.
    if (auto r = check_static_busybox(kHostBusybox); !r) return r.error();
    CacheLock lock;
    if (auto r = lock.acquire(
            cache_, [this](const std::string& line) { tell(line); }, interrupt_fd_);
        !r)
      return r.error();
    if (auto ready = load_kernel_record(final_)) {  // finished by another setup meanwhile, or an old initramfs
      PreparedKernel kernel = ready->kernel;
      if (ready->initramfs_inputs != initramfs_inputs()) {
        auto refreshed = refresh_initramfs(kernel);
        if (!refreshed) return refreshed.error();
        kernel = *refreshed;
      }
      if (auto r = give_siw(kernel); !r) return r.error();
      return kernel;
    }
    auto built = build();
    if (!built) {
      (void)clear_staging(staging_);
      return built;
    }
    if (auto r = give_siw(*built); !r) return r.error();
    return built;
  }

 private:
  void tell(const std::string& line) const {
    if (progress_) progress_(line);
  }
  Result<void> check_interrupt() const {
    if (interrupt_requested(interrupt_fd_)) return make_error("interrupted", EINTR);
    return {};
  }

  // siw for a kernel built without it (vm/kernel/siw_build.h), once. A
  // failure that may pass next time is told and leaves setup a success.
  Result<void> give_siw(const PreparedKernel& kernel) {
    if (load_siw_status(kernel.dir)) return {};
    auto later = [&](const Error& e) -> Result<void> {
      if (e.code == EINTR) return e;
      tell("siw was not built (" + e.message + "); the next `rxerun vm setup` tries again");
      return {};
    };
    PrivateApt apt(apt_state_dir(cache_, source_), source_.suites, source_.default_release, interrupt_fd_);
    if (auto r = apt.prepare(); !r) return later(r.error());
    if (!apt.lists_fresh()) {
      tell("updating the package lists of " + join(source_.suites, ", ") + " (private apt state in " +
           apt.state().string() + ")");
      if (auto r = apt.update(); !r) return later(r.error());
    }
    auto siw = ensure_siw(
        kernel, apt, [this](const std::string& line) { tell(line); }, interrupt_fd_);
    if (!siw) return later(siw.error());
    if (!siw->available) tell("no siw: " + siw->why_not);
    return {};
  }

  Result<PreparedKernel> refresh_initramfs(PreparedKernel kernel) {
    tell("rebuilding the initramfs of kernel " + kernel.label + " (rxerun's boot protocol changed)");
    auto modules = write_lab_initramfs(kernel.modules, kernel.initramfs);
    if (!modules) return modules.error();
    if (auto r = write_kernel_record(kernel, module_names(*modules)); !r) return r.error();
    return kernel;
  }

  // Moves what an earlier, unfinished setup left into the staging directory
  // (its downloads are reused), then empties it but for the downloads.
  Result<void> prepare_staging() {
    std::error_code ec;
    if (fs::symlink_status(final_, ec).type() != fs::file_type::not_found) {
      if (!fs::exists(staging_ / "debs", ec) && fs::is_directory(final_ / "debs", ec)) {
        if (auto r = ensure_dir(staging_); !r) return r;
        if (::rename((final_ / "debs").c_str(), (staging_ / "debs").c_str()) != 0)
          return io_error("move", final_ / "debs", errno);
      }
      if (auto r = remove_tree(final_); !r) return r;
    }
    if (auto r = ensure_dir(staging_ / "debs"); !r) return r;
    return clear_staging(staging_);
  }

  Result<PreparedKernel> build() {
    const auto t0 = std::chrono::steady_clock::now();
    if (auto r = prepare_staging(); !r) return r.error();

    PrivateApt apt(apt_state_dir(cache_, source_), source_.suites, source_.default_release, interrupt_fd_);
    if (auto r = ensure_dir(cache_ / "apt"); !r) return r.error();
    if (auto r = apt.prepare(); !r) return r.error();
    bool updated = false;
    auto update = [&]() -> Result<void> {
      tell("updating the package lists of " + join(source_.suites, ", ") + " (private apt state in " +
           apt.state().string() + ")");
      updated = true;
      return apt.update();
    };
    if (!apt.lists_fresh())
      if (auto r = update(); !r) return r.error();

    // Lists up to a day old may name a version the mirror no longer has: on
    // failure, update once and try again.
    auto fetch = [&]() -> Result<std::pair<Packages, std::vector<fs::path>>> {
      auto packages = resolve_packages(apt, source_);
      if (!packages) return packages.error();
      std::uint64_t download = 0;
      for (const auto& p : packages->all) download += p.size;
      // The packages unpack to about 5x their size once the modules are
      // decompressed, plus vmlinux (measured: 6.1 takes 540 MB with its
      // 71 MB package, 7.3 795 MB with 122 MB).
      if (auto r = check_space(staging_, 6 * download + (100u << 20), source_.label); !r) return r.error();
      std::vector<fs::path> debs;
      for (const auto& p : packages->all) {
        if (auto r = check_interrupt(); !r) return r.error();
        tell("downloading " + p.name + " " + p.version + " (" + megabytes(p.size) + ")");
        auto deb = apt.download(p, staging_ / "debs");
        if (!deb) return deb.error();
        debs.push_back(*deb);
      }
      return std::make_pair(std::move(*packages), std::move(debs));
    };
    auto fetched = fetch();
    if (!fetched && !updated && fetched.error().code != EINTR && fetched.error().code != ENOSPC) {
      if (auto r = update(); !r) return r.error();
      fetched = fetch();
    }
    if (!fetched) return fetched.error();
    const auto& [packages, debs] = *fetched;
    if (auto r = remove_stale_debs(debs); !r) return r.error();

    const fs::path root = staging_ / "root";
    if (auto r = ensure_dir(root); !r) return r.error();
    auto t = std::chrono::steady_clock::now();
    std::uint64_t bytes = 0;
    for (const auto& deb : debs) {
      if (auto r = check_interrupt(); !r) return r.error();
      auto u = unpack_deb(deb, root, interrupt_fd_);
      if (!u) return u.error();
      bytes += u->bytes;
    }
    if (auto r = link_merged_usr(root); !r) return r.error();
    auto release = module_release(root);
    if (!release) return release.error();
    tell("unpacked " + std::to_string(debs.size()) + " packages (" + megabytes(bytes) + ", kernel " + *release +
         ") in " + elapsed_text(t));
    const fs::path moddir = root / "lib/modules" / *release;

    auto bzimage = find_bzimage(root, *release);
    if (!bzimage) return make_error("the packages of " + packages.image.name + " hold no vmlinuz for " + *release);
    if (auto r = link_or_copy(*bzimage, staging_ / "vmlinuz"); !r) return r.error();

    t = std::chrono::steady_clock::now();
    auto decompressed = decompress_modules(moddir, kDecompressThreads, interrupt_fd_);
    if (!decompressed) return decompressed.error();
    if (*decompressed) tell("decompressed " + std::to_string(*decompressed) + " modules in " + elapsed_text(t));
    if (auto r = check_interrupt(); !r) return r.error();
    t = std::chrono::steady_clock::now();
    if (auto r = run_depmod(root, *release, interrupt_fd_); !r) return r.error();
    tell("ran depmod in " + elapsed_text(t));

    t = std::chrono::steady_clock::now();
    if (auto r = extract_vmlinux(staging_ / "vmlinuz", staging_ / "vmlinux"); !r) return r.error();
    tell("extracted vmlinux (" + megabytes(fs::file_size(staging_ / "vmlinux")) + ") in " + elapsed_text(t));
    if (auto r = check_interrupt(); !r) return r.error();

    auto boot_modules = write_lab_initramfs(moddir, staging_ / "initramfs.cpio.gz");
    if (!boot_modules) return boot_modules.error();
    std::string names;
    for (const auto& m : *boot_modules) names += " " + m.name;
    tell("built the initramfs (modules:" + names + ")");
    if (auto r = check_interrupt(); !r) return r.error();

    // Everything is in place: the directory gets its final name, then
    // kernel.json (written last, atomically) makes it a prepared kernel.
    if (::rename(staging_.c_str(), final_.c_str()) != 0) return io_error("rename", staging_, errno);
    PreparedKernel k;
    k.label = source_.label;
    k.release = *release;
    k.package = packages.image.name;
    k.package_version = packages.image.version;
    k.dir = final_;
    k.vmlinux = final_ / "vmlinux";
    k.bzimage = final_ / "vmlinuz";
    k.initramfs = final_ / "initramfs.cpio.gz";
    std::error_code ec;
    k.modules = fs::canonical(final_ / "root/lib/modules" / *release, ec);  // no symlink for the guest to follow
    if (ec) return io_error("resolve", final_ / "root/lib/modules" / *release, ec.value());
    k.rxe_in_netns = source_.rxe_in_netns;
    if (auto r = write_kernel_record(k, module_names(*boot_modules)); !r) return r.error();
    tell("kernel " + k.label + " (" + k.release + ", " + k.package + " " + k.package_version + ") ready in " +
         k.dir.string() + " after " + elapsed_text(t0));
    return k;
  }

  // Packages of an older kernel version, from an earlier attempt.
  Result<void> remove_stale_debs(const std::vector<fs::path>& keep) {
    std::error_code ec;
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(staging_ / "debs", ec), end; !ec && it != end; it.increment(ec))
      if (std::find(keep.begin(), keep.end(), it->path()) == keep.end()) stale.push_back(it->path());
    for (const auto& p : stale)
      if (auto r = remove_tree(p); !r) return r;
    return {};
  }

  fs::path cache_;
  const KernelSource& source_;
  const std::function<void(const std::string&)>& progress_;
  int interrupt_fd_;
  fs::path final_;
  fs::path staging_;
};

}  // namespace

Result<PreparedKernel> setup_kernel(const fs::path& cache, const KernelSource& source,
                                    const std::function<void(const std::string&)>& progress, int interrupt_fd) {
  return Setup(cache, source, progress, interrupt_fd).run();
}

}  // namespace rxerun::vm
