#include "app/placement.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <system_error>

#include "base/files.h"
#include "sys/qdisc_rtnl.h"

namespace rxerun {

namespace {

bool has_cap_net_admin() {
  if (::geteuid() == 0) return true;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return data[CAP_NET_ADMIN / 32].effective & (1u << (CAP_NET_ADMIN % 32));
}

// Loaded, built in, or a module of the running kernel's tree.
bool kernel_has_module(const std::string& name) {
  if (std::filesystem::exists("/sys/module/" + name)) return true;
  utsname u{};
  if (::uname(&u) != 0) return false;
  const std::string tree = std::string("/lib/modules/") + u.release + "/";
  const std::string file = "/" + name + ".ko";
  return file_mentions(tree + "modules.builtin", file) || file_mentions(tree + "modules.dep", file);
}

std::string what_is_missing(Need need) {
  switch (need) {
    case Need::NetAdmin: return "not root on the host (the steps change network settings: CAP_NET_ADMIN)";
    case Need::Netem: return "host kernel has no sch_netem";
    case Need::RdmaRxe: return "host kernel has no rdma_rxe";
    case Need::RdmaSiw: return "host kernel has no siw";
  }
  return "";
}

bool host_offers(Need need, const HostAbilities& host) {
  switch (need) {
    case Need::NetAdmin: return host.net_admin;
    case Need::Netem: return host.netem;
    case Need::RdmaRxe: return host.rdma_rxe;
    case Need::RdmaSiw: return host.siw;
  }
  return false;
}

std::string labels(const std::vector<vm::PreparedKernel>& prepared) {
  std::string out;
  for (const auto& k : prepared) out += (out.empty() ? "" : ", ") + k.label;
  return out;
}

}  // namespace

bool is_own_kernel_path(const std::string& kernel) {
  // Never by what exists in the current directory: a directory that happens
  // to be called 7.3 (a matrix's output files) must not turn the label into
  // a path.
  return kernel.find('/') != std::string::npos || kernel == "." || kernel == "..";
}

vm::LabNeeds lab_needs(const Scenario& scenario, const Registry& registry) {
  vm::LabNeeds needs;
  for (const auto& step : scenario.steps)
    if (const Kind* kind = registry.find(step.kind))
      for (Need need : kind->spec.needs) {
        needs.rxe = needs.rxe || need == Need::RdmaRxe;
        needs.siw = needs.siw || need == Need::RdmaSiw;
        needs.netem = needs.netem || need == Need::Netem;
      }
  return needs;
}

HostAbilities HostAbilities::probe() {
  HostAbilities h;
  h.net_admin = has_cap_net_admin();
  // Without CAP_NET_ADMIN netem cannot be probed in a throwaway namespace;
  // it would not matter then anyway.
  if (h.net_admin) {
    sys::RtnlQdiscs qdiscs;
    auto netem = qdiscs.netem_available();
    h.netem = netem && *netem;
  }
  h.rdma_rxe = kernel_has_module("rdma_rxe");
  h.siw = kernel_has_module("siw");
  return h;
}

std::vector<std::string> host_shortfalls(const Scenario& scenario, const Registry& registry,
                                         const HostAbilities& host) {
  std::vector<std::string> out;
  std::set<Need> seen;
  for (const auto& step : scenario.steps) {
    const Kind* kind = registry.find(step.kind);
    if (!kind) continue;
    for (Need need : kind->spec.needs) {
      if (host_offers(need, host) || !seen.insert(need).second) continue;
      out.push_back(what_is_missing(need) + " (" + step.kind + " step '" + step.name + "')");
    }
  }
  return out;
}

Placement place(const Scenario& scenario, const Registry& registry, const PlacementRequest& request,
                const std::vector<vm::PreparedKernel>& prepared, const HostAbilities& host) {
  Placement p;
  if (request.force_host) {
    p.where = Placement::Where::Host;
    return p;
  }
  // The kernel: --kernel, else the scenario's, else the newest prepared.
  std::optional<std::string> wanted = request.kernel ? request.kernel : scenario.vm_kernel;
  const vm::PreparedKernel* kernel = nullptr;
  if (wanted) {
    for (const auto& k : prepared)
      if (k.label == *wanted) kernel = &k;
    // A label prepared (a kernel of one's own among them), known, or any
    // Debian kernel version `vm setup` can look up.
    if (!kernel && !vm::kernel_source_for(*wanted)) {
      std::string known;
      for (const auto& s : vm::kernel_sources()) known += (known.empty() ? "" : ", ") + s.label;
      p.where = Placement::Where::BadKernel;
      p.message = "unknown lab kernel '" + *wanted + "': rxerun knows " + known +
                  ", any Debian kernel version (6.12) and a kernel of your own (a path)";
      return p;
    }
  } else if (!prepared.empty()) {
    kernel = &prepared.front();
  }
  const std::string setup = wanted ? "rxerun vm setup --kernel " + *wanted : "rxerun vm setup";
  const std::string no_kernel = wanted ? "lab kernel " + *wanted + " is not prepared" +
                                             (prepared.empty() ? "" : " (prepared: " + labels(prepared) + ")")
                                       : "no lab VM is prepared";

  if (request.force_vm) {
    if (!kernel) {
      p.where = Placement::Where::Nowhere;
      p.message = no_kernel + ": run `" + setup + "` first";
      return p;
    }
    p.where = Placement::Where::Vm;
    p.kernel = *kernel;
    return p;
  }
  const auto shortfalls = host_shortfalls(scenario, registry, host);
  if (shortfalls.empty()) {
    p.where = Placement::Where::Host;
    return p;
  }
  if (!kernel) {
    p.where = Placement::Where::Nowhere;
    p.message = shortfalls.front() + ", and " + no_kernel + ": `" + setup + "` prepares it, then run again";
    return p;
  }
  p.where = Placement::Where::Vm;
  p.kernel = *kernel;
  p.message = shortfalls.front() + ": running in the lab VM, kernel " + kernel->label;
  return p;
}

namespace {

// Where this machine would put the scenario, on the kernels prepared now
// and what the host can do, each looked up once a process.
Placement place_here(const Scenario& scenario, const Registry& registry, const PlacementRequest& request) {
  static const auto prepared = vm::prepared_kernels(vm::search_dirs());
  static const auto host = HostAbilities::probe();
  return place(scenario, registry, request, prepared, host);
}

}  // namespace

LabSite lab_site(const Scenario& scenario, const Registry& registry, const PlacementRequest& request) {
  if (!scenario.nodes.empty()) return scenario_site(scenario);  // nodes are lab VMs, each with its kernel
  LabSite site;
  if (request.kernel) {
    const std::string& k = *request.kernel;
    if (k != "all" && !is_own_kernel_path(k)) {
      for (std::size_t start = 0; start <= k.size();) {
        const auto comma = std::min(k.find(',', start), k.size());
        if (comma > start) site.kernels.push_back(k.substr(start, comma - start));
        start = comma + 1;
      }
    }
    if (k == "all" || is_own_kernel_path(k) || site.kernels.size() != 1) {
      // A matrix compares kernels: each run says what its kernel refuses.
      site.lab_vm = !request.force_host;
      site.kernels.clear();
      return site;
    }
  }
  const Placement p = place_here(scenario, registry, request);
  if (p.where == Placement::Where::Host) {
    struct utsname u {};
    site.kernels = {::uname(&u) == 0 ? std::string(u.release) : std::string()};
    return site;
  }
  site.lab_vm = true;
  if (!scenario.vm_kernels.empty()) {
    site.kernels.clear();  // a matrix compares kernels: each run says what its kernel refuses
  } else if (site.kernels.empty()) {
    if (p.kernel)
      site.kernels = {p.kernel->label};
    else if (scenario.vm_kernel)
      site.kernels = {*scenario.vm_kernel};
  }
  return site;
}

std::string where_words(const Scenario& scenario, const Registry& registry, const PlacementRequest& request) {
  if (!scenario.nodes.empty()) {
    std::string nodes;
    for (const auto& n : scenario.nodes)
      nodes += (nodes.empty() ? "" : ", ") + n.name + " (kernel " +
               n.kernel.value_or(scenario.vm_kernel.value_or("the newest prepared")) + ")";
    return "a lab VM per node: " + nodes;
  }
  const Placement p = place_here(scenario, registry, request);
  switch (p.where) {
    case Placement::Where::Host:
      return request.force_host ? "the host (--host)" : "the host: it has what every step needs";
    case Placement::Where::Vm:
      if (!scenario.vm_kernels.empty()) return "the lab VM, once on each of its kernels";
      return p.message.empty() ? "the lab VM, kernel " + p.kernel->label + " (--vm)" : p.message;
    default: return "nowhere yet: " + p.message;
  }
}

}  // namespace rxerun
