#pragma once
// What every traffic step (rping, perftest, verbs) adds to its facts: the
// deltas, across the step, of every rxe device's counters (hw_counters and
// port counters) and of every netdev's statistics in the namespaces the step
// ran in, named `DEV.COUNTER` (`rxe1.sent_pkts`, `vB.tx_packets`), zeros
// included, so that a scenario can assert where packets went and where they
// did not (docs/kernel-notes.md, "Two traps").
//
//   RXERUN_TRY_ASSIGN(const CounterWindow window, CounterWindow::open(ctx, {server_netns, client_netns}));
//   ... run the traffic ...
//   RXERUN_TRY(window.close(ctx, facts));  // adds "rxe0.sent_pkts": 65, "vA.rx_packets": 65, ...
//
// A pair step whose ends are on two nodes of a two-node lab (docs/nodes.md)
// runs on the client's node; the server's node's counters are read there by
// `rxerun __counters`, a tool of that node, and every counter fact carries
// its node in front: `a.rxe0.rcvd_pkts`, `b.eth1.tx_packets`.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "engine/step.h"
#include "sys/system.h"

namespace rxerun::steps {

// A measured value as a fact: `decimals` places, an integer when it is one.
nlohmann::json rounded(double v, int decimals);

// The likely causes of an rdma_cm connection request to `address` that got
// no answer (RDMA_CM_EVENT_UNREACHABLE), in the words every kind that
// connects gives them.
std::string unanswered_hint(const std::string& address);

// The other node of a pair step across two nodes: the node the step runs
// on (`here`), the server's (`there`) and the server's namespace there.
struct OtherNode {
  std::string here, there;
  std::optional<std::string> netns;
};

class CounterWindow {
 public:
  using Snapshot = std::map<std::string, std::uint64_t>;  // "rxe0.sent_pkts" -> value

  // Reads the counters now. `netns`: the namespaces the step's work ran in,
  // nullopt standing for the step's own (the calling thread's current one);
  // duplicates are fine. rxe devices are global and always all read.
  // `other`: the other node's too, and every fact prefixed by its node.
  static Result<CounterWindow> open(StepContext& ctx, const std::vector<std::optional<std::string>>& netns,
                                    std::optional<OtherNode> other = std::nullopt);

  // Reads the counters again and adds one fact per counter: the delta
  // (after - before; a counter that went away or reset counts from 0).
  // A netdev whose name occurs in two of the namespaces is named
  // `NETNS/DEV.COUNTER` (the step's own namespace: no prefix).
  Result<void> close(StepContext& ctx, nlohmann::json& facts) const;

  // Every counter of this kernel as `open` reads them: what `rxerun
  // __counters` prints, as a JSON object, on the other node.
  static Result<Snapshot> read(sys::System& sys, const std::vector<std::optional<std::string>>& netns);

 private:
  std::vector<std::optional<std::string>> netns_;
  std::optional<OtherNode> other_;
  Snapshot before_, other_before_;
};

}  // namespace rxerun::steps
