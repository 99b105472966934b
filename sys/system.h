#pragma once
// Everything that touches the host, gathered: the engine and the steps reach
// the outside world only through these interfaces (ninja's DiskInterface
// habit). Real implementations act (sys/real.h); the model
// (sys/model/system.h), which keeps the kernel's rules in memory, stands in
// for them: `rxerun plan` is the model with its action log, the tests are
// the model with a fault script.

#include <string>
#include <vector>

#include "sys/capture.h"
#include "sys/clock.h"
#include "sys/ethtool.h"
#include "sys/interrupt.h"
#include "sys/kernel_log.h"
#include "sys/links.h"
#include "sys/modules.h"
#include "sys/netns.h"
#include "sys/nfs.h"
#include "sys/nft.h"
#include "sys/nvme.h"
#include "sys/ping.h"
#include "sys/qdisc.h"
#include "sys/rdma.h"
#include "sys/routes.h"
#include "sys/srp.h"
#include "sys/storage.h"
#include "sys/sysctl.h"
#include "sys/tools.h"
#include "sys/verbs.h"

namespace rxerun::sys {

// One action as `plan` shows it: what, and the command a person would type.
struct PlannedAction {
  std::string what;   // "create veth pair vA/vB"
  std::string shell;  // "ip link add vA type veth peer name vB"; empty when it cannot be previewed
};

// Where the plan's model writes; null in a real run (and in the tests').
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual void record(PlannedAction action) = 0;
};

struct System {
  Clock& clock;
  Netns& netns;
  Interrupt& interrupt;
  Links& links;
  Ethtool& ethtool;
  Sysctl& sysctl;
  Nft& nft;
  Qdiscs& qdiscs;
  Pinger& pinger;
  Rdma& rdma;
  Modules& modules;
  Routes& routes;
  Tools& tools;
  Verbs& verbs;
  Captures& captures;
  Storage& storage;  // configfs's mount, null_blk, backing files, block devices
  Nvme& nvme;
  Srp& srp;
  Nfs& nfs;
  KernelLog& kernel_log;         // the runner reads the kernel's reports of the run from it
  Recorder* recorder = nullptr;  // set when planning
};

// `b` with other tools, and another clock when one is given: a node's
// agent (whose pair tools' other ends run on other nodes), and tests that
// run real tools against the model. The one place that lists every service
// to swap some.
inline System with_tools(const System& b, Tools& tools, Clock* clock = nullptr) {
  return System{clock ? *clock : b.clock,
                b.netns,
                b.interrupt,
                b.links,
                b.ethtool,
                b.sysctl,
                b.nft,
                b.qdiscs,
                b.pinger,
                b.rdma,
                b.modules,
                b.routes,
                tools,
                b.verbs,
                b.captures,
                b.storage,
                b.nvme,
                b.srp,
                b.nfs,
                b.kernel_log,
                b.recorder};
}

}  // namespace rxerun::sys
