#pragma once
// The Debian kernels rxerun knows how to fetch for the lab VM, by the label
// users type (`--kernel 7.3`): the two it ships labs for (6.1 and 7.3), and
// any other Debian kernel version (`--kernel 6.12`), looked up across the
// suites rxerun knows.

#include <optional>
#include <string>
#include <vector>

namespace rxerun::vm {

// A kernel rxerun can prepare, by the label users type (`--kernel 7.3`).
struct KernelSource {
  std::string label;                // "6.1", "7.3", "6.12"
  std::string summary;              // one line for `vm status`
  std::vector<std::string> suites;  // apt suites, first = the one the kernel comes from
  std::string default_release;      // APT::Default-Release ("bookworm", "trixie-backports"); "": none
  bool rxe_in_netns = false;        // rdma_rxe has per-namespace UDP 4791 sockets (7.x)
  // Empty: the kernel is the one linux-image-amd64 depends on (6.1, 7.3).
  // Else a version ("6.12"): the newest linux-image-VERSION.N...-amd64 of
  // any suite (select_image_package()).
  std::string image_version;
};

// Known kernels, oldest first.
const std::vector<KernelSource>& kernel_sources();
const KernelSource* find_kernel_source(const std::string& label);

// Every suite rxerun looks a kernel version up in: Debian 12 and 13 with
// their security and backports suites, and sid.
const std::vector<std::string>& debian_suites();

// A label that is a kernel version: two or three dot-separated numbers
// ("6.12", "6.1", "6.12.38"), nothing else.
bool is_kernel_version(const std::string& label);

// The source for `label`: a known kernel as kernel_sources() has it, else a
// kernel version looked up in every suite of debian_suites(); nullopt when
// `label` is neither.
std::optional<KernelSource> kernel_source_for(const std::string& label);

// Whether rdma_rxe of kernel `release` ("7.3.4+deb13-amd64", "6.12") works
// inside network namespaces: from Linux 7.1 on (docs/kernel-notes.md,
// "Namespaces"). A release that does not start with a version: false.
bool rxe_in_netns_since_release(const std::string& release);

// Of the package names `names` (`apt-cache pkgnames linux-image-`, one a
// line), the image package of kernel `version`: names
// linux-image-VERSION.N...-amd64 (also -amd64-unsigned), where every part
// after the version starts with a digit (no -cloud-, -rt-, -dbg, metapackage
// or template), the newest by its version, the signed one when both are
// there. "6.1" never matches 6.12's packages; a full version ("6.12.38")
// matches 6.12.38+deb13 too. Empty when none matches.
std::string select_image_package(const std::vector<std::string>& names, const std::string& version);

// Versions like "6.1" and "7.3.4+deb13-amd64" compared number by number:
// whether `a` is newer than `b`.
bool version_newer(const std::string& a, const std::string& b);

}  // namespace rxerun::vm
