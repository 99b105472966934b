#pragma once
// Every model of sys/model/ wired into one sys::System: the stand-in for the
// real one (sys/real.h). `rxerun plan` runs a scenario against plan_system()
// (an open world, its action log printed); the tests run against a closed
// one (tests/fakes/fake_system.h), scripting faults and looking at the state.

#include "sys/interrupt.h"
#include "sys/model/clock.h"
#include "sys/model/kernel.h"
#include "sys/model/links.h"
#include "sys/model/modules.h"
#include "sys/model/netns.h"
#include "sys/model/nfs.h"
#include "sys/model/nft.h"
#include "sys/model/nvme.h"
#include "sys/model/rdma.h"
#include "sys/model/routes.h"
#include "sys/model/settings.h"
#include "sys/model/srp.h"
#include "sys/model/storage.h"
#include "sys/model/tools.h"
#include "sys/model/traffic.h"
#include "sys/system.h"

namespace rxerun::sys {

struct ModelSystem {
  ModelSystem();
  ModelSystem(const ModelSystem&) = delete;
  ModelSystem& operator=(const ModelSystem&) = delete;

  ModelKernel kernel;
  ModelClock clock{kernel};
  ModelNetns netns{kernel};
  Interrupt interrupt;
  ModelLinks links{kernel, netns};
  ModelEthtool ethtool{kernel};
  ModelSysctl sysctl{kernel};
  ModelNft nft{kernel};
  ModelQdiscs qdiscs{kernel};
  ModelPinger pinger{kernel, clock};
  ModelModules modules{kernel};
  ModelRdma rdma{kernel, links, modules};
  ModelRoutes routes{kernel, links};
  ModelTools tools{kernel};
  ModelVerbs verbs{kernel};
  ModelCaptures captures{kernel};
  ModelStorage storage{kernel, modules};
  ModelNvme nvme{kernel, modules, storage};
  ModelSrp srp{kernel, modules, storage, rdma, links};
  ModelNfs nfs{kernel, modules, links};
  ModelKernelLog kernel_log{clock};
  System system{clock,   netns,  interrupt, links, ethtool,  sysctl,  nft,  qdiscs, pinger, rdma,
                modules, routes, tools,     verbs, captures, storage, nvme, srp,    nfs,    kernel_log};
};

// `rxerun plan`'s: an open world that reads, and never changes, what the
// host has where a plan needs it (sysctls of rxerun's namespace, loaded
// modules, the configfs mount, files), with its action log as the System's
// recorder.
void make_plan_world(ModelSystem& model);

}  // namespace rxerun::sys
