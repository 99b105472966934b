#include "vm/kernel/apt_private.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <system_error>

#include "base/strings.h"
#include "sys/process.h"
#include "vm/files.h"
#include "vm/interrupt_check.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

namespace {

constexpr const char* kKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg";
constexpr const char* kUpdatedStamp = "updated";  // touched after a successful apt-get update

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::vector<std::string> parse_depends(const std::string& value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < value.size()) {
    std::size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    std::string group = value.substr(start, comma - start);
    group = trim(group.substr(0, group.find('|')));  // of alternatives, the first
    std::string name = group.substr(0, group.find_first_of(" (:[<"));
    if (!name.empty()) out.push_back(name);
    start = comma + 1;
  }
  return out;
}

std::uint64_t to_u64(const std::string& s) {
  try {
    return std::stoull(s);
  } catch (...) {
    return 0;
  }
}

bool has_packages_lists(const fs::path& lists) {
  std::error_code ec;
  for (fs::directory_iterator it(lists, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().find("_Packages") != std::string::npos) return true;
  return false;
}

}  // namespace

std::vector<AptPackage> parse_apt_packages(const std::string& text) {
  std::vector<AptPackage> out;
  std::map<std::string, std::string> fields;
  std::string last;
  auto flush = [&] {
    if (fields.count("Package")) {
      AptPackage p;
      p.name = fields["Package"];
      p.version = fields["Version"];
      p.depends = parse_depends(fields["Pre-Depends"] + (fields["Pre-Depends"].empty() ? "" : ",") + fields["Depends"]);
      p.size = to_u64(fields["Size"]);
      p.installed_size = to_u64(fields["Installed-Size"]) * 1024;
      out.push_back(std::move(p));
    }
    fields.clear();
    last.clear();
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) {
      flush();
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') {
      if (!last.empty()) fields[last] += " " + std::string(trim(line));
      continue;
    }
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    last = line.substr(0, colon);
    fields[last] = trim(std::string_view(line).substr(colon + 1));
  }
  flush();
  return out;
}

std::string deb_file_prefix(const std::string& name, const std::string& version) {
  std::string v;
  for (char c : version) v += c == ':' ? std::string("%3a") : std::string(1, c);
  return name + "_" + v + "_";
}

PrivateApt::PrivateApt(fs::path state, std::vector<std::string> suites, std::string default_release, int interrupt_fd)
    : state_(std::move(state)),
      suites_(std::move(suites)),
      default_release_(std::move(default_release)),
      interrupt_fd_(interrupt_fd) {}

std::string PrivateApt::sources_list_text() const {
  const std::string mirror = env_or("RXERUN_DEBIAN_MIRROR", "http://deb.debian.org/debian");
  const std::string security = env_or("RXERUN_DEBIAN_SECURITY_MIRROR", "http://deb.debian.org/debian-security");
  std::string options;  // built piecewise: GCC 12 warns falsely (-Warray-bounds) about a + chain
  if (::access(kKeyring, R_OK) == 0) {
    options = "[signed-by=";
    options += kKeyring;
    options += "] ";
  }
  std::string text = "# Written by rxerun vm setup: the private apt state it fetches lab kernels with.\n";
  for (const auto& suite : suites_) {
    const bool is_security = suite.size() > 9 && suite.compare(suite.size() - 9, 9, "-security") == 0;
    text += "deb " + options + (is_security ? security : mirror) + " " + suite + " main\n";
  }
  return text;
}

Result<void> PrivateApt::prepare() {
  for (const fs::path& d : {state_, state_ / "lists", state_ / "lists/partial", state_ / "cache",
                            state_ / "cache/archives", state_ / "cache/archives/partial"}) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) return io_error("create directory", d, ec.value());
  }
  const std::string text = sources_list_text();
  auto current = read_whole_file(state_ / "sources.list");
  if (current && *current == text) return {};
  // Other sources: the old lists say nothing about them.
  ::unlink((state_ / kUpdatedStamp).c_str());
  return write_file_atomic(state_ / "sources.list", text);
}

bool PrivateApt::lists_fresh(std::chrono::hours max_age) const {
  struct stat st;
  if (::stat((state_ / kUpdatedStamp).c_str(), &st) != 0) return false;
  // A stamp from the future is stale (the clock was set back since), but
  // one written a moment ago may read a second ahead of time(): the kernel
  // stamps files from its fine-grained clock, time() reads the coarse one.
  const std::time_t now = std::time(nullptr);
  if (st.st_mtime > now + 2 || now - st.st_mtime > max_age.count() * 3600) return false;
  return has_packages_lists(state_ / "lists");
}

std::vector<std::string> PrivateApt::argv(const char* tool) const {
  std::vector<std::string> a = {
      tool,
      "-o",
      "Dir::Etc::SourceList=" + (state_ / "sources.list").string(),
      "-o",
      "Dir::Etc::SourceParts=/dev/null",
      "-o",
      "Dir::State::Lists=" + (state_ / "lists").string(),
      "-o",
      "Dir::Cache=" + (state_ / "cache").string(),
      // Keep the parsed lists between calls (about 1 s each) even where the
      // host turns that off (Docker images' docker-clean); no second copy.
      "-o",
      "Dir::Cache::pkgcache=pkgcache.bin",
      "-o",
      "Dir::Cache::srcpkgcache=",
      // Neither the host's pins nor its installed packages may pick the version.
      "-o",
      "Dir::Etc::Preferences=/dev/null",
      "-o",
      "Dir::Etc::PreferencesParts=/dev/null",
      "-o",
      "Dir::State::status=/dev/null",
      // The kernels are amd64; no translations, no i386 lists of a multiarch host.
      "-o",
      "APT::Architecture=amd64",
      "-o",
      "APT::Architectures=amd64",
      "-o",
      "Acquire::Languages=none",
  };
  if (!default_release_.empty()) {
    a.push_back("-o");
    a.push_back("APT::Default-Release=" + default_release_);
  }
  // As root, apt drops to the _apt user for downloads, who cannot write
  // into rxerun's cache.
  if (::geteuid() == 0) {
    a.push_back("-o");
    a.push_back("APT::Sandbox::User=root");
  }
  return a;
}

Result<std::string> PrivateApt::run(const std::vector<std::string>& argv, const std::string& what,
                                    std::chrono::minutes timeout, const fs::path& cwd) const {
  sys::SpawnOptions options;
  options.env["LC_ALL"] = "C";
  options.env["DEBIAN_FRONTEND"] = "noninteractive";
  options.cwd = cwd.string();
  auto r = sys::run_command(argv, timeout, options, interrupt_fd_);
  if (!r) {
    if (r.error().code == ENOENT)
      return make_error("cannot run " + argv[0] + ": not installed; `vm setup` fetches Debian kernels with apt",
                        ENOENT);
    return r.error();
  }
  if (r->timed_out) {
    if (interrupt_requested(interrupt_fd_)) return make_error("interrupted", EINTR);
    return make_error(what + " gave no answer within " + std::to_string(timeout.count()) +
                          " min: check the network connection and the mirror",
                      ETIMEDOUT);
  }
  if (!r->status.ok()) {
    std::string why = tail_lines(r->err, 3);
    if (why.empty()) why = tail_lines(r->out, 3);
    while (!why.empty() && why.back() == '.') why.pop_back();
    // The reason first; the whole command last, to rerun it by hand.
    return make_error(
        what + " failed (" + r->status.describe() + "): " + why +
        ". Check the network connection and the mirror (RXERUN_DEBIAN_MIRROR). The command was: " + shell_join(argv));
  }
  return std::move(r->out);
}

Result<void> PrivateApt::update() {
  auto a = argv("apt-get");
  a.push_back("--error-on=any");  // a failed index is otherwise only a warning, with exit 0
  a.push_back("update");
  auto r = run(a, "apt-get update", std::chrono::minutes(15));
  if (!r) return r.error();
  if (!has_packages_lists(state_ / "lists"))
    return make_error(shell_join(a) + " fetched no package lists into " + (state_ / "lists").string());
  return write_whole_file(state_ / kUpdatedStamp, "");
}

Result<std::vector<AptPackage>> PrivateApt::show(const std::vector<std::string>& names) {
  auto a = argv("apt-cache");
  a.push_back("show");
  a.push_back("--no-all-versions");
  a.insert(a.end(), names.begin(), names.end());
  std::string what = "apt-cache show";
  for (const auto& n : names) what += " " + n;
  auto r = run(a, what, std::chrono::minutes(5));
  if (!r) return r.error();
  auto packages = parse_apt_packages(*r);
  for (const auto& n : names) {
    bool found = false;
    for (const auto& p : packages) found = found || p.name == n;
    if (!found) return make_error("apt knows no package " + n + " in " + (state_ / "sources.list").string());
  }
  return packages;
}

Result<std::vector<std::string>> PrivateApt::names(const std::string& prefix) {
  auto a = argv("apt-cache");
  a.push_back("pkgnames");
  a.push_back(prefix);
  // apt-cache pkgnames exits 0 with no output when nothing matches.
  auto r = run(a, "apt-cache pkgnames " + prefix, std::chrono::minutes(5));
  if (!r) return r.error();
  return split_words(*r);
}

Result<fs::path> PrivateApt::download(const AptPackage& package, const fs::path& dir) {
  const std::string prefix = deb_file_prefix(package.name, package.version);
  auto find_in = [&](const fs::path& d) -> std::optional<fs::path> {
    std::error_code ec;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string f = it->path().filename().string();
      if (f.rfind(prefix, 0) == 0 && f.size() > 4 && f.compare(f.size() - 4, 4, ".deb") == 0) return it->path();
    }
    return std::nullopt;
  };
  if (auto have = find_in(dir)) return *have;

  const fs::path scratch = dir / ".download";
  if (auto r = remove_tree(scratch); !r) return r.error();
  std::error_code ec;
  fs::create_directories(scratch, ec);
  if (ec) return io_error("create directory", scratch, ec.value());
  auto a = argv("apt-get");
  a.push_back("download");
  a.push_back(package.name + "=" + package.version);
  auto r = run(a, "apt-get download " + package.name + "=" + package.version, std::chrono::minutes(60), scratch);
  if (!r) return r.error();
  auto got = find_in(scratch);
  if (!got) return make_error(shell_join(a) + " left no " + prefix + "*.deb in " + scratch.string());
  const fs::path target = dir / got->filename();
  ::chmod(got->c_str(), 0644);
  if (::rename(got->c_str(), target.c_str()) != 0) return io_error("rename", *got, errno);
  (void)remove_tree(scratch);
  return target;
}

}  // namespace rxerun::vm
