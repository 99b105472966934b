#include "vm/kernel/module_tree.h"

#include <libkmod.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "base/strings.h"
#include "sys/process.h"
#include "vm/files.h"
#include "vm/interrupt_check.h"
#include "vm/kernel/decompress.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

std::string_view compressed_suffix(const std::string& name) {
  for (std::string_view s : {".ko.xz", ".ko.zst", ".ko.gz"})
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) return s;
  return {};
}

struct KmodCtxDeleter {
  void operator()(kmod_ctx* c) const { kmod_unref(c); }
};
struct KmodListDeleter {
  void operator()(kmod_list* l) const { kmod_module_unref_list(l); }
};
using KmodCtx = std::unique_ptr<kmod_ctx, KmodCtxDeleter>;
using KmodList = std::unique_ptr<kmod_list, KmodListDeleter>;

// Depth-first, dependencies before the module, each once.
class DependencyOrder {
 public:
  Result<void> add(kmod_module* mod, int depth) {
    const std::string name = kmod_module_get_name(mod);
    if (done_.count(name)) return {};
    if (depth > 64) return make_error("module dependencies loop at " + name);
    const char* path = kmod_module_get_path(mod);
    if (!path) {  // built into the kernel
      done_.insert(name);
      return {};
    }
    KmodList deps(kmod_module_get_dependencies(mod));
    kmod_list* it;
    kmod_list_foreach(it, deps.get()) {
      kmod_module* dep = kmod_module_get_module(it);
      auto r = add(dep, depth + 1);
      kmod_module_unref(dep);
      if (!r) return r;
    }
    done_.insert(name);
    order_.push_back({name, path});
    return {};
  }

  std::vector<BootModule> take() { return std::move(order_); }

 private:
  std::set<std::string> done_;
  std::vector<BootModule> order_;
};

const char* depmod_program() {
  // Debian keeps depmod in /usr/sbin, which a non-root user's PATH lacks.
  for (const char* p : {"/usr/sbin/depmod", "/sbin/depmod"})
    if (::access(p, X_OK) == 0) return p;
  return "depmod";
}

}  // namespace

Result<void> link_merged_usr(const fs::path& root) {
  std::error_code ec;
  if (fs::symlink_status(root / "lib", ec).type() != fs::file_type::not_found) return {};
  if (!fs::is_directory(root / "usr/lib/modules", ec)) return {};
  if (::symlink("usr/lib", (root / "lib").c_str()) != 0) return io_error("create symlink", root / "lib", errno);
  return {};
}

Result<std::string> module_release(const fs::path& root) {
  const fs::path dir = root / "lib/modules";
  std::error_code ec;
  std::vector<std::string> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) found.push_back(it->path().filename().string());
  if (ec) return make_error("the kernel packages hold no module tree (" + dir.string() + ": " + ec.message() + ")");
  if (found.size() != 1)
    return make_error("expected one kernel release under " + dir.string() + ", found " + std::to_string(found.size()));
  return found.front();
}

Result<std::size_t> decompress_modules(const fs::path& dir, unsigned threads, int interrupt_fd) {
  std::vector<fs::path> files;
  std::error_code ec;
  // Not following symlinks: build/ and source/ point into the host's /usr/src.
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !compressed_suffix(it->path().filename().string()).empty())
      files.push_back(it->path());
  if (ec) return make_error("cannot list " + dir.string() + ": " + ec.message(), ec.value());

  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex error_mutex;
  std::optional<Error> first_error;
  auto fail = [&](Error e) {
    std::lock_guard lock(error_mutex);
    if (!first_error) first_error = std::move(e);
    stop = true;
  };
  auto worker = [&] {
    for (std::size_t i; !stop && (i = next++) < files.size();) {
      if (interrupt_requested(interrupt_fd)) {
        fail(make_error("interrupted", EINTR));
        return;
      }
      const fs::path& in = files[i];
      const std::string name = in.string();
      const fs::path out = name.substr(0, name.size() - compressed_suffix(in.filename().string()).size() + 3);
      if (auto r = decompress_file(in, out); !r) {
        fail(r.error());
        return;
      }
      if (::unlink(in.c_str()) != 0) {
        fail(io_error("remove", in, errno));
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(1u, threads); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (first_error) return *first_error;
  return files.size();
}

Result<void> run_depmod(const fs::path& root, const std::string& release, int interrupt_fd) {
  const std::vector<std::string> argv = {depmod_program(), "-b", root.string(), release};
  sys::SpawnOptions options;
  options.env["LC_ALL"] = "C";
  auto r = sys::run_command(argv, std::chrono::minutes(10), options, interrupt_fd);
  if (!r) return make_error(r.error().message + " (depmod comes with kmod: apt-get install kmod)", r.error().code);
  if (r->timed_out)
    return make_error(interrupt_requested(interrupt_fd) ? "interrupted" : shell_join(argv) + " timed out", EINTR);
  if (!r->status.ok())
    return make_error(shell_join(argv) + " failed (" + r->status.describe() + "): " + tail_lines(r->err, 5));
  std::error_code ec;
  if (!fs::exists(root / "lib/modules" / release / "modules.dep.bin", ec))
    return make_error(shell_join(argv) + " wrote no modules.dep.bin");
  return {};
}

Result<std::vector<BootModule>> resolve_boot_modules(const fs::path& moddir, const std::vector<std::string>& names,
                                                     const std::vector<std::string>& optional) {
  // No configuration files: the host's /etc/modprobe.d must not shape the
  // guest's initramfs.
  const char* const no_config[] = {nullptr};
  KmodCtx ctx(kmod_new(moddir.c_str(), no_config));
  if (!ctx) return make_error("libkmod cannot open the module tree " + moddir.string());
  DependencyOrder order;
  std::vector<std::string> all = names;
  all.insert(all.end(), optional.begin(), optional.end());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string& name = all[i];
    kmod_list* raw = nullptr;
    int err = kmod_module_new_from_lookup(ctx.get(), name.c_str(), &raw);
    KmodList found(raw);
    if (err < 0) return make_error("libkmod cannot look up " + name + " in " + moddir.string(), -err);
    if (!found && i >= names.size()) continue;
    if (!found)
      return make_error("module " + name + " is neither in " + moddir.string() +
                        " nor built into the kernel: this kernel cannot boot the lab VM");
    kmod_list* it;
    kmod_list_foreach(it, found.get()) {
      kmod_module* mod = kmod_module_get_module(it);
      auto r = order.add(mod, 0);
      kmod_module_unref(mod);
      if (!r) return r.error();
    }
  }
  return order.take();
}

}  // namespace rxerun::vm
