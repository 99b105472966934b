#pragma once
// The lab checked as a whole before anything runs: the steps walked in
// order over what the lab holds after each (namespaces, interfaces per
// namespace, RDMA devices, background programs, which steps were reverted
// or waited for), from what each kind declares (KindSpec::objects, facts
// with their moments, background, undo_with, ends_background, takes_netns:
// rxerun/kind.h). It finds what the loader, which reads one step at a
// time, cannot: an object used before the step that makes it, after the
// step that removed it, made twice, or never made where nothing else can
// exist; `wait` and `revert` misuse; facts a step does not report at that
// moment, counters of devices the lab does not have; what a lab kernel
// cannot do. It touches nothing.
//
// No false alarm: on the host's own namespace an interface, namespace or
// device the lab does not make may be the host's, so only the lab VM and
// the namespaces the lab makes itself are closed worlds.

#include <string>
#include <vector>

#include "engine/diag.h"
#include "engine/model.h"
#include "engine/registry.h"

namespace rxerun {

// Where the lab will run, as far as it is known before it runs.
struct LabSite {
  // In a lab VM (or nodes): nothing exists there but what the lab makes,
  // `lo`, and the NICs of the wires.
  bool lab_vm = false;
  // The lab kernels it will run on ("6.1", "7.3", a release such as
  // "6.1.0-30-amd64"); empty when not known (the host's, or the newest
  // prepared). A scenario's nodes name their own.
  std::vector<std::string> kernels;
};

// The site a scenario says itself: the lab VM when it names a lab kernel
// (vm.kernel, vm.kernels) or nodes, with those kernels.
LabSite scenario_site(const Scenario& scenario);

// Every problem of the lab as a whole, in step order, each at the key it is
// about. Empty when there is none.
Diagnostics check_lab(const Scenario& scenario, const Registry& registry, const LabSite& site);

// Whether a kernel (a label or release; "" unknown) gives every network
// namespace its own rxe UDP socket: Linux 7.1 and later. nullopt when the
// text is no version (a kernel of one's own, by path).
std::optional<bool> kernel_has_rxe_netns(const std::string& kernel);

}  // namespace rxerun
