#pragma once
// The system the unit tests run against: the model of sys/
// (sys/model/system.h) in a closed world (what it does not hold does not
// exist), with this test kernel's modules. A test puts the host's state in
// the models (`fake.links.add_host_link(...)`, `fake.sysctl.values[...]`),
// scripts faults (`fake.kernel.fail("modules.load", EPERM)`), and reads what
// was done from the state and the action log (`fake.kernel.commands("links")`).

#include "sys/model/system.h"

namespace rxerun::fakes {

struct FakeSystem : sys::ModelSystem {
  // The RDMA, NVMe and null_blk modules (and what they need), as the lab
  // kernels have them; a release name.
  FakeSystem();
};

}  // namespace rxerun::fakes
