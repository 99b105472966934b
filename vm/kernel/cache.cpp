#include "vm/kernel/cache.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <system_error>

#include "vm/kernel/catalogue.h"
#include "vm/kernel/record.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

// root's cache, which a non-root user also searches.
constexpr const char* kSystemCache = "/var/cache/rxerun";

}  // namespace

fs::path cache_dir() {
  if (const char* d = std::getenv("RXERUN_CACHE_DIR"); d && *d) return d;
  if (::geteuid() == 0) return kSystemCache;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return fs::path(x) / "rxerun";
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    if (const passwd* pw = ::getpwuid(::geteuid())) home = pw->pw_dir;
  }
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "rxerun";
}

std::vector<fs::path> search_dirs() {
  std::vector<fs::path> dirs = {cache_dir()};
  if (::geteuid() != 0 && dirs.front() != kSystemCache) dirs.push_back(kSystemCache);
  return dirs;
}

std::vector<PreparedKernel> prepared_kernels(const std::vector<fs::path>& dirs) {
  std::vector<PreparedKernel> out;
  std::set<std::string> labels;
  for (const auto& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(dir / "kernels", ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().rfind('.', 0) != 0) entries.push_back(it->path());
    std::sort(entries.begin(), entries.end());
    for (const auto& e : entries) {
      auto loaded = load_kernel_record(e);
      if (loaded && labels.insert(loaded->kernel.label).second) out.push_back(std::move(loaded->kernel));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const PreparedKernel& a, const PreparedKernel& b) {
    if (a.label != b.label) return version_newer(a.label, b.label);
    return version_newer(a.release, b.release);
  });
  return out;
}

}  // namespace rxerun::vm
