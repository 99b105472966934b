// Cm mode: a server that listens and a client that connects, through
// rdma_cm, each on its own thread and, when asked, in its own network
// namespace. rdma_cm takes the namespace of the task that creates its ids,
// so each thread enters its namespace (sys/netns.h) before it creates its
// event channel and ids, and goes back when it ends.
//
// The memory keys travel in the connection's private data (the client's in
// the request, the server's in the answer), so the exchange can start as
// soon as both ends are ESTABLISHED. Every CM event is waited for on the
// channel's fd together with Ctrl-C and the check's deadline; an event other
// than the expected one ends the check as a failure that names it
// (RDMA_CM_EVENT_REJECTED, UNREACHABLE, ADDR_ERROR, ROUTE_ERROR) with its
// status. Without a server (no `server` in the step) nothing listens: the
// client alone connects to `to`, which is how a scenario checks a refusal.

#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <thread>

#include "sys/netns.h"
#include "sys/verbs/resources.h"

namespace rxerun::sys::verbs {

namespace {

constexpr int kResolveMs = 2000;                    // rdma_resolve_addr / _route, at most
constexpr auto kGoodbye = std::chrono::seconds(2);  // how long a DISCONNECTED event is waited for
constexpr std::uint32_t kMagic = 0x72786576;        // "rxev"

// What each end tells the other in the private data: where its buffer is.
struct KeyInfo {
  std::uint32_t magic;
  std::uint32_t rkey;
  std::uint64_t addr;
  std::uint64_t region;
};

KeyInfo key_info(const Endpoint& ep) {
  return {htobe32(kMagic), htobe32(ep.mr->rkey), htobe64(reinterpret_cast<std::uintptr_t>(ep.buffer.get())),
          htobe64(ep.region)};
}

// The IB CM's reject reasons that a RoCE connect meets (IBTA 12.6.7.2).
std::string reject_reason(int status) {
  switch (status) {
    case 1: return "no QP available";
    case 3: return "no resources";
    case 4: return "timeout";
    case 5: return "unsupported request";
    case 8: return "invalid service ID: nothing listens on that address and port";
    case 26: return "invalid MTU";
    case 28: return "rejected by the peer";
  }
  return "reason " + std::to_string(status);
}

std::string describe_event(rdma_cm_event_type type, int status) {
  std::string s = std::string(rdma_event_str(type)) + " (status " + std::to_string(status);
  if (type == RDMA_CM_EVENT_REJECTED)
    s += ": " + reject_reason(status);
  else if (status < 0)
    s += ": " + std::string(std::strerror(-status));
  return s + ")";
}

struct CmEvent {
  rdma_cm_event_type type{};
  int status = 0;
  rdma_cm_id* id = nullptr;
  std::vector<std::uint8_t> private_data;
};

// The next event on `ch`, copied and acknowledged (an id cannot be destroyed
// while it has events not acknowledged).
Outcome next_event(rdma_event_channel* ch, Waiter& w, const std::string& stage, CmEvent* out,
                   SteadyClock::time_point until = SteadyClock::time_point::max()) {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch, &ev) == 0) {
      out->type = ev->event;
      out->status = ev->status;
      out->id = ev->id;
      const auto* pd = static_cast<const std::uint8_t*>(ev->param.conn.private_data);
      if (pd && (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST || ev->event == RDMA_CM_EVENT_ESTABLISHED))
        out->private_data.assign(pd, pd + ev->param.conn.private_data_len);
      rdma_ack_cm_event(ev);
      return {};
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return Outcome::failed(stage, std::string("rdma_get_cm_event: ") + std::strerror(errno), "rdma_get_cm_event");
    if (const Wake wake = w.wait({ch->fd}, nullptr, until); wake != Wake::Ready) return Outcome::from_wake(wake, stage);
  }
}

// Waits for `want`; any other event fails, named.
Outcome expect(rdma_event_channel* ch, Waiter& w, rdma_cm_event_type want, const std::string& stage,
               const std::string& what, CmEvent* out) {
  if (auto o = next_event(ch, w, stage, out); !o.ok()) return o;
  if (out->type != want) {
    const std::string name = rdma_event_str(out->type);
    return Outcome::failed(stage, what + ": " + describe_event(out->type, out->status), name);
  }
  return {};
}

Result<sockaddr_storage> make_addr(const std::string& addr, unsigned port) {
  sockaddr_storage ss{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, addr.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
  } else if (::inet_pton(AF_INET6, addr.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
  } else {
    return make_error("'" + addr + "' is not an IP address", EINVAL);
  }
  return ss;
}

std::string endpoint_text(const std::string& addr, unsigned port) {
  return (addr.find(':') != std::string::npos ? "[" + addr + "]" : addr) + ":" + std::to_string(port);
}

int remaining_ms(const Waiter& w, int cap) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(w.deadline() - SteadyClock::now()).count();
  return static_cast<int>(std::max<long long>(1, std::min<long long>(cap, left)));
}

// Enters `netns` on the calling thread for the scope's life; none when unset.
Result<std::unique_ptr<NetnsScope>> enter(const std::optional<std::string>& netns) {
  if (!netns) return std::unique_ptr<NetnsScope>();
  RealNetns n;
  return n.enter(*netns);
}

Result<EventChannel> open_channel() {
  EventChannel ch(rdma_create_event_channel());
  if (!ch) {
    const int err = errno;
    std::string why = std::strerror(err);
    if (err == ENOENT || err == ENODEV) why += " (/dev/infiniband/rdma_cm: is rdma_ucm loaded? the rxe step loads it)";
    return make_error("cannot open the rdma_cm event channel: " + why, err);
  }
  const int flags = ::fcntl(ch->fd, F_GETFL);
  if (flags < 0 || ::fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return make_error("cannot make the rdma_cm channel non-blocking", errno);
  return ch;
}

Result<CmId> create_id(rdma_event_channel* ch) {
  rdma_cm_id* raw = nullptr;
  if (rdma_create_id(ch, &raw, nullptr, RDMA_PS_TCP) != 0)
    return make_error(std::string("cannot create an rdma_cm id: ") + std::strerror(errno), errno);
  return CmId(raw);
}

rdma_conn_param conn_param(const KeyInfo& info) {
  rdma_conn_param p{};
  p.private_data = &info;
  p.private_data_len = sizeof info;
  p.responder_resources = 1;  // one RDMA READ in flight each way
  p.initiator_depth = 1;
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  return p;
}

// The peer's keys from the private data; false when it is not ours.
bool take_keys(const std::vector<std::uint8_t>& data, Endpoint& ep) {
  KeyInfo k{};
  if (data.size() < sizeof k) return false;
  std::memcpy(&k, data.data(), sizeof k);
  if (be32toh(k.magic) != kMagic || be64toh(k.region) != ep.region) return false;
  ep.remote_rkey = be32toh(k.rkey);
  ep.remote_addr = be64toh(k.addr);
  return true;
}

// Destroys the QP rdma_create_qp() put on the id before the CQ and memory
// it uses go (declared after the Endpoint, so released before it).
struct QpGuard {
  rdma_cm_id* id = nullptr;
  ~QpGuard() {
    if (id && id->qp) rdma_destroy_qp(id);
  }
};

// What one thread ends with: an Error when its end could not run at all.
struct CmSide {
  std::optional<Error> error;
  Outcome outcome;
};

// `listening` is called once the server listens (the client may connect).
void server_side(const VerbsRequest& req, Waiter& w, const std::function<void()>& listening, Shared& shared,
                 CmSide& side) {
  const std::string here = endpoint_text(req.server.addr, req.port);
  auto fail_setup = [&](Error e) {
    side.error = std::move(e);
    w.abort();
  };
  auto scope = enter(req.server.netns);
  if (!scope) return fail_setup(scope.error());
  auto ch = open_channel();
  if (!ch) return fail_setup(ch.error());
  auto listen_id = create_id(ch->get());
  if (!listen_id) return fail_setup(listen_id.error());
  auto addr = make_addr(req.server.addr, req.port);
  if (!addr) return fail_setup(addr.error());
  int reuse = 1;
  (void)rdma_set_option(listen_id->get(), RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &reuse, sizeof reuse);
  if (rdma_bind_addr(listen_id->get(), reinterpret_cast<sockaddr*>(&*addr)) != 0) {
    const int err = errno;
    std::string why = std::strerror(err);
    if (err == EADDRNOTAVAIL || err == ENODEV)
      why += " (is " + req.server.addr + " an address of a netdev with an rxe device" +
             (req.server.netns ? " in netns " + *req.server.netns : std::string()) + "?)";
    return fail_setup(make_error("the server cannot listen on " + here + ": " + why, err));
  }
  if (rdma_listen(listen_id->get(), 4) != 0)
    return fail_setup(make_error("the server cannot listen on " + here + ": " + std::strerror(errno), errno));
  listening();

  CmEvent ev;
  if (auto o = expect(ch->get(), w, RDMA_CM_EVENT_CONNECT_REQUEST, "accept", "waiting for the client on " + here, &ev);
      !o.ok()) {
    side.outcome = o;
    return;
  }
  CmId conn(ev.id);
  Pd pd(ibv_alloc_pd(conn->verbs));
  if (!pd) return fail_setup(make_error("cannot allocate a protection domain", errno));
  Endpoint ep;
  QpGuard guard;
  if (auto r = prepare(ep, conn->verbs, pd.get(), region_for(req)); !r) return fail_setup(r.error());
  ep.cm_channel = ch->get();
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    shared.result.server_device = ep.device;
  }
  if (!take_keys(ev.private_data, ep)) {
    (void)rdma_reject(conn.get(), nullptr, 0);
    side.outcome =
        Outcome::failed("accept", "the connection request from the client carries no memory keys", "protocol");
    return;
  }
  ibv_qp_init_attr attr = qp_attributes(ep);
  if (rdma_create_qp(conn.get(), pd.get(), &attr) != 0)
    return fail_setup(make_error(std::string("cannot create a queue pair: ") + std::strerror(errno), errno));
  guard.id = conn.get();
  ep.qp_raw = conn->qp;
  if (auto o = arm_server(ep); !o.ok()) {
    side.outcome = o;
    return;
  }
  const KeyInfo mine = key_info(ep);
  rdma_conn_param param = conn_param(mine);
  if (rdma_accept(conn.get(), &param) != 0) {
    side.outcome = Outcome::failed("accept", std::string("rdma_accept: ") + std::strerror(errno), "rdma_accept");
    return;
  }
  if (auto o = expect(ch->get(), w, RDMA_CM_EVENT_ESTABLISHED, "accept", "accepting the client", &ev); !o.ok()) {
    side.outcome = o;
    return;
  }
  side.outcome = run_server(ep, shared);
  if (side.outcome.ok()) {
    // The client hangs up; its DISCONNECTED (or the bound) ends the wait.
    if (!ep.peer_hung_up) (void)next_event(ch->get(), w, "goodbye", &ev, SteadyClock::now() + kGoodbye);
    (void)rdma_disconnect(conn.get());
  }
}

void client_side(const VerbsRequest& req, Waiter& w, int ready_fd, Shared& shared, CmSide& side) {
  const std::string to = req.client.to.empty() ? req.server.addr : req.client.to;
  const std::string there = endpoint_text(to, req.port);
  auto fail_setup = [&](Error e) {
    side.error = std::move(e);
    w.abort();
  };
  auto scope = enter(req.client.netns);
  if (!scope) return fail_setup(scope.error());
  auto ch = open_channel();
  if (!ch) return fail_setup(ch.error());
  auto id = create_id(ch->get());
  if (!id) return fail_setup(id.error());
  auto dst = make_addr(to, req.port);
  if (!dst) return fail_setup(dst.error());
  std::optional<sockaddr_storage> src;
  if (!req.client.addr.empty()) {
    auto s = make_addr(req.client.addr, 0);
    if (!s) return fail_setup(s.error());
    src = *s;
  }
  if (ready_fd >= 0) {
    if (const Wake wake = w.wait({ready_fd}); wake != Wake::Ready) {
      side.outcome = Outcome::from_wake(wake, "wait for the server");
      return;
    }
  }

  CmEvent ev;
  if (rdma_resolve_addr(id->get(), src ? reinterpret_cast<sockaddr*>(&*src) : nullptr,
                        reinterpret_cast<sockaddr*>(&*dst), remaining_ms(w, kResolveMs)) != 0) {
    side.outcome = Outcome::failed(
        "resolve address",
        "rdma_resolve_addr " + to + (src ? " from " + req.client.addr : std::string()) + ": " + std::strerror(errno),
        "rdma_resolve_addr");
    return;
  }
  if (auto o = expect(ch->get(), w, RDMA_CM_EVENT_ADDR_RESOLVED, "resolve address", "resolving " + to, &ev); !o.ok()) {
    side.outcome = o;
    return;
  }
  if (rdma_resolve_route(id->get(), remaining_ms(w, kResolveMs)) != 0) {
    side.outcome = Outcome::failed("resolve route", std::string("rdma_resolve_route: ") + std::strerror(errno),
                                   "rdma_resolve_route");
    return;
  }
  if (auto o = expect(ch->get(), w, RDMA_CM_EVENT_ROUTE_RESOLVED, "resolve route", "a route to " + to, &ev); !o.ok()) {
    side.outcome = o;
    return;
  }

  Pd pd(ibv_alloc_pd((*id)->verbs));
  if (!pd) return fail_setup(make_error("cannot allocate a protection domain", errno));
  Endpoint ep;
  QpGuard guard;
  if (auto r = prepare(ep, (*id)->verbs, pd.get(), region_for(req)); !r) return fail_setup(r.error());
  ep.cm_channel = ch->get();
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    shared.result.client_device = ep.device;
    const rdma_route& route = (*id)->route;
    const ibv_gid* sgid = route.num_paths > 0 ? &route.path_rec[0].sgid : &route.addr.addr.ibaddr.sgid;
    const ibv_gid* dgid = route.num_paths > 0 ? &route.path_rec[0].dgid : &route.addr.addr.ibaddr.dgid;
    shared.result.local_gid = gid_text(*sgid);
    shared.result.remote_gid = gid_text(*dgid);
    ibv_port_attr port{};
    if (ibv_query_port((*id)->verbs, (*id)->port_num, &port) == 0)
      shared.result.active_mtu = mtu_bytes(port.active_mtu);
  }
  ibv_qp_init_attr attr = qp_attributes(ep);
  if (rdma_create_qp(id->get(), pd.get(), &attr) != 0)
    return fail_setup(make_error(std::string("cannot create a queue pair: ") + std::strerror(errno), errno));
  guard.id = id->get();
  ep.qp_raw = (*id)->qp;
  const KeyInfo mine = key_info(ep);
  rdma_conn_param param = conn_param(mine);
  if (rdma_connect(id->get(), &param) != 0) {
    side.outcome = Outcome::failed("connect", "rdma_connect to " + there + ": " + std::strerror(errno), "rdma_connect");
    return;
  }
  if (auto o = expect(ch->get(), w, RDMA_CM_EVENT_ESTABLISHED, "connect", "connect to " + there, &ev); !o.ok()) {
    side.outcome = o;
    return;
  }
  if (!take_keys(ev.private_data, ep)) {
    side.outcome = Outcome::failed("connect", "the server's answer carries no memory keys", "protocol");
    return;
  }
  side.outcome = run_client(ep, shared);
  (void)rdma_disconnect(id->get());
  (void)next_event(ch->get(), w, "goodbye", &ev, SteadyClock::now() + kGoodbye);
}

}  // namespace

Result<VerbsResult> run_cm(const VerbsRequest& req, Waiter& waiter) {
  VerbsResult result;
  FirstFailure failure;
  Shared shared{req, waiter, failure, {}, result};
  const bool with_server = !req.server.addr.empty();
  UniqueFd ready(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!ready.valid()) return make_error("cannot create an eventfd", errno);

  CmSide server, client;
  std::thread server_thread, client_thread;
  try {
    if (with_server)
      server_thread = std::thread([&] {
        server_side(
            req, waiter,
            [&] {
              const std::uint64_t one = 1;
              [[maybe_unused]] auto n = ::write(ready.get(), &one, sizeof one);
            },
            shared, server);
        failure.report(server.outcome, waiter, false);
      });
    client_thread = std::thread([&] {
      client_side(req, waiter, with_server ? ready.get() : -1, shared, client);
      failure.report(client.outcome, waiter, true);
    });
  } catch (const std::system_error& e) {
    waiter.abort();
    if (server_thread.joinable()) server_thread.join();
    return make_error("cannot start the threads of the check", e.code().value());
  }
  if (server_thread.joinable()) server_thread.join();
  client_thread.join();
  if (server.error) return *server.error;
  if (client.error) return *client.error;
  const Outcome first = failure.get();
  if (!first.ok()) apply(first, result);
  return result;
}

Result<VerbsResult> serve_cm(const VerbsRequest& req, Waiter& waiter, const std::function<void()>& listening) {
  VerbsResult result;
  FirstFailure failure;
  Shared shared{req, waiter, failure, {}, result};
  CmSide server;
  server_side(req, waiter, listening, shared, server);
  if (server.error) return *server.error;
  if (!server.outcome.ok()) apply(server.outcome, result);
  return result;
}

}  // namespace rxerun::sys::verbs
