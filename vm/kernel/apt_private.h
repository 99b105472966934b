#pragma once
// apt-get and apt-cache run against a private apt state (its own
// sources.list, lists and cache under one directory), so that `vm setup` can
// fetch a kernel from any Debian suite without touching the host's /etc/apt
// or /var/lib/apt. Everything else of the host's apt configuration (proxies,
// apt.conf.d) still applies.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::vm {

// One package's candidate version, from `apt-cache show`.
struct AptPackage {
  std::string name;
  std::string version;
  std::vector<std::string> depends;  // package names; of alternatives "a | b", the first
  std::uint64_t size = 0;            // the .deb, bytes
  std::uint64_t installed_size = 0;  // unpacked, bytes
};

// Parses `apt-cache show` output (RFC 822 paragraphs; continuation lines
// are folded).
std::vector<AptPackage> parse_apt_packages(const std::string& text);

// The file name `apt-get download` gives a package: NAME_VERSION_ARCH.deb
// with the epoch's ':' written as %3a. This returns the NAME_VERSION_ prefix.
std::string deb_file_prefix(const std::string& name, const std::string& version);

class PrivateApt {
 public:
  // `state` holds sources.list, lists/ and cache/; the suites come from
  // Debian's mirror (env RXERUN_DEBIAN_MIRROR, default deb.debian.org), a
  // "-security" suite from the security mirror. `default_release` becomes
  // APT::Default-Release (a glob may match several suites).
  PrivateApt(std::filesystem::path state, std::vector<std::string> suites, std::string default_release,
             int interrupt_fd = -1);

  // Creates the directories and writes sources.list; a changed sources.list
  // makes the lists stale.
  Result<void> prepare();
  // Lists exist and were updated within `max_age`.
  bool lists_fresh(std::chrono::hours max_age = std::chrono::hours(24)) const;
  // `apt-get update` into the private lists (any failed index is an error).
  Result<void> update();
  // The candidate version of each package; an unknown package is an error.
  Result<std::vector<AptPackage>> show(const std::vector<std::string>& names);
  // The names of the packages whose name starts with `prefix` (`apt-cache
  // pkgnames PREFIX`), in any suite of the sources; none is no error.
  Result<std::vector<std::string>> names(const std::string& prefix);
  // `apt-get download NAME=VERSION` into `dir`, through a scratch directory,
  // so that `dir` only ever holds complete packages. Returns the .deb.
  Result<std::filesystem::path> download(const AptPackage& package, const std::filesystem::path& dir);

  const std::filesystem::path& state() const { return state_; }
  std::string sources_list_text() const;

 private:
  std::vector<std::string> argv(const char* tool) const;
  // Runs an apt tool in the C locale; `what` ("apt-get update") leads its errors.
  Result<std::string> run(const std::vector<std::string>& argv, const std::string& what, std::chrono::minutes timeout,
                          const std::filesystem::path& cwd = {}) const;

  std::filesystem::path state_;
  std::vector<std::string> suites_;
  std::string default_release_;
  int interrupt_fd_;
};

}  // namespace rxerun::vm
