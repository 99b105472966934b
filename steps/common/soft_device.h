#pragma once
// A software RDMA device over a netdev, the work of the `rxe` and `siw`
// kinds (`rdma link add NAME type TYPE netdev NETDEV`), loading the type's
// driver (and rdma_ucm, which rdma_cm users need) when the kernel has not.
//
// Two changes, journalled apart:
// - the modules this run loaded (steps/common/modules.h), before loading
//   them; undo unloads them once no device of the type is left;
// - the device; undo deletes it by index, "already gone" being success. The
//   journal records the device's index and its netdev's (with the
//   namespace's inode, steps/common/identity.h): a device made since under
//   the name, or over a netdev made since under its name, is left alone and
//   reported.
// The device's undo does not ride on its netdev's deletion (a deleted veth
// takes its device along): the modules' undo, which runs before the run's
// veths go, would then still see the device and leave the driver loaded.
// Deleting the device first costs a fraction of a second and leaves no
// module behind.
//
// The same name over the same netdev is adopted unchanged (and, not being
// this run's work, left in place). RDMA device names are global across
// namespaces: a name in use elsewhere is a clear error, also when the
// kernel answers it with ENFILE ("Too many open files in system").

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/kind.h"
#include "engine/step.h"

namespace rxerun::steps {

struct SoftDeviceType {
  const char* type;    // sys::kRxeType: what RDMA netlink and the messages call it
  const char* module;  // its driver: "rdma_rxe"
  const char* title;   // "Soft-RoCE (rxe)", for the kind's summary
  Need need;           // what placement must find in the kernel
  // The error when the kernel has no such driver (it names what to do).
  std::function<StepResult(const Error&)> not_in_this_kernel;
  // Optional: what must hold once the device is listed (rxe: its UDP 4791
  // socket); an error result when it does not. `facts` are the step's so far.
  std::function<std::optional<StepResult>(StepContext&, const nlohmann::json& facts)> after_add;
};

// The kind for `t`, which must outlive it (a static): its parameters
// (`name`, `netdev`), facts, summary and example, running and undoing as
// this file says.
Kind soft_device_kind(const SoftDeviceType& t);

}  // namespace rxerun::steps
