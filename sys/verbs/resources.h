#pragma once
// What the real verbs check (sys/verbs/real.cpp, verbs_cm.cpp, verbs_self.cpp)
// shares: RAII owners for every libibverbs and librdmacm object, bounded
// waits, the queue-pair endpoint both modes end up with, and the exchange
// that runs over it (verbs_ops.cpp). Not part of sys/'s interface.
//
// A held device blocks `rdma link delete` (the process waits in D state), so
// every object has an owner that releases it on every path, in the order
// the libraries need (QP before CQ and MR, those before the PD).

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/fd.h"
#include "sys/verbs.h"

namespace rxerun::sys::verbs {

using SteadyClock = std::chrono::steady_clock;

// unique_ptr owners. Contexts opened by librdmacm (id->verbs) are librdmacm's:
// they are never wrapped.
template <class T, auto Release>
struct Releaser {
  void operator()(T* p) const {
    if (p) (void)Release(p);
  }
};
using DeviceList = std::unique_ptr<ibv_device*, Releaser<ibv_device*, ibv_free_device_list>>;
using Context = std::unique_ptr<ibv_context, Releaser<ibv_context, ibv_close_device>>;
using Pd = std::unique_ptr<ibv_pd, Releaser<ibv_pd, ibv_dealloc_pd>>;
using Mr = std::unique_ptr<ibv_mr, Releaser<ibv_mr, ibv_dereg_mr>>;
using CompChannel = std::unique_ptr<ibv_comp_channel, Releaser<ibv_comp_channel, ibv_destroy_comp_channel>>;
using Cq = std::unique_ptr<ibv_cq, Releaser<ibv_cq, ibv_destroy_cq>>;
using Qp = std::unique_ptr<ibv_qp, Releaser<ibv_qp, ibv_destroy_qp>>;
using EventChannel = std::unique_ptr<rdma_event_channel, Releaser<rdma_event_channel, rdma_destroy_event_channel>>;

// An rdma_cm id, with the QP rdma_create_qp() gave it (destroyed first).
struct CmIdDeleter {
  void operator()(rdma_cm_id* id) const {
    if (!id) return;
    if (id->qp) rdma_destroy_qp(id);
    rdma_destroy_id(id);
  }
};
using CmId = std::unique_ptr<rdma_cm_id, CmIdDeleter>;

// Memory for a memory region: page-aligned, freed with free().
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::uint8_t, FreeDeleter>;

enum class Wake { Ready, Deadline, Interrupted, Aborted };

// Where every wait of one check ends: its deadline, Ctrl-C (the interrupt's
// fd), or the other side's failure (an eventfd raised by abort()). Shared by
// the threads of one check.
class Waiter {
 public:
  Waiter(std::chrono::steady_clock::time_point deadline, int interrupt_fd);
  // Waits until one of `fds` is readable; never past the deadline (or `until`
  // when sooner). Returns the index of a ready fd in *which.
  Wake wait(const std::vector<int>& fds, std::size_t* which = nullptr,
            std::chrono::steady_clock::time_point until = std::chrono::steady_clock::time_point::max());
  // Ends every wait of the check (the other thread's too).
  void abort();
  bool aborted() const { return aborted_.load(); }
  std::chrono::steady_clock::time_point deadline() const { return deadline_; }

 private:
  std::chrono::steady_clock::time_point deadline_;
  int interrupt_fd_;
  UniqueFd abort_;
  std::atomic<bool> aborted_{false};
};

// How a part of the check ended, before it becomes a VerbsResult.
struct Outcome {
  VerbsStatus status = VerbsStatus::Ok;
  std::string message;
  std::string stage;
  std::string cause;
  bool ok() const { return status == VerbsStatus::Ok; }
  static Outcome failed(std::string stage, std::string message, std::string cause = "");
  static Outcome from_wake(Wake w, std::string stage);  // Deadline / Interrupted / Aborted
};

// The first failure of a check, whichever thread has it: later ones are
// consequences (the other side aborted, its peer went away).
class FirstFailure {
 public:
  // Keeps `o` when it is the first failure (of two timeouts, the client's);
  // aborts the waiter on any failure.
  void report(const Outcome& o, Waiter& waiter, bool client);
  Outcome get() const;

 private:
  mutable std::mutex mu_;
  Outcome first_;
  bool set_ = false;
  bool first_client_ = false;
};

// One end of a connected RC queue pair: its CQ (with a completion channel
// for waiting), its memory and what the peer told about its own.
struct Endpoint {
  ibv_context* ctx = nullptr;  // not owned
  ibv_pd* pd = nullptr;        // not owned
  CompChannel channel;
  Cq cq;
  Qp qp;                     // Self mode; in Cm mode the id owns the QP
  ibv_qp* qp_raw = nullptr;  // the QP in use, either way
  Buffer buffer;
  Mr mr;
  std::size_t region = 0;  // the size of each of the four regions of `buffer`
  // The peer's buffer: its address and rkey (the same layout as ours).
  std::uint64_t remote_addr = 0;
  std::uint32_t remote_rkey = 0;
  // Cm: the id's event channel, watched while waiting for completions (a
  // peer that disconnects ends the wait); null in Self mode.
  rdma_event_channel* cm_channel = nullptr;
  bool peer_hung_up = false;  // Cm: its DISCONNECTED was taken off cm_channel already
  std::string device;

  // The four regions: receive, send, the peer's RDMA WRITE target (also
  // its RDMA READ source), and where RDMA READs land.
  std::uint8_t* recv_region() const { return buffer.get(); }
  std::uint8_t* send_region() const { return buffer.get() + region; }
  std::uint8_t* target_region() const { return buffer.get() + 2 * region; }
  std::uint8_t* read_region() const { return buffer.get() + 3 * region; }
  std::uint64_t remote_target() const { return remote_addr + 2 * region; }
};

// The access every region grants, local and remote.
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
// Queue depths: the bandwidth window plus room for the exchange's messages.
constexpr unsigned kSendDepth = 256;
constexpr unsigned kRecvDepth = 8;
constexpr unsigned kCqDepth = kSendDepth + kRecvDepth + 8;

// Allocates the buffer (four regions of `region` bytes), the CQ with its
// channel, and registers the memory: what both modes need before their QPs.
Result<void> prepare(Endpoint& ep, ibv_context* ctx, ibv_pd* pd, std::size_t region);
// The attributes of an RC QP over `ep`'s CQ.
ibv_qp_init_attr qp_attributes(const Endpoint& ep);

// The pattern byte at offset `i` of pattern `seed` (not periodic at 256).
inline std::uint8_t pattern_byte(std::uint64_t i, std::uint32_t seed) {
  return static_cast<std::uint8_t>(((i ^ (i >> 8) ^ (i >> 16)) * 31 + seed * 7 + 1) & 0xff);
}
void fill_pattern(std::uint8_t* p, std::size_t n, std::uint32_t seed);
// How many of the n bytes differ from the pattern; the first one in *first.
std::size_t count_mismatches(const std::uint8_t* p, std::size_t n, std::uint32_t seed, std::size_t* first);

// The two ends after they are connected: the client drives the exchange and
// the server answers (each on its own thread). What they verified adds up
// in `result`.
struct Shared {
  const VerbsRequest& request;
  Waiter& waiter;
  FirstFailure& failure;
  std::mutex mu;  // guards `result`
  VerbsResult& result;
};
// The client's part: every op and size, verified; then the measurements;
// then a goodbye the server answers. Returns when done or failed.
Outcome run_client(Endpoint& ep, Shared& shared);
// The server's part: answers the client's messages until its goodbye.
// arm_server() posts its first receive: before the client can send.
Outcome arm_server(Endpoint& ep);
Outcome run_server(Endpoint& ep, Shared& shared);

// The size of each region: the largest size asked for.
std::size_t region_for(const VerbsRequest& request);
// The device list, or an error that says why libibverbs lists no device
// (what IBV_SHOW_WARNINGS=1 would print: no rxe.driver, no provider).
Result<DeviceList> device_list();

// The two modes (verbs_self.cpp, verbs_cm.cpp), run in the worker process
// (verbs_real.cpp). An Error: the check could not run.
Result<VerbsResult> run_self(const VerbsRequest& request, Waiter& waiter);
Result<VerbsResult> run_cm(const VerbsRequest& request, Waiter& waiter);
// Cm mode's server alone, for a client elsewhere (serve_verbs): `listening`
// is called once it listens.
Result<VerbsResult> serve_cm(const VerbsRequest& request, Waiter& waiter, const std::function<void()>& listening);

// Folds an outcome into the result (status, message, stage, cause).
void apply(const Outcome& o, VerbsResult& result);

// IPv6 text of a GID ("::ffff:10.10.0.1", "fe80::...").
std::string gid_text(const ibv_gid& gid);
// IB MTU enum to bytes (IBV_MTU_1024 -> 1024).
unsigned mtu_bytes(ibv_mtu m);

}  // namespace rxerun::sys::verbs
