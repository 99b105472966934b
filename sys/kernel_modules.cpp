#include "sys/kernel_modules.h"

#include <libkmod.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/files.h"
#include "base/strings.h"

namespace rxerun::sys {

namespace {

struct ListDeleter {
  void operator()(kmod_list* l) const { kmod_module_unref_list(l); }
};
using List = std::unique_ptr<kmod_list, ListDeleter>;

struct ModuleDeleter {
  void operator()(kmod_module* m) const { kmod_module_unref(m); }
};
using Module = std::unique_ptr<kmod_module, ModuleDeleter>;

// libkmod prints its own errors on stderr by default; rxerun reports them.
void quiet(void*, int, const char*, int, const char*, const char*, va_list) {}

std::string release() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.release) : std::string("this kernel");
}

bool is_loaded(const kmod_module* m) {
  const int state = kmod_module_get_initstate(m);
  return state == KMOD_MODULE_BUILTIN || state == KMOD_MODULE_LIVE || state == KMOD_MODULE_COMING;
}

}  // namespace

Result<kmod_ctx*> KmodModules::context() {
  if (ctx_) return ctx_;
  ctx_ = kmod_new(nullptr, nullptr);
  if (!ctx_) return make_error("libkmod cannot open the module tree of " + release(), ENOMEM);
  kmod_set_log_fn(ctx_, quiet, nullptr);
  // Without indexes (no modules.dep) lookups still work, only slower.
  (void)kmod_load_resources(ctx_);
  return ctx_;
}

KmodModules::~KmodModules() {
  if (ctx_) kmod_unref(ctx_);
}

// The module a name (or alias) stands for; ENOENT when this kernel has none.
static Result<Module> lookup(kmod_ctx* ctx, const std::string& name) {
  kmod_list* raw = nullptr;
  int rc = kmod_module_new_from_lookup(ctx, name.c_str(), &raw);
  List list(raw);
  if (rc < 0) return make_error("cannot look up module " + name + ": " + std::strerror(-rc), -rc);
  if (!list) return make_error("the kernel " + release() + " has no module " + name, ENOENT);
  return Module(kmod_module_get_module(list.get()));
}

Result<bool> KmodModules::loaded(const std::string& name) {
  auto ctx = context();
  if (!ctx) return ctx.error();
  kmod_module* raw = nullptr;
  if (int rc = kmod_module_new_from_name(*ctx, name.c_str(), &raw); rc < 0)
    return make_error("cannot look up module " + name + ": " + std::strerror(-rc), -rc);
  Module m(raw);
  return is_loaded(m.get());
}

Result<std::vector<std::string>> KmodModules::to_load(const std::string& name) {
  auto ctx = context();
  if (!ctx) return ctx.error();
  auto m = lookup(*ctx, name);
  if (!m) return m.error();
  std::vector<std::string> out;
  if (is_loaded(m->get())) return out;
  out.push_back(kmod_module_get_name(m->get()));
  // modules.dep lists every dependency, not only the direct ones.
  List deps(kmod_module_get_dependencies(m->get()));
  kmod_list* it;
  kmod_list_foreach(it, deps.get()) {
    Module dep(kmod_module_get_module(it));
    if (!is_loaded(dep.get())) out.push_back(kmod_module_get_name(dep.get()));
  }
  return out;
}

Result<void> KmodModules::load(const std::string& name, const std::string& options) {
  auto ctx = context();
  if (!ctx) return ctx.error();
  auto m = lookup(*ctx, name);
  if (!m) return m.error();
  const int rc = kmod_module_probe_insert_module(
      m->get(), KMOD_PROBE_IGNORE_COMMAND, options.empty() ? nullptr : options.c_str(), nullptr, nullptr, nullptr);
  if (rc == 0) return {};
  const int code = rc < 0 ? -rc : EPERM;  // > 0: refused by a blacklist
  std::string message = "cannot load module " + name + ": " + std::strerror(code);
  if (code == EPERM) message += " (needs root: CAP_SYS_MODULE)";
  if (code == EINVAL && !options.empty()) message += " (with options '" + options + "': see the kernel log)";
  return make_error(std::move(message), code);
}

Result<void> KmodModules::unload(const std::string& name) {
  auto ctx = context();
  if (!ctx) return ctx.error();
  kmod_module* raw = nullptr;
  if (int rc = kmod_module_new_from_name(*ctx, name.c_str(), &raw); rc < 0)
    return make_error("cannot look up module " + name + ": " + std::strerror(-rc), -rc);
  Module m(raw);
  const int state = kmod_module_get_initstate(m.get());
  if (state == KMOD_MODULE_BUILTIN) return make_error("module " + name + " is built into the kernel", EPERM);
  if (state < 0) return make_error("module " + name + " is not loaded", ENOENT);
  const int rc = kmod_module_remove_module(m.get(), KMOD_REMOVE_NOWAIT);
  if (rc == 0) return {};
  const int code = -rc;
  std::string message = "cannot unload module " + name + ": " + std::strerror(code);
  if (code == EBUSY || code == EAGAIN) message = "module " + name + " is in use";
  if (code == EPERM) message += " (needs root: CAP_SYS_MODULE)";
  return make_error(std::move(message), code);
}

Result<std::map<std::string, std::string>> KmodModules::parameters(const std::string& name) {
  // The kernel spells module names with underscores; files and users may use dashes.
  std::string spelled = name;
  std::replace(spelled.begin(), spelled.end(), '-', '_');
  const std::filesystem::path module = std::filesystem::path("/sys/module") / spelled;
  std::error_code ec;
  if (!std::filesystem::is_directory(module, ec)) return make_error("module " + name + " is not loaded", ENOENT);
  std::map<std::string, std::string> out;
  std::filesystem::directory_iterator it(module / "parameters", ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    auto value = read_file_capped(it->path(), 4096, "module parameter");
    if (value) out[it->path().filename().string()] = std::string(trim(*value));  // write-only ones are left out
  }
  return out;
}

}  // namespace rxerun::sys
