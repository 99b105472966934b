#pragma once
// The implementations `rxerun plan` runs a scenario against: they change
// nothing and note each action with the shell command a person would type.
// Waits return at once (virtual time moves on). Reads answer from what the
// plan itself created, so that later steps see earlier steps' work.
//
// One file (pair) per service under sys/recording/, named as the service's
// interface is (sys/links.h -> sys/recording/links.h); this header holds
// what they share (the ActionLog they write to) and wires them into one
// System: it is the one the plan includes.

#include <string>
#include <vector>

#include "sys/interrupt.h"
#include "sys/recording/capture.h"
#include "sys/recording/clock.h"
#include "sys/recording/ethtool.h"
#include "sys/recording/kernel_log.h"
#include "sys/recording/links.h"
#include "sys/recording/netns.h"
#include "sys/recording/nft.h"
#include "sys/recording/nvme.h"
#include "sys/recording/ping.h"
#include "sys/recording/qdisc.h"
#include "sys/recording/rdma.h"
#include "sys/recording/routes.h"
#include "sys/recording/sysctl.h"
#include "sys/recording/tools.h"
#include "sys/recording/verbs.h"
#include "sys/system.h"

namespace rxerun::sys {

class ActionLog final : public Recorder {
 public:
  void record(PlannedAction action) override;
  void record(std::string what, std::string shell) { record(PlannedAction{std::move(what), std::move(shell)}); }
  // For a command that names its namespace itself (`ip -n NAME ...`): it runs
  // as it is from any namespace, so it is not wrapped in `ip netns exec`.
  void record_anywhere(std::string what, std::string shell);
  std::vector<PlannedAction> take();  // the actions since the last take()

  // The namespace that later actions happen in ("" for rxerun's own).
  void set_netns(std::string name) { netns_ = std::move(name); }
  const std::string& netns() const { return netns_; }

 private:
  std::vector<PlannedAction> actions_;
  std::string netns_;
};

// A number as sleep(1), ping -i and tc take it: three decimals at most, no
// trailing zeros ("0.25", "2").
std::string decimal_text(double value);

// The recordings keep the kernel's state in the models of sys/model/, which
// hold only what the plan made. A model's "not there" (ENODEV, ENOENT,
// ESRCH, EADDRNOTAVAIL) is no refusal in a plan: the host, which a plan does
// not read, may well have it, and the command is shown all the same.
bool absent_from_plan(const Error& model_error);
// Any other error (EEXIST, EBUSY: at odds with what the plan itself made)
// is a refusal: the run would be refused too.
inline bool refused(const Result<void>& model_answer) {
  return !model_answer && !absent_from_plan(model_answer.error());
}

// Everything above, wired into one System.
class RecordingSystem {
 public:
  RecordingSystem();
  System& system() { return system_; }
  ActionLog& log() { return log_; }

 private:
  ActionLog log_;
  RecordingClock clock_{log_};
  RecordingLinks links_{log_};
  RecordingNetns netns_{log_, links_.model()};  // a namespace's interfaces come and go with it
  Interrupt interrupt_;
  RecordingEthtool ethtool_{log_};
  RecordingSysctl sysctl_{log_};
  RecordingNft nft_{log_};
  RecordingQdiscs qdiscs_{log_};
  RecordingPinger pinger_{log_};
  RecordingRdma rdma_{log_, links_.model()};
  RecordingRoutes routes_{log_};
  RecordingTools tools_{log_};
  RecordingVerbs verbs_{log_};
  RecordingCaptures captures_{log_};
  RecordingNvme nvme_{log_};
  RecordingKernelLog kernel_log_;
  System system_{clock_, netns_,  interrupt_, links_, ethtool_,  sysctl_, nft_,        qdiscs_, pinger_,
                 rdma_,  routes_, tools_,     verbs_, captures_, nvme_,   kernel_log_, &log_};
};

}  // namespace rxerun::sys
