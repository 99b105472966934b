#pragma once
// The nodes (lab VMs) of a two-node scenario, as the loader checks them and
// the runner will dispatch by them: which nodes a step touches, and the
// names and MAC addresses `nodes:` and `wires:` may hold.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rxerun {

struct Kind;
struct StepSpec;

// A scenario may declare at most this many nodes: each is a lab VM of about
// 1.4 GB of memory.
inline constexpr std::size_t kMaxLabNodes = 4;

// The distinct nodes `step` touches, in order: for a pair kind (one whose
// Kind::end_nodes is not empty), each end's node as its parameter at that
// path names it, else the step's `node:`; for any other kind (or no kind:
// `kind` may be nullptr), the step's `node:`. An end whose object the step
// does not give at all (verbs with `client: {to: ...}` and no `server:`)
// is no end; with no end given, the step's `node:`. Empty in a scenario
// without nodes, and for a step that names none (`sleep`).
std::vector<std::string> step_nodes(const StepSpec& step, const Kind* kind);

// The parameter at a dotted path of a step's parameters ("server.node");
// nullptr when the step does not give it.
const nlohmann::json* param_at(const nlohmann::json& params, const std::string& path);

// Whether the end an end-node path belongs to is there: "server.node" when
// the step gives `server:`; a top-level path ("server_node") always.
bool end_given(const nlohmann::json& params, const std::string& end_node_path);

// A node's name: a letter, then letters, digits, '-' or '_'; at most 15
// bytes (it names the lab VM's hostname and prefixes facts: a.rxe0.sent_pkts).
bool valid_node_name(std::string_view name);

// A unicast MAC address written as six pairs of hex digits joined by ':'
// ("52:54:00:12:34:56"), lower-cased; "" with `why` set when it is not one
// (badly written, multicast, all zero). Locally administered or not.
std::string normalized_mac(std::string_view text, std::string* why);

// The MAC of a wire end the scenario gives none for: 52:54:00:0a:WW:NN, WW
// the wire's 1-based position in `wires:` and NN 1 for its first end, 2 for
// its second (both in hex).
std::string derived_mac(std::size_t wire, int end);

}  // namespace rxerun
