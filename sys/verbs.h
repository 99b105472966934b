#pragma once
// A native RDMA check with librdmacm and libibverbs, no external tool:
// connect two queue pairs, exchange memory keys, SEND/RECV, RDMA WRITE and
// RDMA READ of a pattern with every byte verified on the receiving side, then
// latency (SEND ping-pong) and bandwidth (RDMA WRITE streaming) per size.
//
// Two ways to connect:
// - Cm: rdma_cm between two addresses, a server that listens and a client
//   that resolves and connects, each in its own network namespace when asked
//   (rdma_cm takes the namespace of the thread that creates its ids). In one
//   namespace both ends land on the device that owns the server's address
//   (docs/kernel-notes.md, "Loopback"): the devices each side ran on are reported.
// - Self: two RC queue pairs on one device, connected by hand (RESET, INIT,
//   RTR, RTS) with the GID of the device's own address: the single-device hand recipe's
//   loopback RDMA WRITE.
//
// The step (steps/verbs.cpp) turns parameters into a VerbsRequest and the
// VerbsResult into an outcome and facts; the fake (tests/fakes/fake_verbs.h)
// covers that mapping without a device.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/result.h"
#include "sys/clock.h"

namespace rxerun::sys {

class Interrupt;

enum class VerbsMode { Cm, Self };
enum class VerbsOp { Send, Write, Read };

std::string to_string(VerbsOp op);                             // "send", "write", "read"
std::optional<VerbsOp> verbs_op_named(std::string_view name);  // to_string's inverse; nullopt: no such op

struct VerbsEndpoint {
  std::string addr;                  // IPv4 or IPv6 address (client: its source; empty: the route's)
  std::optional<std::string> netns;  // unset: the caller's namespace
  std::string to;                    // client: where it connects; empty: the server's address
};

struct VerbsRequest {
  VerbsMode mode = VerbsMode::Cm;
  // Cm: the server listens on server.addr:port (empty addr: no server, the
  // client alone connects to client.to); the client binds client.addr (when
  // not empty) and connects.
  VerbsEndpoint server, client;
  unsigned port = 18515;
  // Self: the device, and the address whose GID the queue pairs use (empty:
  // the first IPv4-mapped RoCE v2 entry of the device's GID table).
  std::string dev;
  std::string addr;
  std::vector<VerbsOp> ops = {VerbsOp::Send, VerbsOp::Write, VerbsOp::Read};
  std::vector<unsigned> sizes = {4096};  // bytes, each verified and measured
  // Measurements per size: round trips for latency, writes for bandwidth;
  // 0: verification only.
  unsigned iterations = 100;
};

// The measurements of one size.
struct VerbsSizeResult {
  unsigned size = 0;
  unsigned lat_iterations = 0;                            // round trips measured (0: none)
  double lat_min_us = 0, lat_avg_us = 0, lat_p99_us = 0;  // half a round trip, as perftest's _lat tests
  unsigned bw_iterations = 0;                             // writes streamed (0: none)
  double bw_mib = 0;                                      // MiB/s
};

enum class VerbsStatus {
  Ok,
  Failed,       // refused, unreachable, a completion with an error, bytes that differ
  TimedOut,     // no progress before the deadline
  Interrupted,  // Ctrl-C
};

struct VerbsResult {
  VerbsStatus status = VerbsStatus::Ok;
  // Why it failed: "connect to 10.10.0.1:18515: RDMA_CM_EVENT_REJECTED (status 28)",
  // "write 4096: completion with status remote access error (10)".
  std::string message;
  std::string stage;  // what it was doing: "resolve address", "connect", "write 4096", ...
  // What ended it, for hints: the rdma_cm event ("RDMA_CM_EVENT_REJECTED"),
  // the completion status ("IBV_WC retry counter exceeded"), "mismatch",
  // "modify QP to RTR", "deadline", "interrupt"; empty when it passed.
  std::string cause;
  std::vector<VerbsOp> ops_done;             // operations verified, each once (all sizes passed)
  std::uint64_t bytes_verified = 0;          // bytes compared with the pattern, all ops and sizes
  std::string server_device, client_device;  // the ibv device each end ran on ("rxe0")
  std::string local_gid, remote_gid;         // the client's view: its own GID, the server's
  std::optional<unsigned> gid_index;         // Self: the GID index used
  unsigned active_mtu = 0;                   // bytes; 0 when not known
  std::vector<VerbsSizeResult> sizes;
};

class Verbs {
 public:
  virtual ~Verbs() = default;

  // Runs the check to its end, the deadline or Ctrl-C, whichever comes
  // first; every resource it took is released when it returns (a held
  // device would make a later `rdma link delete` block). An Error means it
  // could not run at all (no such device, libibverbs sees no device, cannot
  // enter a namespace); what happened on the wire is in the VerbsResult.
  virtual Result<VerbsResult> run(const VerbsRequest& request, SteadyTime deadline, Interrupt& interrupt) = 0;
};

// Across two nodes of a two-node lab (docs/nodes.md) the two ends cannot
// share a process: the step runs the client on its own node and the server
// on the other node as a tool, `rxerun __verbs-server`, which reads its
// request on stdin as JSON (verbs_request_json), writes kVerbsListening on
// a line of its own once it listens, serves one client, and ends with its
// result as one line of JSON (verbs_result_json).
inline constexpr std::string_view kVerbsListening = "listening";

// The request, with how long the server may wait for its client and serve it.
nlohmann::json verbs_request_json(const VerbsRequest& request, Duration budget);
// An Error names what is missing or wrong; *budget gets the budget.
Result<VerbsRequest> verbs_request_from_json(const nlohmann::json& j, Duration* budget);
// A result, or why the check could not run ({"error": ..., "code": ...}).
nlohmann::json verbs_result_json(const Result<VerbsResult>& result);
Result<VerbsResult> verbs_result_from_json(const nlohmann::json& j);

// One result from the two ends' own: the client's (it drove the exchange:
// its operations done, its GIDs, MTU and measurements), with the server's
// device and the bytes the server verified added. The server's failure is
// the check's when the client passed, or when it is the server's own
// finding (a byte that differs, a message it did not expect): then the
// client saw only the connection end.
VerbsResult merge_verbs_ends(VerbsResult client, const VerbsResult& server);

}  // namespace rxerun::sys
