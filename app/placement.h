#pragma once
// Where a run happens: on the host, or in the lab VM. `--vm` and `--host`
// decide outright; otherwise the host when it can do everything the
// scenario's steps need (KindSpec::needs), else the lab VM when a kernel is
// prepared, else nowhere, with one line saying what is missing and what fixes it.

#include <optional>
#include <string>
#include <vector>

#include "engine/kind.h"
#include "engine/lab_check.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "vm/kernel/kernels.h"

namespace rxerun {

// What the host offers, probed once.
struct HostAbilities {
  bool net_admin = false;  // root, or CAP_NET_ADMIN in the effective set
  bool netem = false;
  bool rdma_rxe = false;
  bool siw = false;
  static HostAbilities probe();
};

// Why the host cannot run this scenario, one phrase per missing need
// ("host kernel has no sch_netem (netem step 'lossy')"); empty when it can.
std::vector<std::string> host_shortfalls(const Scenario& scenario, const Registry& registry, const HostAbilities& host);

// Whether `--kernel VALUE` names a kernel of one's own (a build directory
// or an image) rather than a label (6.1, 6.12): VALUE contains a '/' (or
// is "." or ".."); `./linux` names a directory here.
bool is_own_kernel_path(const std::string& kernel);

// What the scenario's steps need from a lab kernel, for the check of a
// kernel of one's own (vm::missing_kernel_options).
vm::LabNeeds lab_needs(const Scenario& scenario, const Registry& registry);

struct PlacementRequest {
  bool force_vm = false;
  bool force_host = false;
  std::optional<std::string> kernel;  // --kernel
};

// --vm, --host and --kernel as `validate` and `plan` take them: the lab is
// checked where `run` with the same options would put it.
struct WhereOptions {
  bool vm = false;
  bool host = false;
  std::string kernel;
  PlacementRequest request() const {
    return {.force_vm = vm, .force_host = host, .kernel = kernel.empty() ? std::nullopt : std::optional(kernel)};
  }
};

struct Placement {
  enum class Where { Host, Vm, Nowhere, BadKernel } where = Where::Host;
  std::optional<vm::PreparedKernel> kernel;  // for Vm
  std::string message;  // the first line to print (Vm by default), or the error (Nowhere, BadKernel)
};

Placement place(const Scenario& scenario, const Registry& registry, const PlacementRequest& request,
                const std::vector<vm::PreparedKernel>& prepared, const HostAbilities& host);

// Where the lab checks (engine/lab_check.h) take the lab to run: placed as
// `run` would place it (the host probed, the prepared kernels listed), the
// lab VM with its kernels, or the host with its own. A lab that cannot run
// here is checked as the lab VM it needs. `--kernel` may list kernels
// ("6.1,7.3"), say `all`, or name a kernel of one's own (not known before
// it boots). A kernel matrix (a list, `all`, vm.kernels) names no kernel
// for the checks: it is there to compare kernels, and each run says what
// its kernel refuses.
// Where `run` would put the lab, in words, for `plan`'s first line: "the
// host", "the lab VM, kernel 7.3 (host kernel has no rdma_rxe ...)".
std::string where_words(const Scenario& scenario, const Registry& registry, const PlacementRequest& request);

LabSite lab_site(const Scenario& scenario, const Registry& registry, const PlacementRequest& request);

}  // namespace rxerun
