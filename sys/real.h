#pragma once
// The real system: every interface of sys/system.h wired to the kernel.

#include "sys/capture_pcap.h"
#include "sys/clock.h"
#include "sys/ethtool_genl.h"
#include "sys/interrupt.h"
#include "sys/kernel_log.h"
#include "sys/kernel_modules.h"
#include "sys/links_rtnl.h"
#include "sys/netns.h"
#include "sys/nfs_real.h"
#include "sys/nft_lib.h"
#include "sys/nvme_real.h"
#include "sys/ping_icmp.h"
#include "sys/qdisc_rtnl.h"
#include "sys/rdma_host.h"
#include "sys/routes_rtnl.h"
#include "sys/srp_real.h"
#include "sys/storage_real.h"
#include "sys/sysctl_proc.h"
#include "sys/system.h"
#include "sys/tools_real.h"
#include "sys/verbs/real.h"

namespace rxerun::sys {

class RealSystem {
 public:
  System& system() { return system_; }
  Interrupt& interrupt() { return interrupt_; }

 private:
  RealClock clock_;
  RealNetns netns_;
  Interrupt interrupt_;
  RtnlLinks links_;
  GenlEthtool ethtool_;
  ProcSysctl sysctl_;
  LibNft nft_;
  RtnlQdiscs qdiscs_;
  IcmpPinger pinger_;
  HostRdma rdma_;
  KmodModules modules_;
  RtnlRoutes routes_;
  RealTools tools_;
  RealVerbs verbs_;
  PcapCaptures captures_;
  RealStorage storage_;
  RealNvme nvme_;
  RealSrp srp_;
  RealNfs nfs_;
  RealKernelLog kernel_log_;
  System system_{clock_,   netns_,  interrupt_, links_, ethtool_,  sysctl_,  nft_,  qdiscs_, pinger_, rdma_,
                 modules_, routes_, tools_,     verbs_, captures_, storage_, nvme_, srp_,    nfs_,    kernel_log_};
};

}  // namespace rxerun::sys
