#include "sys/model/nvme.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

// `echo VALUE > FILE`, as a person writes an attribute.
std::string echo_into_attr(const std::string& value, const std::string& file) {
  return "echo " + shell_quote(value) + " > " + shell_quote(file);
}

std::string nsid_of(const std::string& nqn, unsigned nsid) {
  return "namespace " + std::to_string(nsid) + " of " + nqn;
}

}  // namespace

Result<void> ModelNvme::act(const char* op, const std::string& arg, const std::function<Result<void>()>& rule,
                            std::string what, std::string shell) {
  if (auto f = k_.fault(op, arg)) return *f;
  if (auto r = rule(); k_.refused(r)) return r;
  k_.did_anywhere("nvme", std::move(what), std::move(shell));
  return {};
}

bool ModelNvme::configfs_mounted() {
  return configfs_mount_id || (k_.open_world && host_configfs && host_configfs());
}

ModelNvme::Subsystem* ModelNvme::subsystem(const std::string& nqn) {
  auto it = subsys_dirs.find(nqn);
  return it == subsys_dirs.end() ? nullptr : &it->second;
}

Result<std::optional<std::uint64_t>> ModelNvme::configfs_mount() {
  if (!configfs_mount_id && configfs_mounted()) return std::optional<std::uint64_t>(1);  // the host's
  return configfs_mount_id;
}

Result<std::uint64_t> ModelNvme::mount_configfs() {
  if (auto f = k_.fault("nvme.mount_configfs")) return *f;
  if (!*modules_.loaded("configfs")) return make_error("unknown filesystem type 'configfs'", ENODEV);
  if (!configfs_mount_id) configfs_mount_id = next_mount_++;
  k_.did_anywhere("nvme", "mount configfs on " + std::string(kConfigfsPath),
                  shell_join({"mount", "-t", "configfs", "none", kConfigfsPath}));
  return *configfs_mount_id;
}

Result<void> ModelNvme::unmount_configfs() {
  return act(
      "nvme.unmount_configfs", "",
      [&]() -> Result<void> {
        if (!configfs_mount_id) return make_error("configfs is not mounted", EINVAL);
        configfs_mount_id.reset();
        return {};
      },
      "unmount configfs from " + std::string(kConfigfsPath), shell_join({"umount", kConfigfsPath}));
}

Result<std::vector<NvmetSubsystem>> ModelNvme::subsystems() {
  std::vector<NvmetSubsystem> out;
  if (!nvmet_visible()) return out;
  for (const auto& [nqn, s] : subsys_dirs) {
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
      [&]() -> Result<void> {
        if (!nvmet_visible()) return make_error("no nvmet tree", ENOENT);
        if (subsys_dirs.count(nqn)) return make_error("subsystem " + nqn + " exists", EEXIST);
        subsys_dirs[nqn].serial = fmt::format("{:x}", next_serial_++);
        return {};
      },
      "create NVMe target subsystem " + nqn, shell_join({"mkdir", nvmet_subsystem_dir(nqn)}));
}

Result<void> ModelNvme::remove_subsystem(const std::string& nqn) {
  return act(
      "nvme.remove_subsystem", nqn,
      [&]() -> Result<void> {
        auto* s = subsystem(nqn);
        if (!s) return make_error("no subsystem " + nqn, ENOENT);
        if (!s->namespaces.empty() || !s->allowed_hosts.empty())
          return make_error("subsystem " + nqn + " is not empty", ENOTEMPTY);
        for (const auto& [id, p] : port_dirs)
          if (std::count(p.subsystems.begin(), p.subsystems.end(), nqn))
            return make_error("subsystem " + nqn + " is linked by port " + std::to_string(id), EBUSY);
        subsys_dirs.erase(nqn);
        return {};
      },
      "remove NVMe target subsystem " + nqn, shell_join({"rmdir", nvmet_subsystem_dir(nqn)}));
}

Result<void> ModelNvme::set_allow_any_host(const std::string& nqn, bool allow) {
  return act(
      "nvme.set_allow_any_host", nqn,
      [&]() -> Result<void> {
        auto* s = subsystem(nqn);
        if (!s) return make_error("no subsystem " + nqn, ENOENT);
        if (allow && !s->allowed_hosts.empty())
          return make_error("allow_any_host while hosts are allowed explicitly", EINVAL);
        s->allow_any_host = allow;
        return {};
      },
      std::string(allow ? "allow any host in " : "allow only listed hosts in ") + nqn,
      echo_into_attr(allow ? "1" : "0", nvmet_subsystem_dir(nqn) + "/attr_allow_any_host"));
}

Result<std::vector<std::string>> ModelNvme::hosts() {
  if (!nvmet_visible()) return std::vector<std::string>{};
  return std::vector<std::string>(host_dirs.begin(), host_dirs.end());
}

Result<void> ModelNvme::add_host(const std::string& hostnqn) {
  return act(
      "nvme.add_host", hostnqn,
      [&]() -> Result<void> {
        if (!host_dirs.insert(hostnqn).second) return make_error("host " + hostnqn + " exists", EEXIST);
        return {};
      },
      "create NVMe target host " + hostnqn, shell_join({"mkdir", nvmet_host_dir(hostnqn)}));
}

Result<void> ModelNvme::remove_host(const std::string& hostnqn) {
  return act(
      "nvme.remove_host", hostnqn,
      [&]() -> Result<void> {
        if (!host_dirs.count(hostnqn)) return make_error("no host " + hostnqn, ENOENT);
        for (const auto& [nqn, s] : subsys_dirs)
          if (s.allowed_hosts.count(hostnqn)) return make_error("host " + hostnqn + " is allowed by " + nqn, EBUSY);
        host_dirs.erase(hostnqn);
        return {};
      },
      "remove NVMe target host " + hostnqn, shell_join({"rmdir", nvmet_host_dir(hostnqn)}));
}

Result<void> ModelNvme::allow_host(const std::string& nqn, const std::string& hostnqn) {
  return act(
      "nvme.allow_host", nqn,
      [&]() -> Result<void> {
        auto* s = subsystem(nqn);
        if (!s) return make_error("no subsystem " + nqn, ENOENT);
        if (!host_dirs.count(hostnqn)) return make_error("no host " + hostnqn, ENOENT);
        if (s->allow_any_host) return make_error("subsystem " + nqn + " allows any host", EINVAL);
        if (!s->allowed_hosts.insert(hostnqn).second) return make_error("host is allowed already", EEXIST);
        return {};
      },
      "allow host " + hostnqn + " in " + nqn,
      shell_join({"ln", "-s", nvmet_host_dir(hostnqn), nvmet_subsystem_dir(nqn) + "/allowed_hosts/" + hostnqn}));
}

Result<void> ModelNvme::disallow_host(const std::string& nqn, const std::string& hostnqn) {
  return act(
      "nvme.disallow_host", nqn,
      [&]() -> Result<void> {
        auto* s = subsystem(nqn);
        if (!s || !s->allowed_hosts.erase(hostnqn)) return make_error("no such allowed host", ENOENT);
        return {};
      },
      "stop allowing host " + hostnqn + " in " + nqn,
      shell_join({"rm", nvmet_subsystem_dir(nqn) + "/allowed_hosts/" + hostnqn}));
}

Result<void> ModelNvme::add_namespace(const std::string& nqn, unsigned nsid) {
  return act(
      "nvme.add_namespace", nqn,
      [&]() -> Result<void> {
        auto* s = subsystem(nqn);
        if (!s) return make_error("no subsystem " + nqn, ENOENT);
        if (nsid == 0 || nsid == 0xffffffffu) return make_error("invalid namespace ID", EINVAL);
        if (s->namespaces.count(nsid)) return make_error("namespace exists", EEXIST);
        s->namespaces[nsid] = NvmetNamespace{.nsid = nsid};
        return {};
      },
      "create " + nsid_of(nqn, nsid), shell_join({"mkdir", nvmet_namespace_dir(nqn, nsid)}));
}

Result<void> ModelNvme::set_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path,
                                             bool buffered) {
  auto r = act(
      "nvme.set_namespace_device", nqn,
      [&]() -> Result<void> {
        auto* s = subsystem(nqn);
        if (!s || !s->namespaces.count(nsid)) return make_error("no namespace " + std::to_string(nsid), ENOENT);
        auto& ns = s->namespaces[nsid];
        if (ns.enabled) return make_error("namespace is enabled", EBUSY);
        ns.device_path = path;
        ns.buffered_io = buffered;
        return {};
      },
      "back " + nsid_of(nqn, nsid) + " by " + path,
      echo_into_attr(path, nvmet_namespace_dir(nqn, nsid) + "/device_path"));
  if (r && buffered)
    k_.did_anywhere("nvme", "read and write it through the page cache",
                    echo_into_attr("1", nvmet_namespace_dir(nqn, nsid) + "/buffered_io"));
  return r;
}

Result<void> ModelNvme::enable_namespace(const std::string& nqn, unsigned nsid, bool enable) {
  return act(
      "nvme.enable_namespace", nqn,
      [&]() -> Result<void> {
        auto* s = subsystem(nqn);
        if (!s || !s->namespaces.count(nsid)) return make_error("no namespace " + std::to_string(nsid), ENOENT);
        auto& ns = s->namespaces[nsid];
        if (enable && !ns.enabled) {
          bool found = files.count(ns.device_path) || (k_.open_world && host_has && host_has(ns.device_path));
          for (const auto& [name, n] : nullb_dirs) found = found || (n.powered && n.disk == ns.device_path);
          if (!found) return make_error("cannot open " + ns.device_path, ENOENT);
        }
        ns.enabled = enable;
        return {};
      },
      std::string(enable ? "enable " : "disable ") + nsid_of(nqn, nsid),
      echo_into_attr(enable ? "1" : "0", nvmet_namespace_dir(nqn, nsid) + "/enable"));
}

Result<void> ModelNvme::remove_namespace(const std::string& nqn, unsigned nsid) {
  return act(
      "nvme.remove_namespace", nqn,
      [&]() -> Result<void> {
        auto* s = subsystem(nqn);
        if (!s || !s->namespaces.erase(nsid)) return make_error("no namespace " + std::to_string(nsid), ENOENT);
        return {};
      },
      "remove " + nsid_of(nqn, nsid), shell_join({"rmdir", nvmet_namespace_dir(nqn, nsid)}));
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
      [&]() -> Result<void> {
        if (!nvmet_visible()) return make_error("no nvmet tree", ENOENT);
        if (port.id > 65535) return make_error("invalid port ID", EINVAL);
        if (port_dirs.count(port.id)) return make_error("port " + std::to_string(port.id) + " exists", EEXIST);
        port_dirs[port.id] = port;
        port_dirs[port.id].subsystems.clear();
        return {};
      },
      "create NVMe target port " + std::to_string(port.id), shell_join({"mkdir", dir}));
  if (r)
    k_.did_anywhere("nvme", "set its address: " + port.trtype + " " + port.traddr + ":" + port.trsvcid,
                    echo_into_attr(port.trtype, dir + "/addr_trtype") + "; " +
                        echo_into_attr(port.adrfam, dir + "/addr_adrfam") + "; " +
                        echo_into_attr(port.traddr, dir + "/addr_traddr") + "; " +
                        echo_into_attr(port.trsvcid, dir + "/addr_trsvcid"));
  return r;
}

Result<void> ModelNvme::remove_port(unsigned id) {
  return act(
      "nvme.remove_port", std::to_string(id),
      [&]() -> Result<void> {
        auto it = port_dirs.find(id);
        if (it == port_dirs.end()) return make_error("no port " + std::to_string(id), ENOENT);
        if (!it->second.subsystems.empty()) return make_error("port links subsystems", ENOTEMPTY);
        port_dirs.erase(it);
        return {};
      },
      "remove NVMe target port " + std::to_string(id), shell_join({"rmdir", nvmet_port_dir(id)}));
}

Result<void> ModelNvme::link_port(unsigned id, const std::string& nqn) {
  return act(
      "nvme.link_port", std::to_string(id),
      [&]() -> Result<void> {
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
      },
      "offer " + nqn + " on port " + std::to_string(id) + " (the port listens)",
      shell_join({"ln", "-s", nvmet_subsystem_dir(nqn), nvmet_port_dir(id) + "/subsystems/" + nqn}));
}

Result<void> ModelNvme::unlink_port(unsigned id, const std::string& nqn) {
  return act(
      "nvme.unlink_port", std::to_string(id),
      [&]() -> Result<void> {
        auto it = port_dirs.find(id);
        if (it == port_dirs.end()) return make_error("no port " + std::to_string(id), ENOENT);
        auto& subs = it->second.subsystems;
        auto at = std::find(subs.begin(), subs.end(), nqn);
        if (at == subs.end()) return make_error("not linked", ENOENT);
        subs.erase(at);
        return {};
      },
      "withdraw " + nqn + " from port " + std::to_string(id),
      shell_join({"rm", nvmet_port_dir(id) + "/subsystems/" + nqn}));
}

Result<std::vector<NullBlk>> ModelNvme::null_blks() {
  std::vector<NullBlk> out;
  if (nullb_visible())
    for (const auto& [name, n] : nullb_dirs) out.push_back(n);
  return out;
}

Result<void> ModelNvme::add_null_blk(const std::string& name, std::uint64_t size_mib) {
  const std::string dir = null_blk_dir(name);
  return act(
      "nvme.add_null_blk", name,
      [&]() -> Result<void> {
        if (!nullb_visible()) return make_error("no nullb tree", ENOENT);
        if (nullb_dirs.count(name)) return make_error("null_blk " + name + " exists", EEXIST);
        nullb_dirs[name] = NullBlk{.name = name,
                                   .index = next_index_++,
                                   .size_mib = size_mib,
                                   .memory_backed = true,
                                   .powered = true,
                                   .disk = "/dev/" + name};
        return {};
      },
      "create null_blk device " + name + " of " + std::to_string(size_mib) + " MiB, memory-backed",
      shell_join({"mkdir", dir}) + "; " + echo_into_attr(std::to_string(size_mib), dir + "/size") + "; " +
          echo_into_attr("1", dir + "/memory_backed") + "; " + echo_into_attr("1", dir + "/power"));
}

Result<void> ModelNvme::remove_null_blk(const std::string& name) {
  const std::string dir = null_blk_dir(name);
  return act(
      "nvme.remove_null_blk", name,
      [&]() -> Result<void> {
        if (!nullb_dirs.erase(name)) return make_error("no null_blk " + name, ENOENT);
        return {};
      },
      "remove null_blk device " + name, echo_into_attr("0", dir + "/power") + "; " + shell_join({"rmdir", dir}));
}

Result<std::optional<FileId>> ModelNvme::file_id(const std::string& path) {
  if (auto it = files.find(path); it != files.end()) return std::optional<FileId>(it->second);
  if (k_.open_world && host_has && host_has(path)) return std::optional<FileId>(FileId{});
  return std::optional<FileId>();
}

Result<FileId> ModelNvme::create_file(const std::string& path, std::uint64_t size) {
  FileId id{.dev = 2049, .ino = next_ino_, .size = size};
  auto r = act(
      "nvme.create_file", path,
      [&]() -> Result<void> {
        if (files.count(path)) return make_error(path + " exists", EEXIST);
        files[path] = id;
        ++next_ino_;
        return {};
      },
      "create " + path + " (" + std::to_string(size) + " bytes, sparse)",
      shell_join({"truncate", "-s", std::to_string(size), path}));
  if (!r) return r.error();
  return id;
}

Result<void> ModelNvme::remove_file(const std::string& path) {
  return act(
      "nvme.remove_file", path,
      [&]() -> Result<void> {
        if (!files.erase(path)) return make_error("no file " + path, ENOENT);
        return {};
      },
      "remove " + path, shell_join({"rm", path}));
}

Result<std::string> ModelNvme::file_system(const std::string& path) {
  for (const auto& [prefix, fs] : file_systems)
    if (path.starts_with(prefix)) return fs;
  return std::string(k_.open_world ? "" : "tmpfs");
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
  if (!c && !k_.open_world) {
    if (kernel_lines) *kernel_lines = kernel_log;
    return make_error("the kernel refused the connect: " + std::string(std::strerror(c.error().code)), c.error().code);
  }
  if (!c) {
    // A target a plan did not make may well be there at run time.
    c = FabricsController{.instance = next_instance_,
                          .transport = options.transport,
                          .traddr = options.traddr,
                          .trsvcid = options.trsvcid,
                          .subsysnqn = options.nqn,
                          .cntlid = 1,
                          .state = "live",
                          .block_devices = {fmt::format("nvme{}n1", next_instance_)}};
  }
  ++next_instance_;
  ctrls[c->instance] = *c;
  if (devices_after > 0) hidden_[c->instance] = devices_after;
  k_.did_anywhere("nvme",
                  "connect to NVMe subsystem " + options.nqn + " over " + options.transport + " at " + options.traddr +
                      ":" + options.trsvcid,
                  echo_into_attr(fabrics_options_line(options), "/dev/nvme-fabrics"));
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
      "nvme.delete_controller", name,
      [&]() -> Result<void> {
        if (!ctrls.erase(instance)) return make_error("no controller " + name, ENOENT);
        return {};
      },
      "disconnect NVMe controller " + name, echo_into_attr("1", "/sys/class/nvme/" + name + "/delete_controller"));
}

Result<bool> ModelNvme::block_device(const std::string& name) {
  if (k_.open_world) return true;
  for (const auto& [item, b] : nullb_dirs)
    if (b.powered && b.disk == "/dev/" + name) return true;
  for (const auto& [i, c] : ctrls)
    for (const auto& d : c.block_devices)
      if (d == name) return true;
  return false;
}

}  // namespace rxerun::sys
