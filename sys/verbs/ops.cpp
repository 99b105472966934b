// The exchange over a connected pair of RC queue pairs, the same in both
// modes (sys/verbs/resources.h): the client drives, the server answers.
//
// Every client message is a SEND with immediate data (type << 24 | size) and
// gets one answer before the next goes, so one posted receive on each side
// is enough and nothing ever meets an empty receive queue:
//   CHECK    the payload is the SEND pattern: the server verifies it;
//   WRITTEN  the client RDMA-wrote the WRITE pattern into the server's
//            target region just before (RC keeps the order): verified there;
//   FILL     the server fills its target region with the READ pattern, which
//            the client then RDMA-READs and verifies itself;
//   PING     answered at once with PONG of the same size (latency);
//   BYE      the last one.
// Bandwidth needs no answer: RDMA WRITEs streamed into the target region,
// a window of them in flight, every 16th signalled.
//
// Waits sleep on the CQ's completion channel (and, in Cm mode, the rdma_cm
// event channel, so that a peer that goes away ends the wait), bounded by
// the check's Waiter; no loop spins without that bound.

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>

#include "base/duration.h"
#include "sys/verbs/resources.h"

namespace rxerun::sys::verbs {

namespace {

enum Msg : std::uint32_t { kCheck = 1, kWritten = 2, kFill = 3, kPing = 4, kPong = 5, kBye = 6, kReply = 7 };
// What a work request was, kept in wr_id: a failed completion's opcode is
// undefined, its wr_id is not.
enum WrKind : std::uint64_t { kWrRecv = 1, kWrSend = 2, kWrWrite = 3, kWrRead = 4 };

constexpr unsigned kSignalEvery = 16;
constexpr unsigned kWindow = 128;  // writes in flight, below kSendDepth

std::uint32_t imm(Msg type, std::uint32_t size) {
  return htonl((static_cast<std::uint32_t>(type) << 24) | size);
}
Msg imm_type(std::uint32_t raw) {
  return static_cast<Msg>(ntohl(raw) >> 24);
}
std::uint32_t imm_size(std::uint32_t raw) {
  return ntohl(raw) & 0xffffff;
}

std::uint32_t seed_for(VerbsOp op, std::uint32_t size) {
  return static_cast<std::uint32_t>(op) * 101 + size % 251;
}

const char* wr_name(std::uint64_t wr_id) {
  switch (wr_id) {
    case kWrRecv: return "RECV";
    case kWrSend: return "SEND";
    case kWrWrite: return "RDMA WRITE";
    case kWrRead: return "RDMA READ";
  }
  return "work request";
}

Outcome ok() {
  return {};
}

Outcome post_recv(Endpoint& ep, const std::string& stage) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(ep.recv_region()), static_cast<std::uint32_t>(ep.region), ep.mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = kWrRecv;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(ep.qp_raw, &wr, &bad); rc != 0)
    return Outcome::failed(stage, stage + ": ibv_post_recv: " + std::strerror(rc), "post");
  return ok();
}

// One work request on the send queue.
struct Send {
  ibv_wr_opcode opcode = IBV_WR_SEND_WITH_IMM;
  std::uint64_t wr_id = kWrSend;
  std::uint8_t* local = nullptr;
  std::uint32_t length = 0;
  std::uint64_t remote = 0;  // RDMA ops
  std::uint32_t imm_data = 0;
  bool signaled = true;
};

Outcome post_send(Endpoint& ep, const Send& s, const std::string& stage) {
  ibv_sge sge{reinterpret_cast<std::uintptr_t>(s.local), s.length, ep.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = s.wr_id;
  wr.opcode = s.opcode;
  wr.sg_list = s.length ? &sge : nullptr;
  wr.num_sge = s.length ? 1 : 0;
  wr.send_flags = s.signaled ? IBV_SEND_SIGNALED : 0;
  if (s.opcode == IBV_WR_SEND_WITH_IMM) wr.imm_data = s.imm_data;
  if (s.opcode == IBV_WR_RDMA_WRITE || s.opcode == IBV_WR_RDMA_READ) {
    wr.wr.rdma.remote_addr = s.remote;
    wr.wr.rdma.rkey = ep.remote_rkey;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ep.qp_raw, &wr, &bad); rc != 0)
    return Outcome::failed(stage, stage + ": ibv_post_send: " + std::strerror(rc), "post");
  return ok();
}

// Completions as they come: `take` is called for each until it says done.
// Sleeps on the completion channel between them; a CM event (the peer
// disconnecting) or the Waiter ends the wait.
Outcome await(Endpoint& ep, Shared& s, const std::string& stage, const std::function<bool(const ibv_wc&)>& take) {
  bool armed = false;
  unsigned polls = 0;
  for (;;) {
    ibv_wc wc[16];
    const int n = ibv_poll_cq(ep.cq.get(), 16, wc);
    if (n < 0) return Outcome::failed(stage, stage + ": ibv_poll_cq failed", "poll");
    if (n > 0) {
      armed = false;
      bool done = false;
      for (int i = 0; i < n; ++i) {
        if (wc[i].status != IBV_WC_SUCCESS)
          return Outcome::failed(stage,
                                 stage + ": " + wr_name(wc[i].wr_id) + " completed with status " +
                                     ibv_wc_status_str(wc[i].status) + " (" + std::to_string(wc[i].status) +
                                     ", vendor error " + std::to_string(wc[i].vendor_err) + ")",
                                 std::string("IBV_WC ") + ibv_wc_status_str(wc[i].status));
        if (take(wc[i])) done = true;
      }
      if (done) return ok();
      // Completions that keep coming never sleep: check the bounds now and then.
      if (++polls % 64 == 0) {
        if (SteadyClock::now() >= s.waiter.deadline()) return Outcome::from_wake(Wake::Deadline, stage);
        if (s.waiter.aborted()) return Outcome::from_wake(Wake::Aborted, stage);
      }
      continue;
    }
    if (!armed) {
      // Arm, then poll once more: a completion between the poll and the arming raises no event.
      if (int rc = ibv_req_notify_cq(ep.cq.get(), 0); rc != 0)
        return Outcome::failed(stage, stage + ": ibv_req_notify_cq: " + std::strerror(rc), "poll");
      armed = true;
      continue;
    }
    std::size_t which = 0;
    const Wake w = s.waiter.wait({ep.channel->fd, ep.cm_channel ? ep.cm_channel->fd : -1}, &which);
    if (w != Wake::Ready) return Outcome::from_wake(w, stage);
    if (which == 0) {
      ibv_cq* cq = nullptr;
      void* cq_ctx = nullptr;
      if (ibv_get_cq_event(ep.channel.get(), &cq, &cq_ctx) == 0) {
        ibv_ack_cq_events(cq, 1);
        armed = false;
      }
      continue;
    }
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ep.cm_channel, &ev) != 0) continue;  // not yet (non-blocking)
    const std::string name = rdma_event_str(ev->event);
    const int status = ev->status;
    rdma_ack_cm_event(ev);
    return Outcome::failed(
        stage, stage + ": the connection ended: " + name + " (status " + std::to_string(status) + ")", name);
  }
}

std::string op_stage(VerbsOp op, unsigned size) {
  return to_string(op) + " " + std::to_string(size);
}

void add_verified(Shared& s, std::size_t n) {
  std::lock_guard<std::mutex> lock(s.mu);
  s.result.bytes_verified += n;
}

Outcome data_mismatch(const std::string& stage, const std::string& what, std::size_t size, std::size_t bad,
                      std::size_t first) {
  return Outcome::failed(stage,
                         stage + ": " + what + ": " + std::to_string(bad) + " of " + std::to_string(size) +
                             " bytes differ from the pattern, the first at offset " + std::to_string(first),
                         "mismatch");
}

// Client: one message and its answer. The receive for the answer goes first.
Outcome exchange(Endpoint& ep, Shared& s, Msg type, std::uint32_t size, const std::string& stage,
                 std::uint32_t* answer = nullptr) {
  if (auto o = post_recv(ep, stage); !o.ok()) return o;
  if (auto o = post_send(ep,
                         {.local = ep.send_region(),
                          .length = type == kCheck || type == kPing ? size : 0,
                          .imm_data = imm(type, size)},
                         stage);
      !o.ok())
    return o;
  bool sent = false, answered = false;
  return await(ep, s, stage, [&](const ibv_wc& wc) {
    if (wc.wr_id == kWrSend) sent = true;
    if (wc.wr_id == kWrRecv) {
      answered = true;
      if (answer) *answer = imm_size(wc.imm_data);
    }
    return sent && answered;
  });
}

Outcome verify_send(Endpoint& ep, Shared& s, unsigned size) {
  const std::string stage = op_stage(VerbsOp::Send, size);
  fill_pattern(ep.send_region(), size, seed_for(VerbsOp::Send, size));
  return exchange(ep, s, kCheck, size, stage);
}

Outcome verify_write(Endpoint& ep, Shared& s, unsigned size) {
  const std::string stage = op_stage(VerbsOp::Write, size);
  fill_pattern(ep.send_region(), size, seed_for(VerbsOp::Write, size));
  if (auto o = post_send(ep,
                         {.opcode = IBV_WR_RDMA_WRITE,
                          .wr_id = kWrWrite,
                          .local = ep.send_region(),
                          .length = size,
                          .remote = ep.remote_target()},
                         stage);
      !o.ok())
    return o;
  bool written = false;
  if (auto o = await(ep, s, stage, [&](const ibv_wc& wc) { return written = wc.wr_id == kWrWrite; }); !o.ok()) return o;
  return exchange(ep, s, kWritten, size, stage);
}

Outcome verify_read(Endpoint& ep, Shared& s, unsigned size) {
  const std::string stage = op_stage(VerbsOp::Read, size);
  if (auto o = exchange(ep, s, kFill, size, stage); !o.ok()) return o;
  std::memset(ep.read_region(), 0, size);
  if (auto o = post_send(ep,
                         {.opcode = IBV_WR_RDMA_READ,
                          .wr_id = kWrRead,
                          .local = ep.read_region(),
                          .length = size,
                          .remote = ep.remote_target()},
                         stage);
      !o.ok())
    return o;
  if (auto o = await(ep, s, stage, [](const ibv_wc& wc) { return wc.wr_id == kWrRead; }); !o.ok()) return o;
  std::size_t first = 0;
  if (auto bad = count_mismatches(ep.read_region(), size, seed_for(VerbsOp::Read, size), &first))
    return data_mismatch(stage, "RDMA READ brought " + std::to_string(size) + " bytes", size, bad, first);
  add_verified(s, size);
  return ok();
}

Outcome measure_latency(Endpoint& ep, Shared& s, unsigned size, VerbsSizeResult& out) {
  const std::string stage = "latency " + std::to_string(size);
  const unsigned n = s.request.iterations;
  std::vector<double> half_rtt_us;
  half_rtt_us.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    const auto t0 = SteadyClock::now();
    if (auto o = exchange(ep, s, kPing, size, stage); !o.ok()) return o;
    half_rtt_us.push_back(seconds_since(t0) * 1e6 / 2);
  }
  if (half_rtt_us.empty()) return ok();
  std::sort(half_rtt_us.begin(), half_rtt_us.end());
  double sum = 0;
  for (double v : half_rtt_us) sum += v;
  const std::size_t p99 = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n))) - 1;
  out.lat_iterations = n;
  out.lat_min_us = half_rtt_us.front();
  out.lat_avg_us = sum / n;
  out.lat_p99_us = half_rtt_us[std::min(p99, half_rtt_us.size() - 1)];
  return ok();
}

Outcome measure_bandwidth(Endpoint& ep, Shared& s, unsigned size, VerbsSizeResult& out) {
  const std::string stage = "bandwidth " + std::to_string(size);
  const unsigned n = s.request.iterations;
  unsigned posted = 0, completed = 0;
  const auto t0 = SteadyClock::now();
  while (completed < n) {
    while (posted < n && posted - completed < kWindow) {
      // Every 16th and the last are signalled; a signalled completion accounts for those before it.
      const bool signaled = (posted + 1) % kSignalEvery == 0 || posted + 1 == n;
      if (auto o = post_send(ep,
                             {.opcode = IBV_WR_RDMA_WRITE,
                              .wr_id = kWrWrite,
                              .local = ep.send_region(),
                              .length = size,
                              .remote = ep.remote_target(),
                              .signaled = signaled},
                             stage);
          !o.ok())
        return o;
      ++posted;
    }
    unsigned signalled_upto = completed;
    auto o = await(ep, s, stage, [&](const ibv_wc& wc) {
      if (wc.wr_id != kWrWrite) return false;
      // The k-th signalled completion covers writes up to the next multiple of 16 (or the last).
      signalled_upto = std::min(n, (signalled_upto / kSignalEvery + 1) * kSignalEvery);
      return true;
    });
    if (!o.ok()) return o;
    completed = signalled_upto;
  }
  const double secs = seconds_since(t0);
  out.bw_iterations = n;
  out.bw_mib = secs > 0 ? static_cast<double>(size) * n / secs / (1024.0 * 1024.0) : 0;
  return ok();
}

bool wants(const VerbsRequest& r, VerbsOp op) {
  return std::find(r.ops.begin(), r.ops.end(), op) != r.ops.end();
}

}  // namespace

Waiter::Waiter(std::chrono::steady_clock::time_point deadline, int interrupt_fd)
    : deadline_(deadline), interrupt_fd_(interrupt_fd), abort_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Wake Waiter::wait(const std::vector<int>& fds, std::size_t* which, SteadyClock::time_point until) {
  std::vector<pollfd> p;
  for (int fd : fds) p.push_back({fd, POLLIN, 0});
  p.push_back({interrupt_fd_, POLLIN, 0});
  p.push_back({abort_.get(), POLLIN, 0});
  const auto end = std::min(until, deadline_);
  for (;;) {
    if (aborted_.load()) return Wake::Aborted;
    const auto now = SteadyClock::now();
    if (now >= end) return Wake::Deadline;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(end - now).count();
    const int timeout = static_cast<int>(std::min<long long>(left, 60'000));
    const int n = ::poll(p.data(), p.size(), timeout);
    if (n < 0 && errno != EINTR) return Wake::Aborted;
    if (n <= 0) continue;
    if (p[fds.size()].revents) return Wake::Interrupted;
    if (p[fds.size() + 1].revents) return Wake::Aborted;
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (p[i].revents) {
        if (which) *which = i;
        return Wake::Ready;
      }
  }
}

void Waiter::abort() {
  aborted_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(abort_.get(), &one, sizeof one);
}

Outcome Outcome::failed(std::string stage, std::string message, std::string cause) {
  return Outcome{VerbsStatus::Failed, std::move(message), std::move(stage), std::move(cause)};
}

Outcome Outcome::from_wake(Wake w, std::string stage) {
  switch (w) {
    case Wake::Ready: return {};
    case Wake::Deadline:
      return Outcome{VerbsStatus::TimedOut, "no progress before the step's deadline", std::move(stage), "deadline"};
    case Wake::Interrupted: return Outcome{VerbsStatus::Interrupted, "interrupted", std::move(stage), "interrupt"};
    case Wake::Aborted: return Outcome{VerbsStatus::Failed, "the other side stopped", std::move(stage), "aborted"};
  }
  return {};
}

void FirstFailure::report(const Outcome& o, Waiter& waiter, bool client) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // An abort is the consequence of another failure, never the first one;
    // when both ends run out of time, the client's stage says more.
    const bool weaker =
        set_ && !first_client_ && first_.status == VerbsStatus::TimedOut && o.status == VerbsStatus::TimedOut && client;
    if ((!set_ || weaker) && !o.ok() && o.cause != "aborted") {
      first_ = o;
      first_client_ = client;
      set_ = true;
    }
  }
  if (!o.ok()) waiter.abort();
}

Outcome FirstFailure::get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_;
}

Result<void> prepare(Endpoint& ep, ibv_context* ctx, ibv_pd* pd, std::size_t region) {
  ep.ctx = ctx;
  ep.pd = pd;
  ep.device = ibv_get_device_name(ctx->device);
  // Every message of the check is a SEND with immediate data; iWARP has no
  // immediate data (siw refuses such a send with EINVAL).
  if (ctx->device->transport_type == IBV_TRANSPORT_IWARP)
    return make_error(ep.device +
                          " is an iWARP device (siw): the verbs check sends with immediate data, which iWARP does "
                          "not carry; check siw devices with rping or perftest",
                      EOPNOTSUPP);
  ep.region = region;
  ep.channel.reset(ibv_create_comp_channel(ctx));
  if (!ep.channel) return make_error("cannot create a completion channel on " + ep.device, errno);
  const int flags = ::fcntl(ep.channel->fd, F_GETFL);
  if (flags < 0 || ::fcntl(ep.channel->fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return make_error("cannot make the completion channel non-blocking", errno);
  ep.cq.reset(ibv_create_cq(ctx, static_cast<int>(kCqDepth), nullptr, ep.channel.get(), 0));
  if (!ep.cq) return make_error("cannot create a completion queue on " + ep.device, errno);
  void* mem = nullptr;
  if (int rc = ::posix_memalign(&mem, 4096, 4 * region); rc != 0)
    return make_error("cannot allocate " + std::to_string(4 * region) + " bytes", rc);
  ep.buffer.reset(static_cast<std::uint8_t*>(mem));
  std::memset(mem, 0, 4 * region);
  ep.mr.reset(ibv_reg_mr(pd, mem, 4 * region, kAccess));
  if (!ep.mr) return make_error("cannot register " + std::to_string(4 * region) + " bytes on " + ep.device, errno);
  return {};
}

ibv_qp_init_attr qp_attributes(const Endpoint& ep) {
  ibv_qp_init_attr a{};
  a.send_cq = ep.cq.get();
  a.recv_cq = ep.cq.get();
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = kSendDepth;
  a.cap.max_recv_wr = kRecvDepth;
  a.cap.max_send_sge = 1;
  a.cap.max_recv_sge = 1;
  return a;
}

void fill_pattern(std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern_byte(i, seed);
}

std::size_t count_mismatches(const std::uint8_t* p, std::size_t n, std::uint32_t seed, std::size_t* first) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != pattern_byte(i, seed)) {
      if (bad++ == 0 && first) *first = i;
    }
  return bad;
}

Outcome run_client(Endpoint& ep, Shared& s) {
  const VerbsRequest& r = s.request;
  for (VerbsOp op : {VerbsOp::Send, VerbsOp::Write, VerbsOp::Read}) {
    if (!wants(r, op)) continue;
    for (unsigned size : r.sizes) {
      Outcome o = op == VerbsOp::Send    ? verify_send(ep, s, size)
                  : op == VerbsOp::Write ? verify_write(ep, s, size)
                                         : verify_read(ep, s, size);
      if (!o.ok()) return o;
    }
    std::lock_guard<std::mutex> lock(s.mu);
    s.result.ops_done.push_back(op);
  }
  if (r.iterations > 0) {
    for (unsigned size : r.sizes) {
      VerbsSizeResult m;
      m.size = size;
      if (auto o = measure_latency(ep, s, size, m); !o.ok()) return o;
      if (auto o = measure_bandwidth(ep, s, size, m); !o.ok()) return o;
      std::lock_guard<std::mutex> lock(s.mu);
      s.result.sizes.push_back(m);
    }
  }
  return exchange(ep, s, kBye, 0, "goodbye");
}

Outcome arm_server(Endpoint& ep) {
  return post_recv(ep, "serve");
}

Outcome run_server(Endpoint& ep, Shared& s) {
  // The first receive was posted by arm_server(), before the client could send.
  for (;;) {
    std::uint32_t raw = 0, length = 0;
    if (auto o = await(ep, s, "serve",
                       [&](const ibv_wc& wc) {
                         if (wc.wr_id != kWrRecv) return false;  // our answers' SENDs
                         raw = wc.imm_data;
                         length = wc.byte_len;
                         return true;
                       });
        !o.ok())
      return o;
    const Msg type = imm_type(raw);
    const std::uint32_t size = imm_size(raw);
    Msg answer = kReply;
    std::uint32_t answer_size = 0;
    switch (type) {
      case kCheck: {
        const std::string stage = op_stage(VerbsOp::Send, size);
        if (length != size)
          return Outcome::failed(
              stage, stage + ": the server received " + std::to_string(length) + " bytes, not " + std::to_string(size),
              "mismatch");
        std::size_t first = 0;
        if (auto bad = count_mismatches(ep.recv_region(), size, seed_for(VerbsOp::Send, size), &first))
          return data_mismatch(stage, "the server received " + std::to_string(size) + " bytes", size, bad, first);
        add_verified(s, size);
        break;
      }
      case kWritten: {
        const std::string stage = op_stage(VerbsOp::Write, size);
        std::size_t first = 0;
        if (auto bad = count_mismatches(ep.target_region(), size, seed_for(VerbsOp::Write, size), &first))
          return data_mismatch(stage, "RDMA WRITE left " + std::to_string(size) + " bytes at the server", size, bad,
                               first);
        add_verified(s, size);
        break;
      }
      case kFill: fill_pattern(ep.target_region(), size, seed_for(VerbsOp::Read, size)); break;
      case kPing:
        answer = kPong;
        answer_size = size;
        break;
      case kBye: break;
      default:
        return Outcome::failed("serve", "unknown message " + std::to_string(ntohl(raw)) + " from the client",
                               "protocol");
    }
    if (type != kBye)
      if (auto o = post_recv(ep, "serve"); !o.ok()) return o;
    if (auto o =
            post_send(ep, {.local = ep.send_region(), .length = answer_size, .imm_data = imm(answer, size)}, "serve");
        !o.ok())
      return o;
    if (type == kBye) {
      // The answer must be on its way before the connection goes. The client
      // hangs up as soon as the answer is in, and its DISCONNECTED can reach
      // us before the completion of our SEND does (seen in the lab VM with a
      // capture running): that, too, says the answer arrived.
      Outcome o = await(ep, s, "goodbye", [](const ibv_wc& wc) { return wc.wr_id == kWrSend; });
      if (!o.ok() && o.cause == "RDMA_CM_EVENT_DISCONNECTED") {
        ep.peer_hung_up = true;
        return ok();
      }
      return o;
    }
  }
}

std::size_t region_for(const VerbsRequest& request) {
  std::size_t region = 64;
  for (unsigned size : request.sizes) region = std::max<std::size_t>(region, size);
  return (region + 63) / 64 * 64;
}

void apply(const Outcome& o, VerbsResult& result) {
  result.status = o.status;
  result.message = o.message;
  result.stage = o.stage;
  result.cause = o.cause;
}

std::string gid_text(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  if (!::inet_ntop(AF_INET6, gid.raw, text, sizeof text)) return "";
  return text;
}

unsigned mtu_bytes(ibv_mtu m) {
  return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << static_cast<unsigned>(m) : 0;
}

}  // namespace rxerun::sys::verbs
