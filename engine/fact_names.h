#pragma once
// Which facts a step reports, from its kind's declaration (FactSpec in
// rxerun/kind.h): at which moment (the step, its start in the background,
// its revert), under which parameters, and what a pattern's upper-case
// words may stand for. Shared by the loader (expectations and
// {{steps.X.Y}} references) and the lab check (engine/lab_check.h), which
// adds what only a walk over the lab knows: which devices exist.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "rxerun/kind.h"

namespace rxerun {

// The counters rxerun reads of an rxe device: its hw_counters, the same 15
// on every kernel since rxe has had them (siw keeps none).
const std::vector<std::string>& rxe_counter_names();
// The port counters of an RDMA device (ports/1/counters/, the IB
// performance counters ib_core shows for rxe and siw too: port_xmit_data,
// port_rcv_packets, ...).
const std::vector<std::string>& port_counter_names();
// The netdev statistics rxerun reads (IFLA_STATS64, named as sysfs does).
const std::vector<std::string>& netdev_counter_names();

// When a step is looked at: kAtStep or kAtStart for the step itself (in
// the background or not), kAtRevert or kAtEnd for a revert of it.
unsigned step_moment(const KindSpec& kind, const nlohmann::json& params);
unsigned revert_moment(const KindSpec& kind, const nlohmann::json& params);

// A fact name split at a DEV.COUNTER pattern: the node (two-node labs), the
// device and the counter.
struct CounterFact {
  std::string node;  // "" without one
  std::string dev;
  std::string counter;
};

// How `fact` is reported by a step of `kind` with `params` at `moment`.
struct FactMatch {
  const FactSpec* spec = nullptr;      // the declaration that matched
  std::optional<CounterFact> counter;  // set for a DEV.COUNTER fact
};

// A fact name that ends in an index ("acls.0"): one item of a list fact,
// counted from 0. Expectations and {{steps.NAME.FACT}} may name one.
struct ListItem {
  std::string list;  // "acls"
  std::size_t index = 0;
};
std::optional<ListItem> list_item(const std::string& fact);

// The value of `fact` among a step's reported `facts`: the fact as named,
// else an item of a list fact (list_item); when there is none, the error
// says why ("reported: sent, acked", "'acls' has 1 item").
Result<nlohmann::json> reported_fact(const nlohmann::json& facts, const std::string& fact);

// Whether some declaration of `kind` names `fact`, at any moment and with
// any parameters: as written, or by a pattern's shape (the loader's check
// of a step read alone; match_fact is the whole one).
bool fact_declared(const KindSpec& kind, const std::string& fact);

// The declaration `fact` matches; otherwise nullopt and `why` says why not
// (a fact it never reports, one of another moment, one that needs a
// parameter, an unknown counter or opcode), with a suggestion where there
// is one. `nodes`: the scenario's node names (NODE.DEV.COUNTER).
std::optional<FactMatch> match_fact(const KindSpec& kind, const nlohmann::json& params, unsigned moment,
                                    const std::string& fact, const std::vector<std::string>& nodes, std::string* why);

// "when it runs", "at its revert", ... for messages.
std::string moment_words(unsigned moment);

}  // namespace rxerun
