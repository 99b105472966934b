#pragma once
// The Debian kernels rxerun knows how to fetch for the lab VM, by the label
// users type (`--kernel 7.3`).

#include <string>
#include <vector>

namespace rxerun::vm {

// A kernel rxerun can prepare, by the label users type (`--kernel 7.3`).
struct KernelSource {
  std::string label;                // "6.1", "7.3"
  std::string summary;              // one line for `vm status`
  std::vector<std::string> suites;  // apt suites, first = the one the kernel comes from
  std::string default_release;      // APT::Default-Release ("bookworm", "trixie-backports")
  bool rxe_in_netns = false;        // rdma_rxe has per-namespace UDP 4791 sockets (7.x)
};

// Known kernels, oldest first.
const std::vector<KernelSource>& kernel_sources();
const KernelSource* find_kernel_source(const std::string& label);

}  // namespace rxerun::vm
