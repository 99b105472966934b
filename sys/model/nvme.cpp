#include "sys/model/nvme.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

std::string nsid_of(const std::string& nqn, unsigned nsid) {
  return "namespace " + std::to_string(nsid) + " of " + nqn;
}

}  // namespace

ModelNvme::Subsystem* ModelNvme::subsystem(const std::string& nqn) {
  auto it = subsys_dirs.find(nqn);
  return it == subsys_dirs.end() ? nullptr : &it->second;
}

NvmetNamespace* ModelNvme::namespace_of(const std::string& nqn, unsigned nsid) {
  auto* s = subsystem(nqn);
  auto it = s ? s->namespaces.find(nsid) : decltype(s->namespaces.end()){};
  return s && it != s->namespaces.end() ? &it->second : nullptr;
}

Result<std::vector<NvmetSubsystem>> ModelNvme::subsystems() {
  std::vector<NvmetSubsystem> out;
  for (const auto& [nqn, s] : nvmet_visible() ? subsys_dirs : decltype(subsys_dirs){}) {
    NvmetSubsystem v{.nqn = nqn, .serial = s.serial, .allow_any_host = s.allow_any_host};
    v.allowed_hosts.assign(s.allowed_hosts.begin(), s.allowed_hosts.end());
    for (const auto& [nsid, ns] : s.namespaces) v.namespaces.push_back(ns);
    out.push_back(std::move(v));
  }
  return out;
}

Result<void> ModelNvme::add_subsystem(const std::string& nqn) {
  return act(
      "nvme.add_subsystem", nqn,
      {{!nvmet_visible(), ENOENT, "no nvmet tree"},
       {subsystem(nqn) != nullptr, EEXIST, "subsystem " + nqn + " exists"}},
      [&] { subsys_dirs[nqn].serial = fmt::format("{:x}", next_serial_++); }, "create NVMe target subsystem " + nqn,
      shell_join({"mkdir", nvmet_subsystem_dir(nqn)}));
}

Result<void> ModelNvme::remove_subsystem(const std::string& nqn) {
  const auto* s = subsystem(nqn);
  const bool linked = std::any_of(port_dirs.begin(), port_dirs.end(), [&](const auto& p) {
    return std::count(p.second.subsystems.begin(), p.second.subsystems.end(), nqn);
  });
  return act(
      "nvme.remove_subsystem", nqn,
      {{!s, ENOENT, "no subsystem " + nqn},
       {s && (!s->namespaces.empty() || !s->allowed_hosts.empty()), ENOTEMPTY, "subsystem " + nqn + " is not empty"},
       {linked, EBUSY, "subsystem " + nqn + " is linked by a port"}},
      [&] { subsys_dirs.erase(nqn); }, "remove NVMe target subsystem " + nqn,
      shell_join({"rmdir", nvmet_subsystem_dir(nqn)}));
}

Result<void> ModelNvme::set_allow_any_host(const std::string& nqn, bool allow) {
  auto* s = subsystem(nqn);
  return act(
      "nvme.set_allow_any_host", nqn,
      {{!s, ENOENT, "no subsystem " + nqn},
       {s && allow && !s->allowed_hosts.empty(), EINVAL, "allow_any_host while hosts are allowed explicitly"}},
      [&] { s->allow_any_host = allow; },
      std::string(allow ? "allow any host in " : "allow only listed hosts in ") + nqn,
      echo_into_attr(allow ? "1" : "0", nvmet_subsystem_dir(nqn) + "/attr_allow_any_host"));
}

Result<std::vector<std::string>> ModelNvme::hosts() {
  if (!nvmet_visible()) return std::vector<std::string>{};
  return std::vector<std::string>(host_dirs.begin(), host_dirs.end());
}

Result<void> ModelNvme::add_host(const std::string& hostnqn) {
  return act(
      "nvme.add_host", hostnqn, {{host_dirs.count(hostnqn) > 0, EEXIST, "host " + hostnqn + " exists"}},
      [&] { host_dirs.insert(hostnqn); }, "create NVMe target host " + hostnqn,
      shell_join({"mkdir", nvmet_host_dir(hostnqn)}));
}

Result<void> ModelNvme::remove_host(const std::string& hostnqn) {
  const bool allowed = std::any_of(subsys_dirs.begin(), subsys_dirs.end(),
                                   [&](const auto& s) { return s.second.allowed_hosts.count(hostnqn) > 0; });
  return act(
      "nvme.remove_host", hostnqn,
      {{!host_dirs.count(hostnqn), ENOENT, "no host " + hostnqn},
       {allowed, EBUSY, "host " + hostnqn + " is allowed by a subsystem"}},
      [&] { host_dirs.erase(hostnqn); }, "remove NVMe target host " + hostnqn,
      shell_join({"rmdir", nvmet_host_dir(hostnqn)}));
}

Result<void> ModelNvme::allow_host(const std::string& nqn, const std::string& hostnqn) {
  auto* s = subsystem(nqn);
  return act(
      "nvme.allow_host", nqn,
      {{!s, ENOENT, "no subsystem " + nqn},
       {!host_dirs.count(hostnqn), ENOENT, "no host " + hostnqn},
       {s && s->allow_any_host, EINVAL, "subsystem " + nqn + " allows any host"},
       {s && s->allowed_hosts.count(hostnqn), EEXIST, "host is allowed already"}},
      [&] { s->allowed_hosts.insert(hostnqn); }, "allow host " + hostnqn + " in " + nqn,
      shell_join({"ln", "-s", nvmet_host_dir(hostnqn), nvmet_subsystem_dir(nqn) + "/allowed_hosts/" + hostnqn}));
}

Result<void> ModelNvme::disallow_host(const std::string& nqn, const std::string& hostnqn) {
  auto* s = subsystem(nqn);
  return act(
      "nvme.disallow_host", nqn, {{!s || !s->allowed_hosts.count(hostnqn), ENOENT, "no such allowed host"}},
      [&] { s->allowed_hosts.erase(hostnqn); }, "stop allowing host " + hostnqn + " in " + nqn,
      shell_join({"rm", nvmet_subsystem_dir(nqn) + "/allowed_hosts/" + hostnqn}));
}

Result<void> ModelNvme::add_namespace(const std::string& nqn, unsigned nsid) {
  auto* s = subsystem(nqn);
  return act(
      "nvme.add_namespace", nqn,
      {{!s, ENOENT, "no subsystem " + nqn},
       {nsid == 0 || nsid == 0xffffffffu, EINVAL, "invalid namespace ID"},
       {namespace_of(nqn, nsid) != nullptr, EEXIST, "namespace exists"}},
      [&] { s->namespaces[nsid] = NvmetNamespace{.nsid = nsid}; }, "create " + nsid_of(nqn, nsid),
      shell_join({"mkdir", nvmet_namespace_dir(nqn, nsid)}));
}

Result<void> ModelNvme::set_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path,
                                             bool buffered) {
  auto* ns = namespace_of(nqn, nsid);
  auto r = act(
      "nvme.set_namespace_device", nqn,
      {{!ns, ENOENT, "no namespace " + std::to_string(nsid)}, {ns && ns->enabled, EBUSY, "namespace is enabled"}},
      [&] { ns->device_path = path, ns->buffered_io = buffered; }, "back " + nsid_of(nqn, nsid) + " by " + path,
      echo_into_attr(path, nvmet_namespace_dir(nqn, nsid) + "/device_path"));
  if (r && buffered)
    k_.did_anywhere("nvme", "read and write it through the page cache",
                    echo_into_attr("1", nvmet_namespace_dir(nqn, nsid) + "/buffered_io"));
  return r;
}

Result<void> ModelNvme::enable_namespace(const std::string& nqn, unsigned nsid, bool enable) {
  auto* ns = namespace_of(nqn, nsid);
  const std::string device = ns ? ns->device_path : "";
  const bool opens = storage_.opens(device);
  return act(
      "nvme.enable_namespace", nqn,
      {{!ns, ENOENT, "no namespace " + std::to_string(nsid)},
       {enable && ns && !ns->enabled && !opens, ENOENT, "cannot open " + device}},
      [&] { ns->enabled = enable; }, std::string(enable ? "enable " : "disable ") + nsid_of(nqn, nsid),
      echo_into_attr(enable ? "1" : "0", nvmet_namespace_dir(nqn, nsid) + "/enable"));
}

Result<void> ModelNvme::remove_namespace(const std::string& nqn, unsigned nsid) {
  return act(
      "nvme.remove_namespace", nqn, {{!namespace_of(nqn, nsid), ENOENT, "no namespace " + std::to_string(nsid)}},
      [&] { subsys_dirs[nqn].namespaces.erase(nsid); }, "remove " + nsid_of(nqn, nsid),
      shell_join({"rmdir", nvmet_namespace_dir(nqn, nsid)}));
}

Result<std::vector<NvmetPort>> ModelNvme::ports() {
  std::vector<NvmetPort> out;
  if (nvmet_visible())
    for (const auto& [id, p] : port_dirs) out.push_back(p);
  return out;
}

Result<void> ModelNvme::add_port(const NvmetPort& port) {
  const std::string dir = nvmet_port_dir(port.id);
  auto r = act(
      "nvme.add_port", std::to_string(port.id),
      {{!nvmet_visible(), ENOENT, "no nvmet tree"},
       {port.id > 65535, EINVAL, "invalid port ID"},
       {port_dirs.count(port.id) > 0, EEXIST, "port " + std::to_string(port.id) + " exists"}},
      [&] { (port_dirs[port.id] = port).subsystems.clear(); }, "create NVMe target port " + std::to_string(port.id),
      shell_join({"mkdir", dir}));
  if (r)
    k_.did_anywhere("nvme", "set its address: " + port.trtype + " " + port.traddr + ":" + port.trsvcid,
                    echo_into_attr(port.trtype, dir + "/addr_trtype") + "; " +
                        echo_into_attr(port.adrfam, dir + "/addr_adrfam") + "; " +
                        echo_into_attr(port.traddr, dir + "/addr_traddr") + "; " +
                        echo_into_attr(port.trsvcid, dir + "/addr_trsvcid"));
  return r;
}

Result<void> ModelNvme::remove_port(unsigned id) {
  auto it = port_dirs.find(id);
  return act(
      "nvme.remove_port", std::to_string(id),
      {{it == port_dirs.end(), ENOENT, "no port " + std::to_string(id)},
       {it != port_dirs.end() && !it->second.subsystems.empty(), ENOTEMPTY, "port links subsystems"}},
      [&] { port_dirs.erase(it); }, "remove NVMe target port " + std::to_string(id),
      shell_join({"rmdir", nvmet_port_dir(id)}));
}

Result<void> ModelNvme::link_port(unsigned id, const std::string& nqn) {
  auto it = port_dirs.find(id);
  NvmetPort* p = it == port_dirs.end() ? nullptr : &it->second;
  // The port starts listening with its first link: nobody else may listen there.
  const bool taken = p && p->subsystems.empty() && std::any_of(port_dirs.begin(), port_dirs.end(), [&](const auto& o) {
                       return o.first != id && !o.second.subsystems.empty() && o.second.trtype == p->trtype &&
                              o.second.traddr == p->traddr && o.second.trsvcid == p->trsvcid;
                     });
  return act(
      "nvme.link_port", std::to_string(id),
      {{!p, ENOENT, "no port " + std::to_string(id)},
       {!subsystem(nqn), ENOENT, "no subsystem " + nqn},
       {p && std::count(p->subsystems.begin(), p->subsystems.end(), nqn), EEXIST, "linked already"},
       {taken, EADDRINUSE, "another port listens at " + (p ? p->traddr + ":" + p->trsvcid : "")}},
      [&] { p->subsystems.push_back(nqn); }, "offer " + nqn + " on port " + std::to_string(id) + " (the port listens)",
      shell_join({"ln", "-s", nvmet_subsystem_dir(nqn), nvmet_port_dir(id) + "/subsystems/" + nqn}));
}

Result<void> ModelNvme::unlink_port(unsigned id, const std::string& nqn) {
  auto it = port_dirs.find(id);
  auto* subs = it == port_dirs.end() ? nullptr : &it->second.subsystems;
  return act(
      "nvme.unlink_port", std::to_string(id),
      {{!subs, ENOENT, "no port " + std::to_string(id)},
       {subs && !std::count(subs->begin(), subs->end(), nqn), ENOENT, "not linked"}},
      [&] { std::erase(*subs, nqn); }, "withdraw " + nqn + " from port " + std::to_string(id),
      shell_join({"rm", nvmet_port_dir(id) + "/subsystems/" + nqn}));
}

Result<FabricsController> ModelNvme::connect_host(const FabricsOptions& o, unsigned instance) {
  const NvmetPort* port = nullptr;
  for (const auto& [id, p] : port_dirs)
    if (p.trtype == o.transport && p.traddr == o.traddr && p.trsvcid == o.trsvcid && !p.subsystems.empty()) port = &p;
  if (!port || !std::count(port->subsystems.begin(), port->subsystems.end(), o.nqn))
    return make_error("nobody listens for " + o.nqn + " at " + o.traddr + ":" + o.trsvcid, ECONNRESET);
  const Subsystem& s = subsys_dirs.at(o.nqn);
  const std::string host = o.hostnqn.empty() ? kDefaultHostNqn : o.hostnqn;
  if (!s.allow_any_host && !s.allowed_hosts.count(host))
    return make_error("subsystem " + o.nqn + " does not allow host " + host, EIO);
  FabricsController c{.instance = instance,
                      .transport = o.transport,
                      .traddr = o.traddr,
                      .trsvcid = o.trsvcid,
                      .host_traddr = o.host_traddr,
                      .subsysnqn = o.nqn,
                      .hostnqn = host,
                      .cntlid = 1,
                      .state = "live"};
  for (const auto& [i, other] : ctrls)
    if (other.subsysnqn == o.nqn) c.cntlid = std::max(c.cntlid, other.cntlid + 1);
  for (const auto& [nsid, ns] : s.namespaces)
    if (ns.enabled) c.block_devices.push_back(fmt::format("nvme{}n{}", instance, nsid));
  return c;
}

Result<FabricsConnected> ModelNvme::connect(const FabricsOptions& options, std::vector<std::string>* kernel_lines) {
  if (auto f = k_.fault("nvme.connect", options.nqn)) return *f;
  // An open world does not know what a module pulled in: taken to be there.
  if (!k_.open_world && !*modules_.loaded("nvme_fabrics")) return make_error("cannot open /dev/nvme-fabrics", ENOENT);
  if (!k_.open_world && options.transport == "rdma" && !*modules_.loaded("nvme_rdma"))
    return make_error("no transport rdma", EINVAL);
  auto c = connect_host(options, next_instance_);
  const auto write = [&] {
    k_.did_anywhere("nvme",
                    "connect to NVMe subsystem " + options.nqn + " over " + options.transport + " at " +
                        options.traddr + ":" + options.trsvcid,
                    echo_into_attr(fabrics_options_line(options), "/dev/nvme-fabrics"));
  };
  // A plan shows the write the run makes, refused or not; a target it did
  // not make (nobody listens in the model) may well be there at run time.
  if (k_.open_world) write();
  if (!c && (!k_.open_world || c.error().code != ECONNRESET)) {
    if (kernel_lines) *kernel_lines = kernel_log;
    return make_error("the kernel refused the connect: " + std::string(std::strerror(c.error().code)), c.error().code);
  }
  if (!c)
    c = FabricsController{.instance = next_instance_,
                          .transport = options.transport,
                          .traddr = options.traddr,
                          .trsvcid = options.trsvcid,
                          .subsysnqn = options.nqn,
                          .cntlid = 1,
                          .state = "live",
                          .block_devices = {fmt::format("nvme{}n1", next_instance_)}};
  if (!k_.open_world) write();
  ++next_instance_;
  ctrls[c->instance] = *c;
  storage_.disks.insert(c->block_devices.begin(), c->block_devices.end());
  if (devices_after > 0) hidden_[c->instance] = devices_after;
  return FabricsConnected{c->instance, c->cntlid};
}

Result<std::vector<FabricsController>> ModelNvme::controllers() {
  std::vector<FabricsController> out;
  for (auto [instance, c] : ctrls) {
    if (auto it = hidden_.find(c.instance); it != hidden_.end()) {
      c.block_devices.clear();
      if (--it->second <= 0) hidden_.erase(it);
    }
    out.push_back(std::move(c));
  }
  return out;
}

Result<void> ModelNvme::delete_controller(unsigned instance) {
  const std::string name = "nvme" + std::to_string(instance);
  return act(
      "nvme.delete_controller", name, {{!ctrls.count(instance), ENOENT, "no controller " + name}},
      [&] {
        for (const auto& d : ctrls[instance].block_devices) storage_.disks.erase(d);
        ctrls.erase(instance);
      },
      "disconnect NVMe controller " + name, echo_into_attr("1", "/sys/class/nvme/" + name + "/delete_controller"));
}

}  // namespace rxerun::sys
