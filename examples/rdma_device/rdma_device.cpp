// rdma_device: an rxerun step kind of a plugin. It reports what an RDMA
// device says about itself (the device and port attributes `ibv_devinfo -v`
// prints) as facts, read with libibverbs the way an application sees the
// device, so that a scenario can assert them:
//   expect: {atomic_cap: HCA, max_qp: "> 1000", port_state: ACTIVE}
// Reads only, so it has no undo.
//
// A device that does not exist, or has no such port, is `fail` (a scenario
// can expect that: `expect: fail` after the device was removed), with the
// devices that do exist in the message; libibverbs failing to list, open or
// query a device is `error`.
//
// It runs in the step's namespace when the step has one: rxerun enters it
// before run(). libibverbs lists the devices of /sys/class/infiniband, which
// in the kernel's default (shared) RDMA namespace mode are all of them.

#include <endian.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <rxerun/plugin.h>

namespace {

using rxerun::StepResult;
using rxerun::sdk::Params;
using rxerun::sdk::StepContext;

// Defined after the kind below, which names it.
StepResult run_rdma_device(const Params& params, StepContext& ctx);

rxerun::sdk::Kind rdma_device_kind() {
  rxerun::KindSpec spec;
  spec.name = "rdma_device";
  spec.summary =
      "Report an RDMA device's attributes and one port's (what ibv_devinfo -v prints) as facts: limits, atomics, "
      "port state, MTU, link layer.";
  spec.params = {
      // A String, not an IfName: an RDMA device's name may be longer than a netdev's 15 bytes.
      {.name = "dev", .type = rxerun::ParamType::String, .required = true, .help = "the RDMA device: rxe0"},
      {.name = "port",
       .type = rxerun::ParamType::Int,
       .default_value = 1,
       .help = "the port whose attributes to report",
       .min = 1,
       .max = 255},
  };
  spec.facts = {
      {"transport", "the device's transport: InfiniBand (rxe: RoCE is InfiniBand's transport over UDP), iWARP (siw)"},
      {"node_type", "the device's node type: CA (rxe), RNIC (siw)"},
      {"fw_ver", "the firmware version: 0.0.0 for rxe"},
      {"node_guid", "the node GUID, as ibv_devinfo writes it: fca7:5eff:fe47:0142"},
      {"vendor_id", "the IEEE vendor ID"},
      {"vendor_part_id", "the vendor's part ID"},
      {"hw_ver", "the hardware version"},
      {"phys_port_cnt", "the number of ports"},
      {"max_qp", "the most queue pairs"},
      {"max_qp_wr", "the most outstanding work requests on a queue"},
      {"max_sge", "the most scatter/gather entries per work request"},
      {"max_cq", "the most completion queues"},
      {"max_cqe", "the most entries in a completion queue"},
      {"max_mr", "the most memory regions"},
      {"max_mr_size", "the largest memory region, in bytes"},
      {"max_pd", "the most protection domains"},
      {"max_srq", "the most shared receive queues"},
      {"max_qp_rd_atom", "the most RDMA READ and atomic operations a queue pair has outstanding as target"},
      {"max_ah", "the most address handles"},
      {"page_size_cap", "the page sizes the device supports, a bit per size (4294963200 = 4 KiB and up)"},
      {"atomic_cap", "atomic operations: NONE, HCA (atomic within this device), GLOB (also with other agents)"},
      {"odp", "whether the device supports on-demand paging (memory registered without pinning)"},
      {"port_state", "the port's state: ACTIVE, DOWN, INIT, ARMED, ..."},
      {"active_mtu", "the active MTU in bytes (1024 over a netdev MTU of 1500)"},
      {"max_mtu", "the largest MTU the port supports, in bytes"},
      {"max_msg_sz", "the largest message the port sends, in bytes"},
      {"gid_tbl_len", "the size of the port's GID table"},
      {"link_layer", "the port's link layer: Ethernet (RoCE, iWARP) or InfiniBand"},
  };
  spec.example =
      "- veth: {name: vA, peer: vB}\n"
      "- rxe: {name: rxe0, netdev: vA}\n"
      "- rdma_device: {dev: rxe0}\n"
      "  expect: {atomic_cap: HCA, max_qp: \"> 1000\", port_state: ACTIVE, link_layer: Ethernet}\n";
  return rxerun::sdk::Kind{std::move(spec), run_rdma_device, {}};
}

// libibverbs' objects, owned: freed and closed however the step ends.
struct DeviceListFree {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
using DeviceList = std::unique_ptr<ibv_device*[], DeviceListFree>;

struct DeviceClose {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};
using Device = std::unique_ptr<ibv_context, DeviceClose>;

// libibverbs returns errno values from its queries, or -1 with errno set.
int verbs_errno(int rc) {
  return rc > 0 ? rc : errno;
}

// Names as ibv_devinfo prints them, without its prefixes (ATOMIC_HCA is HCA,
// PORT_ACTIVE is ACTIVE): the short names an `expect:` writes. Our own tables
// rather than ibv_*_str(), whose texts are longer ("InfiniBand channel
// adapter") and not what ibv_devinfo shows.
std::string transport_name(ibv_transport_type t) {
  switch (t) {
    case IBV_TRANSPORT_IB: return "InfiniBand";
    case IBV_TRANSPORT_IWARP: return "iWARP";
    case IBV_TRANSPORT_USNIC: return "usNIC";
    case IBV_TRANSPORT_USNIC_UDP: return "usNIC UDP";
    case IBV_TRANSPORT_UNSPECIFIED: return "unspecified";
    default: return "unknown";
  }
}

std::string node_type_name(ibv_node_type t) {
  switch (t) {
    case IBV_NODE_CA: return "CA";
    case IBV_NODE_SWITCH: return "SWITCH";
    case IBV_NODE_ROUTER: return "ROUTER";
    case IBV_NODE_RNIC: return "RNIC";
    case IBV_NODE_USNIC: return "USNIC";
    case IBV_NODE_USNIC_UDP: return "USNIC_UDP";
    case IBV_NODE_UNSPECIFIED: return "UNSPECIFIED";
    default: return "unknown";
  }
}

std::string atomic_name(ibv_atomic_cap a) {
  switch (a) {
    case IBV_ATOMIC_NONE: return "NONE";
    case IBV_ATOMIC_HCA: return "HCA";
    case IBV_ATOMIC_GLOB: return "GLOB";
    default: return "unknown";
  }
}

std::string port_state_name(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_NOP: return "NOP";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    default: return "unknown";
  }
}

// An unspecified link layer is InfiniBand: ports older kernels describe did
// not say, and were InfiniBand (ibv_devinfo reads it so too).
std::string link_layer_name(std::uint8_t l) {
  switch (l) {
    case IBV_LINK_LAYER_UNSPECIFIED:
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    default: return "unknown";
  }
}

// IBV_MTU_256 (1) .. IBV_MTU_4096 (5) in bytes; 0 for none.
int mtu_bytes(ibv_mtu m) {
  return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

// The GUID in network order, as ibv_devinfo writes it: four groups of four hex digits.
std::string guid_text(__be64 guid) {
  const std::uint64_t g = be64toh(guid);
  char out[20];
  std::snprintf(out, sizeof(out), "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48),
                static_cast<unsigned>((g >> 32) & 0xffff), static_cast<unsigned>((g >> 16) & 0xffff),
                static_cast<unsigned>(g & 0xffff));
  return out;
}

nlohmann::json device_facts(const ibv_device& dev, const ibv_device_attr_ex& ex) {
  const ibv_device_attr& a = ex.orig_attr;
  return {
      {"transport", transport_name(dev.transport_type)},
      {"node_type", node_type_name(dev.node_type)},
      {"fw_ver", a.fw_ver},
      {"node_guid", guid_text(a.node_guid)},
      {"vendor_id", a.vendor_id},
      {"vendor_part_id", a.vendor_part_id},
      {"hw_ver", a.hw_ver},
      {"phys_port_cnt", a.phys_port_cnt},
      {"max_qp", a.max_qp},
      {"max_qp_wr", a.max_qp_wr},
      {"max_sge", a.max_sge},
      {"max_cq", a.max_cq},
      {"max_cqe", a.max_cqe},
      {"max_mr", a.max_mr},
      {"max_mr_size", std::uint64_t{a.max_mr_size}},  // all ones on rxe: beyond int64, kept unsigned
      {"max_pd", a.max_pd},
      {"max_srq", a.max_srq},
      {"max_qp_rd_atom", a.max_qp_rd_atom},
      {"max_ah", a.max_ah},
      {"page_size_cap", std::uint64_t{a.page_size_cap}},
      {"atomic_cap", atomic_name(a.atomic_cap)},
      {"odp", (ex.odp_caps.general_caps & IBV_ODP_SUPPORT) != 0},
  };
}

nlohmann::json port_facts(const ibv_port_attr& p) {
  return {
      {"port_state", port_state_name(p.state)}, {"active_mtu", mtu_bytes(p.active_mtu)},
      {"max_mtu", mtu_bytes(p.max_mtu)},        {"max_msg_sz", p.max_msg_sz},
      {"gid_tbl_len", p.gid_tbl_len},           {"link_layer", link_layer_name(p.link_layer)},
  };
}

// The device named `name` in `list`; the names of all of them in `names`
// when it is not there, for the message.
ibv_device* find_device(ibv_device** list, const std::string& name, std::string& names) {
  for (ibv_device** d = list; *d; ++d) {
    if (name == ibv_get_device_name(*d)) return *d;
    names += (names.empty() ? "" : ", ") + std::string(ibv_get_device_name(*d));
  }
  return nullptr;
}

StepResult no_such_device(const std::string& name, const std::string& names) {
  StepResult r =
      StepResult::fail("no RDMA device " + name + (names.empty() ? ": there is none" : "; there are " + names));
  r.hints.push_back("an rxe (or siw) step adds one over a netdev; a device goes when its netdev is deleted");
  return r;
}

StepResult verbs_error(const std::string& what, int code) {
  return StepResult::error(rxerun::make_error(what, code));
}

StepResult run_rdma_device(const Params& params, StepContext&) {
  const std::string name = params.str("dev");
  const auto port = static_cast<std::uint8_t>(params.integer("port"));

  DeviceList list(ibv_get_device_list(nullptr));
  if (!list) {
    StepResult r = verbs_error("libibverbs cannot list the RDMA devices", errno);
    r.hints.push_back("libibverbs needs the kernel's ib_uverbs (loading rdma_rxe loads it)");
    return r;
  }
  std::string names;
  ibv_device* dev = find_device(list.get(), name, names);
  if (!dev) return no_such_device(name, names);

  Device context(ibv_open_device(dev));
  if (!context) return verbs_error("cannot open RDMA device " + name, errno);
  ibv_device_attr_ex attr{};
  if (int rc = ibv_query_device_ex(context.get(), nullptr, &attr); rc != 0)
    return verbs_error("cannot query RDMA device " + name, verbs_errno(rc));
  nlohmann::json facts = device_facts(*dev, attr);

  if (port > attr.orig_attr.phys_port_cnt)
    return StepResult::fail(name + " has no port " + std::to_string(port) + ": its ports are 1.." +
                                std::to_string(attr.orig_attr.phys_port_cnt),
                            facts);
  ibv_port_attr port_attr{};
  if (int rc = ibv_query_port(context.get(), port, &port_attr); rc != 0)
    return verbs_error("cannot query port " + std::to_string(port) + " of RDMA device " + name, verbs_errno(rc));
  facts.update(port_facts(port_attr));
  return StepResult::ok(std::move(facts));
}

}  // namespace

RXERUN_PLUGIN(registrar) {
  registrar.add(rdma_device_kind());
}
