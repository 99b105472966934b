// Self mode: two RC queue pairs on one device, connected by hand. What the
// single-device hand recipe sets out to do by hand: every state change
// RESET -> INIT -> RTR -> RTS done and checked, the peer's QP number rather
// than the QP's own, the GID index looked up in the device's GID table
// rather than assumed, the path MTU the port really has, and receive queues
// and completions waited for instead of spun on.
//
// The GID table (sysfs ports/1/gids/N, gid_attrs/types/N): all-zero entries
// are unused and skipped; rxe puts the IPv6 link-local entry first and the
// IPv4-mapped one (::ffff:10.10.0.1, RoCE v2) next, but hardware orders them
// otherwise (docs/kernel-notes.md, "GID table").

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "base/strings.h"
#include "sys/rdma_host.h"
#include "sys/verbs/resources.h"

namespace rxerun::sys::verbs {

namespace {

constexpr std::uint8_t kPort = 1;

std::optional<std::string> read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return std::string(trim(line));
}

struct GidChoice {
  unsigned index = 0;
  ibv_gid gid{};
};

// The entry for `addr` (RoCE v2 before v1), or without an address the first
// IPv4-mapped RoCE v2 entry, then any RoCE v2 entry, then any entry.
Result<GidChoice> find_gid(const std::string& dev, const std::string& addr) {
  const auto port = kSysClassInfiniband / dev / "ports" / std::to_string(kPort);
  ibv_gid wanted{};
  bool have_wanted = false;
  if (!addr.empty()) {
    in_addr v4{};
    if (::inet_pton(AF_INET, addr.c_str(), &v4) == 1) {
      wanted.raw[10] = wanted.raw[11] = 0xff;
      std::memcpy(&wanted.raw[12], &v4, 4);
      have_wanted = true;
    } else if (::inet_pton(AF_INET6, addr.c_str(), wanted.raw) == 1) {
      have_wanted = true;
    }
  }
  std::optional<GidChoice> best;
  int best_rank = 0;
  std::string seen;
  for (unsigned i = 0; i < 256; ++i) {
    auto text = read_line(port / "gids" / std::to_string(i));
    if (!text) break;
    ibv_gid gid{};
    if (::inet_pton(AF_INET6, text->c_str(), gid.raw) != 1) continue;
    static const ibv_gid zero{};
    if (std::memcmp(gid.raw, zero.raw, sizeof gid.raw) == 0) continue;  // unused
    const std::string type = read_line(port / "gid_attrs" / "types" / std::to_string(i)).value_or("");
    const bool v2 = type == "RoCE v2";
    const bool mapped = gid.raw[10] == 0xff && gid.raw[11] == 0xff &&
                        std::all_of(gid.raw, gid.raw + 10, [](std::uint8_t b) { return b == 0; });
    seen += (seen.empty() ? "" : ", ") + std::to_string(i) + " " + gid_text(gid) + " (" + type + ")";
    int rank = 0;
    if (have_wanted) {
      if (std::memcmp(gid.raw, wanted.raw, sizeof gid.raw) == 0) rank = v2 ? 4 : 3;
    } else {
      rank = v2 && mapped ? 4 : v2 ? 3 : 2;
    }
    if (rank > best_rank) {
      best_rank = rank;
      best = GidChoice{i, gid};
    }
  }
  if (!best) {
    std::string why = seen.empty() ? "its GID table is empty (no address on its netdev?)" : "its entries: " + seen;
    return make_error(have_wanted ? "RDMA device " + dev + " has no GID for " + addr + ": " + why +
                                        " (is the address on the netdev under " + dev + "?)"
                                  : "RDMA device " + dev + " has no usable GID: " + why,
                      ENOENT);
  }
  return *best;
}

struct Path {
  unsigned gid_index = 0;
  ibv_gid gid{};
  ibv_mtu mtu = IBV_MTU_1024;
};

Outcome modify(ibv_qp* qp, ibv_qp_attr& attr, int mask, const char* state) {
  if (int rc = ibv_modify_qp(qp, &attr, mask); rc != 0)
    return Outcome::failed(
        std::string("modify QP to ") + state,
        std::string("ibv_modify_qp to ") + state + " (QP " + std::to_string(qp->qp_num) + "): " + std::strerror(rc),
        std::string("modify QP to ") + state);
  return {};
}

// RESET -> INIT -> RTR -> RTS towards the QP numbered `peer` on the same
// device, both addressed by the same GID.
Outcome connect(ibv_qp* qp, std::uint32_t peer, const Path& path) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = kPort;
  a.qp_access_flags = kAccess;
  if (auto o = modify(qp, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT"); !o.ok())
    return o;

  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = path.mtu;
  a.dest_qp_num = peer;
  a.rq_psn = 0;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = kPort;
  a.ah_attr.grh.dgid = path.gid;
  a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(path.gid_index);
  a.ah_attr.grh.hop_limit = 64;
  if (auto o = modify(qp, a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                      "RTR");
      !o.ok())
    return o;

  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  return modify(
      qp, a,
      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
      "RTS");
}

Result<void> make_qp(Endpoint& ep) {
  ibv_qp_init_attr attr = qp_attributes(ep);
  ep.qp.reset(ibv_create_qp(ep.pd, &attr));
  if (!ep.qp) return make_error("cannot create a queue pair on " + ep.device, errno);
  ep.qp_raw = ep.qp.get();
  return {};
}

}  // namespace

Result<VerbsResult> run_self(const VerbsRequest& req, Waiter& waiter) {
  auto list = device_list();
  if (!list) return list.error();
  ibv_device* found = nullptr;
  std::string names;
  for (ibv_device** d = list->get(); *d; ++d) {
    names += std::string(names.empty() ? "" : ", ") + ibv_get_device_name(*d);
    if (req.dev == ibv_get_device_name(*d)) found = *d;
  }
  if (!found) return make_error("no RDMA device " + req.dev + " (libibverbs lists " + names + ")", ENODEV);

  // Declared in the order they are made: released in reverse (QPs and
  // memory regions before the PD, the PD before the context).
  Context ctx(ibv_open_device(found));
  if (!ctx) return make_error("cannot open RDMA device " + req.dev + ": " + std::strerror(errno), errno);

  VerbsResult result;
  result.server_device = result.client_device = req.dev;
  ibv_port_attr port{};
  if (int rc = ibv_query_port(ctx.get(), kPort, &port); rc != 0)
    return make_error("cannot query " + req.dev + " port 1: " + std::strerror(rc), rc);
  result.active_mtu = mtu_bytes(port.active_mtu);
  if (port.state != IBV_PORT_ACTIVE) {
    apply(Outcome::failed("port", req.dev + " port 1 is " + ibv_port_state_str(port.state) + ", not ACTIVE", "port"),
          result);
    return result;
  }
  auto gid = find_gid(req.dev, req.addr);
  if (!gid) return gid.error();
  const Path path{gid->index, gid->gid, port.active_mtu};
  result.gid_index = gid->index;
  result.local_gid = result.remote_gid = gid_text(gid->gid);

  Pd pd(ibv_alloc_pd(ctx.get()));
  if (!pd) return make_error("cannot allocate a protection domain on " + req.dev, errno);
  Endpoint client, server;
  const std::size_t region = region_for(req);
  for (Endpoint* ep : {&client, &server}) {
    if (auto r = prepare(*ep, ctx.get(), pd.get(), region); !r) return r.error();
    if (auto r = make_qp(*ep); !r) return r.error();
  }
  for (auto [ep, peer] : {std::pair{&client, &server}, std::pair{&server, &client}}) {
    if (auto o = connect(ep->qp_raw, peer->qp_raw->qp_num, path); !o.ok()) {
      apply(o, result);
      return result;
    }
    ep->remote_addr = reinterpret_cast<std::uintptr_t>(peer->buffer.get());
    ep->remote_rkey = peer->mr->rkey;
  }
  if (auto o = arm_server(server); !o.ok()) {
    apply(o, result);
    return result;
  }

  FirstFailure failure;
  Shared shared{req, waiter, failure, {}, result};
  Outcome served;
  std::thread server_thread;
  try {
    server_thread = std::thread([&] {
      served = run_server(server, shared);
      failure.report(served, waiter, false);
    });
  } catch (const std::system_error& e) {
    return make_error("cannot start a thread for the second queue pair", e.code().value());
  }
  const Outcome driven = run_client(client, shared);
  failure.report(driven, waiter, true);
  server_thread.join();
  const Outcome first = failure.get();
  if (!first.ok()) apply(first, result);
  return result;
}

}  // namespace rxerun::sys::verbs
