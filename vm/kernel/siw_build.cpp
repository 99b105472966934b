#include "vm/kernel/siw_build.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/strings.h"
#include "sys/process.h"
#include "vm/files.h"
#include "vm/interrupt_check.h"
#include "vm/kernel/deb.h"
#include "vm/kernel/module_tree.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSiwStatusFile = "siw.json";
constexpr const char* kSiwBuildDir = ".siw-build";
constexpr auto kSiwMakeTimeout = std::chrono::minutes(10);

Result<SiwStatus> record_siw(const fs::path& kernel_dir, SiwStatus s) {
  const nlohmann::json j = {{"available", s.available}, {"how", s.how}, {"why_not", s.why_not}};
  if (auto r = write_file_atomic(kernel_dir / kSiwStatusFile, j.dump(2) + "\n"); !r) return r.error();
  return s;
}

Result<SiwStatus> siw_unavailable(const fs::path& kernel_dir, const std::string& why) {
  return record_siw(kernel_dir, SiwStatus{.available = false, .how = "", .why_not = why});
}

// "6.1.0-57-amd64" -> "6.1", "7.3.4+deb13-amd64" -> "7.3": the linux-source package's suffix.
std::string major_minor(const std::string& release) {
  std::size_t i = 0, dots = 0;
  while (i < release.size() && (std::isdigit(static_cast<unsigned char>(release[i])) || release[i] == '.')) {
    if (release[i] == '.' && ++dots == 2) break;
    ++i;
  }
  return release.substr(0, i);
}

std::string with_replaced(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// siw.ko's path in the module tree as modules.dep lists it, when the file is there.
std::optional<std::string> siw_in_tree(const fs::path& moddir) {
  std::ifstream dep(moddir / "modules.dep");
  for (std::string line; std::getline(dep, line);) {
    const std::string path = line.substr(0, line.find(':'));
    const bool siw = path == "siw.ko" || (path.size() > 7 && path.compare(path.size() - 7, 7, "/siw.ko") == 0);
    if (std::error_code ec; siw && fs::exists(moddir / path, ec)) return path;
  }
  return std::nullopt;
}

Result<void> unpack_all(const std::vector<fs::path>& debs, const fs::path& root, int interrupt_fd) {
  for (const auto& deb : debs)
    if (auto u = unpack_deb(deb, root, interrupt_fd); !u) return u.error();
  return {};
}

}  // namespace

std::string headers_compiler(const std::string& kernelvariables) {
  static const std::regex cc(R"(^CC\s*=.*?((?:[\w.+-]*-)?gcc-[0-9][\w.]*)\s*$)");
  std::istringstream in(kernelvariables);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    // "$(CROSS_COMPILE)gcc-12" reads as "gcc-12": the prefix is empty natively.
    if (std::regex_search(line, m, cc)) return m[1].str();
  }
  return "";
}

std::optional<SiwStatus> load_siw_status(const fs::path& kernel_dir) {
  auto text = read_whole_file(kernel_dir / kSiwStatusFile);
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("available") || !j["available"].is_boolean()) return std::nullopt;
  return SiwStatus{.available = j["available"].get<bool>(),
                   .how = j.value("how", std::string()),
                   .why_not = j.value("why_not", std::string())};
}

Result<SiwStatus> ensure_siw(const PreparedKernel& kernel, PrivateApt& apt,
                             const std::function<void(const std::string&)>& tell, int interrupt_fd) {
  const fs::path& moddir = kernel.modules;
  // A module of ours from an earlier setup whose record went (it is
  // rewritten), or the kernel's own.
  if (auto path = siw_in_tree(moddir)) {
    const std::string how =
        path->rfind("updates/", 0) == 0 ? "built by rxerun vm setup (updates/siw.ko)" : "the kernel's own module";
    return record_siw(kernel.dir, {.available = true, .how = how, .why_not = ""});
  }
  if (file_mentions(moddir / "modules.builtin", "/siw.ko"))
    return record_siw(kernel.dir, {.available = true, .how = "built into the kernel", .why_not = ""});

  const std::string headers_name = "linux-headers-" + kernel.release;
  const std::string source_name = "linux-source-" + major_minor(kernel.release);
  auto shown = apt.show({headers_name, source_name});
  if (!shown)
    return siw_unavailable(kernel.dir,
                           "the mirror has no " + headers_name + " or " + source_name + ": " + shown.error().message);
  for (const auto& p : *shown)
    if (p.version != kernel.package_version)
      return siw_unavailable(kernel.dir, "the mirror's " + p.name + " is " + p.version + ", the kernel is " +
                                             kernel.package_version + " (run `rxerun vm setup --refresh` for both)");
  const AptPackage& headers = shown->front().name == headers_name ? shown->front() : shown->back();
  const AptPackage& source = shown->front().name == source_name ? shown->front() : shown->back();
  std::vector<std::string> parts;
  for (const auto& d : headers.depends)
    if (d.rfind("linux-headers-", 0) == 0 || d.rfind("linux-kbuild-", 0) == 0) parts.push_back(d);
  std::vector<AptPackage> header_packages = {headers};
  if (!parts.empty()) {
    auto more = apt.show(parts);
    if (!more) return more.error();
    header_packages.insert(header_packages.end(), more->begin(), more->end());
  }

  tell("no siw in this kernel (CONFIG_RDMA_SIW is not set): building it from " + source_name + " " + source.version);
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path build = kernel.dir / kSiwBuildDir;
  if (auto r = remove_tree(build); !r) return r.error();
  if (auto r = ensure_dir(build / "debs"); !r) return r.error();
  if (auto r = ensure_dir(build / "root"); !r) return r.error();
  // Whatever happens, the build tree goes (it is only needed for siw.ko).
  struct RemoveTree {
    fs::path path;
    ~RemoveTree() { (void)remove_tree(path); }
  } remove_build{build};

  // The headers first: they name the compiler, which decides before the
  // source's large download whether a build is possible here.
  std::vector<fs::path> debs;
  for (const auto& p : header_packages) {
    auto deb = apt.download(p, build / "debs");
    if (!deb) return deb.error();
    debs.push_back(*deb);
  }
  if (auto r = unpack_all(debs, build / "root", interrupt_fd); !r) return r.error();
  const fs::path headers_dir = build / "root/usr/src" / headers_name;
  auto variables = read_whole_file(headers_dir / ".kernelvariables");
  const std::string compiler = variables ? headers_compiler(*variables) : "";
  const char* path = std::getenv("PATH");
  if (!compiler.empty() && !sys::find_in_path(compiler, path ? path : "/usr/bin:/bin")) {
    return siw_unavailable(
        kernel.dir, "its headers build with " + compiler + " (the kernel's own compiler), which this host has not");
  }
  // The headers include their common part by its installed path: point it here.
  auto makefile = read_whole_file(headers_dir / "Makefile");
  if (!makefile) return makefile.error();
  if (auto r = write_whole_file(headers_dir / "Makefile",
                                with_replaced(*makefile, " /usr/src/", " " + (build / "root/usr/src").string() + "/"));
      !r)
    return r.error();

  tell("downloading " + source.name + " " + source.version + " (" + std::to_string(source.size >> 20) + " MB)");
  auto source_deb = apt.download(source, build / "debs");
  if (!source_deb) return source_deb.error();
  if (auto r = unpack_deb(*source_deb, build / "root", interrupt_fd); !r) return r.error();
  const std::string tree = source_name;  // the tarball's top directory
  const fs::path tarball = build / "root/usr/src" / (source_name + ".tar.xz");
  if (auto r = ensure_dir(build / "src"); !r) return r.error();
  auto unpacked = unpack_tarball(tarball, tree + "/drivers/infiniband/sw/siw/", build / "src", interrupt_fd);
  if (!unpacked) return unpacked.error();
  if (unpacked->files == 0) {
    return siw_unavailable(kernel.dir, source_name + " " + source.version + " has no drivers/infiniband/sw/siw");
  }
  if (interrupt_requested(interrupt_fd)) return make_error("interrupted", EINTR);

  const fs::path src = build / "src" / tree / "drivers/infiniband/sw/siw";
  const std::vector<std::string> argv = {
      "make", "-C", headers_dir.string(), "M=" + src.string(), "CONFIG_RDMA_SIW=m", "-j2", "modules"};
  sys::SpawnOptions options;
  options.env["LC_ALL"] = "C";
  auto made = sys::run_command(argv, kSiwMakeTimeout, options, interrupt_fd);
  if (!made) return made.error();
  if (made->timed_out) {
    return make_error(interrupt_requested(interrupt_fd) ? "interrupted" : "building siw timed out", EINTR);
  }
  if (!made->status.ok()) {
    return siw_unavailable(kernel.dir, "building siw from " + source_name + " failed (" + made->status.describe() +
                                           "): " + tail_lines(made->err, 5));
  }
  if (auto r = ensure_dir(moddir / "updates"); !r) return r.error();
  std::error_code ec;
  fs::copy_file(src / "siw.ko", moddir / "updates/siw.ko", fs::copy_options::overwrite_existing, ec);
  if (ec) return io_error("copy siw.ko to", moddir / "updates", ec.value());
  ::chmod((moddir / "updates/siw.ko").c_str(), 0644);
  if (auto r = run_depmod(kernel.dir / "root", kernel.release, interrupt_fd); !r) return r.error();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0);
  tell("built siw (updates/siw.ko) in " + std::to_string(seconds.count()) + " s");
  return record_siw(kernel.dir,
                    {.available = true, .how = "built from " + source_name + " " + source.version, .why_not = ""});
}

}  // namespace rxerun::vm
