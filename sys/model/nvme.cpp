#include "sys/model/nvme.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

namespace rxerun::sys {

std::vector<NvmetSubsystem> NvmeModel::subsystem_list() const {
  std::vector<NvmetSubsystem> out;
  for (const auto& [nqn, s] : subsys_dirs) {
    NvmetSubsystem v{.nqn = nqn, .serial = s.serial, .allow_any_host = s.allow_any_host};
    v.allowed_hosts.assign(s.allowed_hosts.begin(), s.allowed_hosts.end());
    for (const auto& [nsid, ns] : s.namespaces) v.namespaces.push_back(ns);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<NvmetPort> NvmeModel::port_list() const {
  std::vector<NvmetPort> out;
  for (const auto& [id, p] : port_dirs) out.push_back(p);
  return out;
}

std::vector<NullBlk> NvmeModel::null_blk_list() const {
  std::vector<NullBlk> out;
  for (const auto& [name, n] : nullb_dirs) out.push_back(n);
  return out;
}

std::vector<FabricsController> NvmeModel::controller_list() const {
  std::vector<FabricsController> out;
  for (const auto& [i, c] : ctrls) out.push_back(c);
  return out;
}

std::uint64_t NvmeModel::mount() {
  if (!configfs_mount_id) configfs_mount_id = next_mount_++;
  return *configfs_mount_id;
}

Result<void> NvmeModel::unmount() {
  if (!configfs_mount_id) return make_error("configfs is not mounted", EINVAL);
  configfs_mount_id.reset();
  return {};
}

NvmeModel::Subsystem* NvmeModel::subsystem(const std::string& nqn) {
  auto it = subsys_dirs.find(nqn);
  return it == subsys_dirs.end() ? nullptr : &it->second;
}

Result<void> NvmeModel::mkdir_subsystem(const std::string& nqn) {
  if (subsys_dirs.count(nqn)) return make_error("subsystem " + nqn + " exists", EEXIST);
  subsys_dirs[nqn].serial = fmt::format("{:x}", next_serial_++);
  return {};
}

Result<void> NvmeModel::rmdir_subsystem(const std::string& nqn) {
  auto* s = subsystem(nqn);
  if (!s) return make_error("no subsystem " + nqn, ENOENT);
  if (!s->namespaces.empty() || !s->allowed_hosts.empty())
    return make_error("subsystem " + nqn + " is not empty", ENOTEMPTY);
  for (const auto& [id, p] : port_dirs)
    if (std::count(p.subsystems.begin(), p.subsystems.end(), nqn))
      return make_error("subsystem " + nqn + " is linked by port " + std::to_string(id), EBUSY);
  subsys_dirs.erase(nqn);
  return {};
}

Result<void> NvmeModel::write_allow_any_host(const std::string& nqn, bool allow) {
  auto* s = subsystem(nqn);
  if (!s) return make_error("no subsystem " + nqn, ENOENT);
  if (allow && !s->allowed_hosts.empty())
    return make_error("allow_any_host while host_dirs are allowed explicitly", EINVAL);
  s->allow_any_host = allow;
  return {};
}

Result<void> NvmeModel::mkdir_host(const std::string& hostnqn) {
  if (!host_dirs.insert(hostnqn).second) return make_error("host " + hostnqn + " exists", EEXIST);
  return {};
}

Result<void> NvmeModel::rmdir_host(const std::string& hostnqn) {
  if (!host_dirs.count(hostnqn)) return make_error("no host " + hostnqn, ENOENT);
  for (const auto& [nqn, s] : subsys_dirs)
    if (s.allowed_hosts.count(hostnqn)) return make_error("host " + hostnqn + " is allowed by " + nqn, EBUSY);
  host_dirs.erase(hostnqn);
  return {};
}

Result<void> NvmeModel::link_allowed_host(const std::string& nqn, const std::string& hostnqn) {
  auto* s = subsystem(nqn);
  if (!s) return make_error("no subsystem " + nqn, ENOENT);
  if (!host_dirs.count(hostnqn)) return make_error("no host " + hostnqn, ENOENT);
  if (s->allow_any_host) return make_error("subsystem " + nqn + " allows any host", EINVAL);
  if (!s->allowed_hosts.insert(hostnqn).second) return make_error("host is allowed already", EEXIST);
  return {};
}

Result<void> NvmeModel::unlink_allowed_host(const std::string& nqn, const std::string& hostnqn) {
  auto* s = subsystem(nqn);
  if (!s || !s->allowed_hosts.erase(hostnqn)) return make_error("no such allowed host", ENOENT);
  return {};
}

Result<void> NvmeModel::mkdir_namespace(const std::string& nqn, unsigned nsid) {
  auto* s = subsystem(nqn);
  if (!s) return make_error("no subsystem " + nqn, ENOENT);
  if (nsid == 0 || nsid == 0xffffffffu) return make_error("invalid namespace ID", EINVAL);
  if (s->namespaces.count(nsid)) return make_error("namespace exists", EEXIST);
  s->namespaces[nsid] = NvmetNamespace{.nsid = nsid};
  return {};
}

Result<void> NvmeModel::write_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path,
                                               bool buffered) {
  auto* s = subsystem(nqn);
  if (!s || !s->namespaces.count(nsid)) return make_error("no namespace " + std::to_string(nsid), ENOENT);
  auto& ns = s->namespaces[nsid];
  if (ns.enabled) return make_error("namespace is enabled", EBUSY);
  ns.device_path = path;
  ns.buffered_io = buffered;
  return {};
}

Result<void> NvmeModel::write_namespace_enable(const std::string& nqn, unsigned nsid, bool enable) {
  auto* s = subsystem(nqn);
  if (!s || !s->namespaces.count(nsid)) return make_error("no namespace " + std::to_string(nsid), ENOENT);
  auto& ns = s->namespaces[nsid];
  if (enable && !ns.enabled) {
    bool found = files.count(ns.device_path) > 0 || (exists && exists(ns.device_path));
    for (const auto& [name, n] : nullb_dirs) found = found || (n.powered && n.disk == ns.device_path);
    if (!found) return make_error("cannot open " + ns.device_path, ENOENT);
  }
  ns.enabled = enable;
  return {};
}

Result<void> NvmeModel::rmdir_namespace(const std::string& nqn, unsigned nsid) {
  auto* s = subsystem(nqn);
  if (!s || !s->namespaces.erase(nsid)) return make_error("no namespace " + std::to_string(nsid), ENOENT);
  return {};
}

Result<void> NvmeModel::mkdir_port(const NvmetPort& port) {
  if (port.id > 65535) return make_error("invalid port ID", EINVAL);
  if (port_dirs.count(port.id)) return make_error("port " + std::to_string(port.id) + " exists", EEXIST);
  NvmetPort p = port;
  p.subsystems.clear();
  port_dirs[port.id] = p;
  return {};
}

Result<void> NvmeModel::rmdir_port(unsigned id) {
  auto it = port_dirs.find(id);
  if (it == port_dirs.end()) return make_error("no port " + std::to_string(id), ENOENT);
  if (!it->second.subsystems.empty()) return make_error("port links subsystems", ENOTEMPTY);
  port_dirs.erase(it);
  return {};
}

Result<void> NvmeModel::link_port_subsystem(unsigned id, const std::string& nqn) {
  auto it = port_dirs.find(id);
  if (it == port_dirs.end()) return make_error("no port " + std::to_string(id), ENOENT);
  if (!subsystem(nqn)) return make_error("no subsystem " + nqn, ENOENT);
  auto& p = it->second;
  if (std::count(p.subsystems.begin(), p.subsystems.end(), nqn)) return make_error("linked already", EEXIST);
  if (p.subsystems.empty())
    for (const auto& [other_id, other] : port_dirs)
      if (other_id != id && !other.subsystems.empty() && other.trtype == p.trtype && other.traddr == p.traddr &&
          other.trsvcid == p.trsvcid)
        return make_error("another port listens at " + p.traddr + ":" + p.trsvcid, EADDRINUSE);
  p.subsystems.push_back(nqn);
  return {};
}

Result<void> NvmeModel::unlink_port_subsystem(unsigned id, const std::string& nqn) {
  auto it = port_dirs.find(id);
  if (it == port_dirs.end()) return make_error("no port " + std::to_string(id), ENOENT);
  auto& subs = it->second.subsystems;
  auto at = std::find(subs.begin(), subs.end(), nqn);
  if (at == subs.end()) return make_error("not linked", ENOENT);
  subs.erase(at);
  return {};
}

Result<void> NvmeModel::mkdir_null_blk(const std::string& name, std::uint64_t size_mib) {
  if (nullb_dirs.count(name)) return make_error("null_blk " + name + " exists", EEXIST);
  nullb_dirs[name] = NullBlk{.name = name,
                             .index = next_index_++,
                             .size_mib = size_mib,
                             .memory_backed = true,
                             .powered = true,
                             .disk = "/dev/" + name};
  return {};
}

Result<void> NvmeModel::rmdir_null_blk(const std::string& name) {
  if (!nullb_dirs.erase(name)) return make_error("no null_blk " + name, ENOENT);
  return {};
}

Result<FileId> NvmeModel::make_file(const std::string& path, std::uint64_t size) {
  if (files.count(path)) return make_error(path + " exists", EEXIST);
  FileId id{.dev = 2049, .ino = next_ino_++, .size = size};
  files[path] = id;
  return id;
}

Result<void> NvmeModel::unlink_file(const std::string& path) {
  if (!files.erase(path)) return make_error("no file " + path, ENOENT);
  return {};
}

Result<FabricsConnected> NvmeModel::connect_host(const FabricsOptions& o) {
  const NvmetPort* port = nullptr;
  for (const auto& [id, p] : port_dirs)
    if (p.trtype == o.transport && p.traddr == o.traddr && p.trsvcid == o.trsvcid && !p.subsystems.empty()) port = &p;
  if (!port || !std::count(port->subsystems.begin(), port->subsystems.end(), o.nqn))
    return make_error("nobody listens for " + o.nqn + " at " + o.traddr + ":" + o.trsvcid, ECONNRESET);
  const Subsystem& s = subsys_dirs.at(o.nqn);
  const std::string host = o.hostnqn.empty() ? kDefaultHostNqn : o.hostnqn;
  if (!s.allow_any_host && !s.allowed_hosts.count(host))
    return make_error("subsystem " + o.nqn + " does not allow host " + host, EIO);
  FabricsController c{.instance = next_instance_++,
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
    if (ns.enabled) c.block_devices.push_back(fmt::format("nvme{}n{}", c.instance, nsid));
  ctrls[c.instance] = c;
  return FabricsConnected{c.instance, c.cntlid};
}

Result<void> NvmeModel::remove_controller(unsigned instance) {
  if (!ctrls.erase(instance)) return make_error("no controller nvme" + std::to_string(instance), ENOENT);
  return {};
}

}  // namespace rxerun::sys
