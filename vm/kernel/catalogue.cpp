#include "vm/kernel/catalogue.h"

#include <algorithm>
#include <cctype>

namespace rxerun::vm {

namespace {

bool all_version_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::vector<std::string> split_version(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// The leading "X.Y" of a release, as numbers; nullopt when it has none.
std::optional<std::pair<unsigned, unsigned>> release_major_minor(const std::string& release) {
  const auto parts = split_version(release.substr(0, release.find_first_not_of("0123456789.")), '.');
  if (parts.size() < 2 || !all_version_digits(parts[0]) || !all_version_digits(parts[1]) || parts[0].size() > 4 ||
      parts[1].size() > 4)
    return std::nullopt;
  return std::make_pair(static_cast<unsigned>(std::stoul(parts[0])), static_cast<unsigned>(std::stoul(parts[1])));
}

// Removes "-amd64" (signed) or "-amd64-unsigned" from the end of `abi`;
// false when it ends in neither (-dbg, a template).
bool strip_image_flavour(std::string& abi, bool& is_signed) {
  for (const std::string suffix : {"-amd64-unsigned", "-amd64"}) {
    if (abi.size() > suffix.size() && abi.compare(abi.size() - suffix.size(), suffix.size(), suffix) == 0) {
      abi.resize(abi.size() - suffix.size());
      is_signed = suffix == "-amd64";
      return true;
    }
  }
  return false;
}

}  // namespace

const std::vector<KernelSource>& kernel_sources() {
  static const std::vector<KernelSource> sources = {
      {.label = "6.1",
       .summary = "Debian 12 bookworm's kernel: rdma_rxe in the initial network namespace only",
       .suites = {"bookworm", "bookworm-security"},
       // A glob: bookworm-security has newer kernels than the point release.
       .default_release = "bookworm*",
       .rxe_in_netns = false},
      {.label = "7.3",
       .summary = "Debian 13 trixie-backports' kernel: rdma_rxe inside network namespaces",
       .suites = {"trixie-backports", "trixie"},
       .default_release = "trixie-backports",
       .rxe_in_netns = true},
  };
  return sources;
}

const KernelSource* find_kernel_source(const std::string& label) {
  for (const auto& s : kernel_sources())
    if (s.label == label) return &s;
  return nullptr;
}

const std::vector<std::string>& debian_suites() {
  static const std::vector<std::string> suites = {
      "bookworm", "bookworm-security", "bookworm-backports", "trixie", "trixie-security", "trixie-backports", "sid"};
  return suites;
}

bool is_kernel_version(const std::string& label) {
  const auto parts = split_version(label, '.');
  if (parts.size() < 2 || parts.size() > 3) return false;
  return std::all_of(parts.begin(), parts.end(),
                     [](const std::string& p) { return all_version_digits(p) && p.size() <= 4; });
}

std::optional<KernelSource> kernel_source_for(const std::string& label) {
  if (const KernelSource* known = find_kernel_source(label)) return *known;
  if (!is_kernel_version(label)) return std::nullopt;
  KernelSource s;
  s.label = label;
  s.rxe_in_netns = rxe_in_netns_since_release(label);
  s.summary = "Debian's newest " + label + " kernel of any suite: rdma_rxe " +
              (s.rxe_in_netns ? "inside network namespaces" : "in the initial network namespace only");
  s.suites = debian_suites();
  s.image_version = label;
  return s;
}

bool rxe_in_netns_since_release(const std::string& release) {
  const auto v = release_major_minor(release);
  return v && (v->first > 7 || (v->first == 7 && v->second >= 1));
}

std::string select_image_package(const std::vector<std::string>& names, const std::string& version) {
  if (!is_kernel_version(version)) return "";
  const std::string prefix = "linux-image-" + version;
  const bool full_version = split_version(version, '.').size() == 3;
  std::string best, best_abi;
  bool best_signed = false;
  for (const auto& name : names) {
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) continue;
    const char next = name[prefix.size()];
    if (next != '.' && !(full_version && (next == '+' || next == '-' || next == '~'))) continue;
    std::string abi = name.substr(12);  // after "linux-image-"
    bool is_signed = false;
    if (!strip_image_flavour(abi, is_signed)) continue;
    // "6.1" + ".0-57": a number must follow the dot (not "6.1" + "2...").
    if (next == '.' && !std::isdigit(static_cast<unsigned char>(abi[version.size() + 1]))) continue;
    const auto parts = split_version(abi, '-');  // "6.1.0", "57": each part starts with a digit (no cloud, rt)
    if (!std::all_of(parts.begin(), parts.end(),
                     [](const std::string& p) { return !p.empty() && std::isdigit(static_cast<unsigned char>(p[0])); }))
      continue;
    if (best.empty() || version_newer(abi, best_abi) || (abi == best_abi && is_signed && !best_signed)) {
      best = name;
      best_abi = abi;
      best_signed = is_signed;
    }
  }
  return best;
}

bool version_newer(const std::string& a, const std::string& b) {
  std::size_t i = 0, k = 0;
  while (i < a.size() && k < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[k]))) {
      std::size_t ie = a.find_first_not_of("0123456789", i), ke = b.find_first_not_of("0123456789", k);
      if (ie == std::string::npos) ie = a.size();
      if (ke == std::string::npos) ke = b.size();
      unsigned long long x = std::stoull(a.substr(i, std::min<std::size_t>(ie - i, 18)));
      unsigned long long y = std::stoull(b.substr(k, std::min<std::size_t>(ke - k, 18)));
      if (x != y) return x > y;
      i = ie;
      k = ke;
    } else {
      if (a[i] != b[k]) return a[i] > b[k];
      ++i;
      ++k;
    }
  }
  return a.size() - i > b.size() - k;
}

}  // namespace rxerun::vm
