#include "vm/kernel/catalogue.h"

namespace rxerun::vm {

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

}  // namespace rxerun::vm
