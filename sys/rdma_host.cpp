#include "sys/rdma_host.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sys/process.h"
#include "sys/rdma_netlink.h"

namespace rxerun::sys {

namespace {

const std::filesystem::path kSysIb = "/sys/class/infiniband";

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// The whole file, or nullopt with errno set when it cannot be read.
std::optional<std::string> slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return out.str();
}

// "4: ACTIVE" -> {4, "ACTIVE"}
bool parse_numbered(const std::string& text, int* number, std::string* name) {
  const std::string t = trim(text);
  const auto colon = t.find(':');
  if (colon == std::string::npos) return false;
  const char* begin = t.data();
  auto [end, ec] = std::from_chars(begin, begin + colon, *number);
  if (ec != std::errc() || end != begin + colon) return false;
  *name = trim(t.substr(colon + 1));
  return true;
}

// The first number after "KEY:" on a line of ibv_devinfo's output
// ("\t\t\tactive_mtu:\t\t1024 (3)").
std::optional<unsigned> devinfo_value(const std::string& out, const std::string& key) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const std::string t = trim(line);
    if (t.rfind(key + ":", 0) != 0) continue;
    const std::string rest = trim(t.substr(key.size() + 1));
    unsigned v = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec == std::errc() && end != rest.data()) return v;
  }
  return std::nullopt;
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

Result<KernelModules*> HostRdma::modules() {
  if (!modules_) {
    auto m = KernelModules::open();
    if (!m) return m.error();
    modules_.emplace(std::move(m).value());
  }
  return &*modules_;
}

Result<bool> HostRdma::module_loaded(const std::string& name) {
  auto m = modules();
  if (!m) return m.error();
  return (*m)->loaded(name);
}

Result<std::vector<std::string>> HostRdma::modules_to_load(const std::string& name) {
  auto m = modules();
  if (!m) return m.error();
  return (*m)->to_load(name);
}

Result<void> HostRdma::load_module(const std::string& name) {
  auto m = modules();
  if (!m) return m.error();
  return (*m)->load(name);
}

Result<void> HostRdma::unload_module(const std::string& name) {
  auto m = modules();
  if (!m) return m.error();
  return (*m)->unload(name);
}

Result<std::vector<RxeDevice>> HostRdma::rxe_devices() {
  std::vector<RxeDevice> out;
  std::error_code ec;
  if (!std::filesystem::exists(kSysIb, ec)) return out;  // no ib_core: no device
  auto nl = RdmaNetlink::open();
  if (!nl) {
    if (nl.error().code == EPROTONOSUPPORT) return out;
    return nl.error();
  }
  auto all = nl->devices();
  if (!all) return all.error();
  for (const auto& d : *all) {
    // Only rxe has a `parent` attribute: the name of its netdev.
    auto parent = slurp(kSysIb / d.name / "parent");
    if (!parent) continue;
    RxeDevice dev{.index = d.index, .name = d.name, .parent = trim(*parent)};
    auto port = nl->port(d.index, 1);
    if (!port) {
      if (port.error().code == EINVAL) continue;  // deleted since the dump
      return port.error();
    }
    dev.netdev = port->ndev_name;
    out.push_back(std::move(dev));
  }
  return out;
}

Result<void> HostRdma::add_rxe(const std::string& name, const std::string& netdev) {
  auto nl = RdmaNetlink::open();
  if (!nl) return nl.error();
  return nl->new_link(name, "rxe", netdev);
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
  std::error_code ec;
  if (!std::filesystem::exists(kSysIb / dev, ec)) return make_error("no RDMA device " + dev, ENODEV);
  const auto dir = kSysIb / dev / "ports" / std::to_string(port);
  if (!std::filesystem::exists(dir, ec))
    return make_error("RDMA device " + dev + " has no port " + std::to_string(port), ENOENT);
  PortState s;
  auto state = slurp(dir / "state");
  auto phys = slurp(dir / "phys_state");
  if (!state || !phys) {
    const int code = errno ? errno : EIO;
    // The device went between the two checks and the read.
    if (!std::filesystem::exists(kSysIb / dev, ec)) return make_error("no RDMA device " + dev, ENODEV);
    return make_error("cannot read " + dir.string() + ": " + std::strerror(code), code);
  }
  if (!parse_numbered(*state, &s.state, &s.state_name) || !parse_numbered(*phys, &s.phys_state, &s.phys_state_name))
    return make_error(
        "cannot parse " + dir.string() + "/state ('" + trim(*state) + "') or phys_state ('" + trim(*phys) + "')",
        EBADMSG);
  return s;
}

Result<PortMtu> HostRdma::port_mtu(const std::string& dev, unsigned port) {
  const std::vector<std::string> argv = {"ibv_devinfo", "-d", dev, "-i", std::to_string(port)};
  SpawnOptions options;
  options.env["LC_ALL"] = "C";
  auto r = run_command(argv, std::chrono::seconds(10), options);
  if (!r) return make_error(r.error().message + " (ibv_devinfo comes with ibverbs-utils)", r.error().code);
  if (r->timed_out) return make_error(shell_quote(argv) + " did not answer within 10 s", ETIMEDOUT);
  if (!r->status.ok()) {
    std::string why = trim(r->err.empty() ? r->out : r->err);
    if (why.size() > 200) why = why.substr(0, 200) + "...";
    return make_error(shell_quote(argv) + ": " + r->status.describe() + (why.empty() ? "" : ": " + why), EIO);
  }
  auto active = devinfo_value(r->out, "active_mtu");
  auto max = devinfo_value(r->out, "max_mtu");
  if (!active || !max) return make_error(shell_quote(argv) + " printed no active_mtu/max_mtu", EBADMSG);
  return PortMtu{*active, *max};
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

}  // namespace rxerun::sys
