#include "sys/rdma_host.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "base/files.h"
#include "base/strings.h"
#include "sys/rdma_netlink.h"

namespace rxerun::sys {

namespace {

// A sysfs attribute's text, or nullopt with errno set when it cannot be read.
// read(2) errors are kept: an attribute of a device being removed fails with
// ENODEV, where a stream would read as empty.
std::optional<std::string> slurp(const std::filesystem::path& path) {
  constexpr std::size_t kAttributeBytes = 4096;
  auto text = read_file_capped(path, kAttributeBytes, "attribute");
  if (!text) {
    errno = text.error().code ? text.error().code : EIO;
    return std::nullopt;
  }
  return std::move(*text);
}

// "4: ACTIVE" -> {4, "ACTIVE"}
bool parse_numbered(const std::string& text, int* number, std::string* name) {
  const std::string_view t = trim(text);
  const auto colon = t.find(':');
  if (colon == std::string_view::npos) return false;
  const char* begin = t.data();
  auto [end, ec] = std::from_chars(begin, begin + colon, *number);
  if (ec != std::errc() || end != begin + colon) return false;
  *name = trim(t.substr(colon + 1));
  return true;
}

// The port's directory in sysfs; ENODEV / ENOENT as port_state().
Result<std::filesystem::path> port_dir(const std::string& dev, unsigned port) {
  std::error_code ec;
  if (!std::filesystem::exists(kSysClassInfiniband / dev, ec)) return make_error("no RDMA device " + dev, ENODEV);
  auto dir = kSysClassInfiniband / dev / "ports" / std::to_string(port);
  if (!std::filesystem::exists(dir, ec))
    return make_error("RDMA device " + dev + " has no port " + std::to_string(port), ENOENT);
  return dir;
}

// /proc/net/udp and udp6 of the calling thread's namespace: a line per
// socket, the local address second ("00000000:12B7", "000...000:12B7").
Result<bool> port_in(const std::filesystem::path& path, unsigned port) {
  std::ifstream in(path);
  if (!in) {
    const int code = errno;
    if (code == ENOENT) return false;  // no IPv6 in this kernel
    return make_error("cannot read " + path.string() + ": " + std::strerror(code), code);
  }
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local;
    if (!(fields >> slot >> local)) continue;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    unsigned p = 0;
    auto [end, ec] = std::from_chars(local.data() + colon + 1, local.data() + local.size(), p, 16);
    if (ec == std::errc() && p == port) return true;
  }
  return false;
}

}  // namespace

Result<std::vector<SoftDevice>> HostRdma::soft_devices() {
  std::vector<SoftDevice> out;
  std::error_code ec;
  if (!std::filesystem::exists(kSysClassInfiniband, ec)) return out;  // no ib_core: no device
  auto nl = RdmaNetlink::open();
  if (!nl) {
    if (nl.error().code == EPROTONOSUPPORT) return out;
    return nl.error();
  }
  auto all = nl->devices();
  if (!all) return all.error();
  for (const auto& d : *all) {
    // Only rxe has a `parent` attribute (the name of its netdev). The kernel
    // names no device's driver; an iWARP device (node type RNIC) over a
    // netdev is taken for siw: the lab has no iWARP hardware.
    SoftDevice dev{.index = d.index, .name = d.name};
    if (auto parent = slurp(kSysClassInfiniband / d.name / "parent")) {
      dev.type = kRxeType;
      dev.parent = std::string(trim(*parent));
    } else if (d.node_type == kRdmaNodeRnic) {
      dev.type = kSiwType;
    } else {
      continue;
    }
    auto port = nl->port(d.index, 1);
    if (!port) {
      if (port.error().code == EINVAL) continue;  // deleted since the dump
      return port.error();
    }
    dev.netdev = port->ndev_name;
    if (dev.parent.empty()) dev.parent = dev.netdev;
    dev.netdev_ifindex = dev.netdev.empty() ? 0 : static_cast<int>(port->ndev_index);
    out.push_back(std::move(dev));
  }
  return out;
}

Result<void> HostRdma::add_soft_device(const std::string& type, const std::string& name, const std::string& netdev) {
  auto nl = RdmaNetlink::open();
  if (!nl) return nl.error();
  return nl->new_link(name, type, netdev);
}

Result<void> HostRdma::remove_device(unsigned index) {
  auto nl = RdmaNetlink::open();
  if (!nl) {
    if (nl.error().code == EPROTONOSUPPORT) return make_error("no RDMA device " + std::to_string(index), ENODEV);
    return nl.error();
  }
  auto r = nl->del_link(index);
  // The kernel answers EINVAL for an index it does not know.
  if (!r && r.error().code == EINVAL) {
    auto all = nl->devices();
    if (all) {
      bool there = false;
      for (const auto& d : *all) there = there || d.index == index;
      if (!there) return make_error("no RDMA device " + std::to_string(index), ENODEV);
    }
  }
  return r;
}

Result<PortState> HostRdma::port_state(const std::string& dev, unsigned port) {
  auto where = port_dir(dev, port);
  if (!where) return where.error();
  const auto& dir = *where;
  std::error_code ec;
  PortState s;
  auto state = slurp(dir / "state");
  auto phys = slurp(dir / "phys_state");
  if (!state || !phys) {
    const int code = errno ? errno : EIO;
    // The device went between the two checks and the read.
    if (!std::filesystem::exists(kSysClassInfiniband / dev, ec)) return make_error("no RDMA device " + dev, ENODEV);
    // Still listed, but the driver no longer answers: it is being removed
    // (its netdev was deleted). ENODEV stays for "no such device".
    if (code == ENODEV)
      return make_error(dev + " is being removed (" + dir.string() + ": " + std::strerror(code) + ")", EAGAIN);
    return make_error("cannot read " + dir.string() + ": " + std::strerror(code), code);
  }
  if (!parse_numbered(*state, &s.state, &s.state_name) || !parse_numbered(*phys, &s.phys_state, &s.phys_state_name))
    return make_error("cannot parse " + dir.string() + "/state ('" + std::string(trim(*state)) + "') or phys_state ('" +
                          std::string(trim(*phys)) + "')",
                      EBADMSG);
  return s;
}

Result<PortMtu> HostRdma::port_mtu(const std::string& dev, unsigned port) {
  // libibverbs, as ibv_devinfo does: sysfs shows no MTU of a port.
  int n = 0;
  std::unique_ptr<ibv_device*, void (*)(ibv_device**)> list(ibv_get_device_list(&n), ibv_free_device_list);
  if (!list) return make_error(std::string("cannot list RDMA devices: ") + std::strerror(errno), errno);
  ibv_device* found = nullptr;
  for (int i = 0; i < n; ++i)
    if (dev == ibv_get_device_name(list.get()[i])) found = list.get()[i];
  if (!found) {
    std::error_code ec;
    if (!std::filesystem::exists(kSysClassInfiniband / dev, ec)) return make_error("no RDMA device " + dev, ENODEV);
    return make_error("libibverbs does not list " + dev +
                          ": is the rxe provider installed (ibverbs-providers, /etc/libibverbs.d/rxe.driver)?",
                      ENXIO);
  }
  std::unique_ptr<ibv_context, int (*)(ibv_context*)> ctx(ibv_open_device(found), ibv_close_device);
  if (!ctx) return make_error("cannot open RDMA device " + dev + ": " + std::strerror(errno), errno);
  ibv_port_attr attr{};
  if (const int rc = ibv_query_port(ctx.get(), static_cast<std::uint8_t>(port), &attr); rc != 0)
    return make_error("cannot query " + dev + " port " + std::to_string(port) + ": " + std::strerror(rc),
                      rc == EINVAL ? ENOENT : rc);
  // IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5
  auto bytes = [](ibv_mtu m) { return 128u << static_cast<unsigned>(m); };
  return PortMtu{bytes(attr.active_mtu), bytes(attr.max_mtu)};
}

Result<std::vector<GidEntry>> HostRdma::gids(const std::string& dev, unsigned port) {
  auto dir = port_dir(dev, port);
  if (!dir) return dir.error();
  std::vector<GidEntry> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(*dir / "gids", ec)) {
    const std::string name = e.path().filename().string();
    unsigned index = 0;
    auto [end, perr] = std::from_chars(name.data(), name.data() + name.size(), index);
    if (perr != std::errc() || end != name.data() + name.size()) continue;
    // Reading an unused entry fails (EINVAL) on newer kernels, or shows zeros.
    auto raw = slurp(e.path());
    if (!raw) continue;
    in6_addr addr{};
    if (::inet_pton(AF_INET6, std::string(trim(*raw)).c_str(), &addr) != 1) continue;
    if (IN6_IS_ADDR_UNSPECIFIED(&addr)) continue;
    char text[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET6, &addr, text, sizeof(text));
    GidEntry g{index, text, "", ""};
    if (auto t = slurp(*dir / "gid_attrs" / "types" / name)) g.type = trim(*t);
    if (auto d = slurp(*dir / "gid_attrs" / "ndevs" / name)) g.netdev = trim(*d);
    out.push_back(std::move(g));
  }
  if (ec) return make_error("cannot read " + (*dir / "gids").string() + ": " + ec.message(), ec.value());
  std::sort(out.begin(), out.end(), [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return out;
}

Result<Counters> HostRdma::counters(const std::string& dev, unsigned port) {
  auto dir = port_dir(dev, port);
  if (!dir) return dir.error();
  Counters out;
  for (const char* sub : {"counters", "hw_counters"}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(*dir / sub, ec)) {
      // hw_counters/lifespan is how often (ms) the kernel refreshes the others, no counter.
      if (e.path().filename() == "lifespan") continue;
      auto raw = slurp(e.path());
      if (!raw) continue;  // some port counters are write-only or unsupported (EINVAL)
      const std::string t(trim(*raw));
      std::uint64_t v = 0;
      auto [end, perr] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (perr == std::errc() && end == t.data() + t.size()) out[e.path().filename().string()] = v;
    }
  }
  return out;
}

Result<bool> HostRdma::udp4791_listening() {
  constexpr unsigned kRoceV2 = 4791;
  std::filesystem::path net = "/proc/thread-self/net";
  std::error_code ec;
  if (!std::filesystem::exists(net, ec))  // before Linux 3.17
    net = "/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/net";
  for (const char* file : {"udp", "udp6"}) {
    auto found = port_in(net / file, kRoceV2);
    if (!found) return found.error();
    if (*found) return true;
  }
  return false;
}

Result<bool> HostRdma::cm_listening(std::uint16_t port) {
  constexpr std::uint32_t kPsTcp = 0x0106;  // RDMA_PS_TCP: rdma_cm's connected service
  auto nl = RdmaNetlink::open();
  if (!nl) return nl.error();
  auto devices = nl->devices();
  if (!devices) return devices.error();
  for (const auto& d : *devices) {
    auto ids = nl->cm_ids(d.index);
    if (!ids) {
      if (ids.error().code == ENODEV || ids.error().code == EINVAL) continue;  // gone meanwhile
      return ids.error();
    }
    for (const auto& id : *ids)
      if (id.state == kRdmaCmListen && id.port == port && id.ps == kPsTcp) return true;
  }
  return false;
}

}  // namespace rxerun::sys
