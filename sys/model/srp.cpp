#include "sys/model/srp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "base/strings.h"
#include "sys/kernel_files.h"

namespace rxerun::sys {

namespace {

// "id_ext=...,ioc_guid=...,dest=10.0.0.1:5555,src=10.0.0.2" -> key -> value.
std::map<std::string, std::string> login_options(const std::string& options) {
  std::map<std::string, std::string> out;
  std::stringstream in(options);
  for (std::string item; std::getline(in, item, ',');)
    if (const auto eq = item.find('='); eq != std::string::npos) out[item.substr(0, eq)] = item.substr(eq + 1);
  return out;
}

// "10.0.0.1:5555" or "[fe80::1]:5555" -> address and port.
std::pair<std::string, unsigned> split_dest(const std::string& dest) {
  const auto colon = dest.rfind(':');
  if (colon == std::string::npos) return {dest, 0};
  std::string address = dest.substr(0, colon);
  if (address.size() > 1 && address.front() == '[' && address.back() == ']')
    address = address.substr(1, address.size() - 2);
  unsigned port = 0;
  (void)parse_unsigned(dest.substr(colon + 1), &port);
  return {address, port};
}

std::string without_prefix(const std::string& cidr) {
  return cidr.substr(0, cidr.find('/'));
}

}  // namespace

bool ModelSrp::lio_visible() {
  // An open world knows no module's dependencies: any of LIO's users says it is loaded.
  bool lio = false;
  for (const char* m : {"target_core_mod", "ib_srpt", "target_core_file", "target_core_iblock"})
    lio = lio || *modules_.loaded(m);
  return *storage_.configfs_mount() && lio;
}

SrptTarget* ModelSrp::target_of(const std::string& target) {
  auto it = targets.find(target);
  return it == targets.end() ? nullptr : &it->second;
}

SrptTpg* ModelSrp::tpg_of(const std::string& target, const std::string& tpg) {
  auto* t = target_of(target);
  if (!t) return nullptr;
  auto it = std::find_if(t->tpgs.begin(), t->tpgs.end(), [&](const SrptTpg& g) { return g.name == tpg; });
  return it == t->tpgs.end() ? nullptr : &*it;
}

Result<std::vector<LioBackstore>> ModelSrp::backstores() {
  std::vector<LioBackstore> out;
  if (lio_visible())
    for (const auto& [key, b] : backstore_dirs) out.push_back(b);
  return out;
}

Result<std::vector<std::string>> ModelSrp::hbas() {
  std::set<std::string> all;
  if (lio_visible()) {
    all = empty_hbas;
    for (const auto& [key, b] : backstore_dirs) all.insert(b.hba);
  }
  return std::vector<std::string>(all.begin(), all.end());
}

Result<void> ModelSrp::add_backstore(const LioBackstore& b) {
  const std::string key = b.hba + "/" + b.name, dir = lio_backstore_dir(b.hba, b.name);
  bool opens =
      b.plugin() == "fileio" ? (*storage_.file_id(b.path)).has_value() : *storage_.block_device(b.path.substr(5));
  if (b.plugin() == "iblock" && !b.path.starts_with("/dev/")) opens = false;
  auto r = k_.act(
      "srp", "srp.add_backstore", key,
      {{!lio_visible(), ENOENT, "no LIO tree"},
       {b.plugin() != "fileio" && b.plugin() != "iblock", EINVAL, "no backstore plugin " + b.plugin()},
       {backstore_dirs.count(key) > 0, EEXIST, "backstore " + key + " exists"},
       {!opens, ENOENT, "cannot open " + b.path}},
      [&] {
        LioBackstore& made = backstore_dirs[key] = b;
        made.enabled = true;
        if (made.serial.empty()) made.serial = fmt::format("{:x}", next_serial_++);
      },
      "create LIO " + b.plugin() + " backstore " + key + " on " + b.path, shell_join({"mkdir", "-p", dir}));
  if (r) {
    const std::string control = b.plugin() == "fileio"
                                    ? "fd_dev_name=" + b.path + ",fd_dev_size=" + std::to_string(b.size)
                                    : "udev_path=" + b.path;
    k_.did_anywhere("srp", "point it at " + b.path + ", give it serial " + b.serial + " and enable it",
                    echo_into_attr(control, dir + "/control") + "; " + echo_into_attr(b.path, dir + "/udev_path") +
                        "; " + echo_into_attr(b.serial, dir + "/wwn/vpd_unit_serial") + "; " +
                        echo_into_attr("1", dir + "/enable"));
  }
  return r;
}

Result<void> ModelSrp::remove_backstore(const std::string& hba, const std::string& name) {
  const std::string key = hba + "/" + name;
  bool linked = false;
  for (const auto& [t, target] : targets)
    for (const auto& g : target.tpgs)
      for (const auto& lun : g.luns) linked = linked || lun.backstore == key;
  // The HBA goes with its last object.
  const bool last = std::none_of(backstore_dirs.begin(), backstore_dirs.end(),
                                 [&](const auto& b) { return b.first != key && b.second.hba == hba; });
  std::vector<std::string> dirs = {"rmdir", lio_backstore_dir(hba, name)};
  if (last) dirs.push_back(lio_dir() + "/core/" + hba);
  return k_.act(
      "srp", "srp.remove_backstore", key,
      {{!backstore_dirs.count(key), ENOENT, "no backstore " + key}, {linked, EBUSY, "a LUN links " + key}},
      [&] { backstore_dirs.erase(key); }, "remove LIO backstore " + key, shell_join(dirs));
}

Result<bool> ModelSrp::srpt_fabric() {
  return lio_visible() && fabric;
}

Result<void> ModelSrp::add_srpt_fabric() {
  return k_.act(
      "srp", "srp.add_srpt_fabric", "",
      {{!lio_visible(), ENOENT, "no LIO tree"},
       {!srpt_loaded(), ENODEV, "ib_srpt is not loaded"},
       {fabric, EEXIST, "srpt exists"}},
      [&] { fabric = true; }, "create the ib_srpt fabric in LIO", shell_join({"mkdir", srpt_dir()}));
}

Result<void> ModelSrp::remove_srpt_fabric() {
  return k_.act(
      "srp", "srp.remove_srpt_fabric", "",
      {{!fabric, ENOENT, "no srpt fabric"}, {!targets.empty(), ENOTEMPTY, "srpt has target ports"}},
      [&] { fabric = false, cm_port = 0; }, "remove the ib_srpt fabric", shell_join({"rmdir", srpt_dir()}));
}

Result<unsigned> ModelSrp::rdma_cm_port() {
  if (!*srpt_fabric()) return make_error("no srpt fabric", ENOENT);
  return cm_port;
}

Result<void> ModelSrp::set_rdma_cm_port(unsigned port) {
  // ib_srpt listens on every RDMA device; siw cannot make that listener on
  // a device whose netdev is in another network namespace.
  const bool siw_elsewhere = std::any_of(rdma_.devices.begin(), rdma_.devices.end(),
                                         [](const auto& d) { return d.type == kSiwType && !d.netns.empty(); });
  return k_.act(
      "srp", "srp.set_rdma_cm_port", std::to_string(port),
      {{!fabric, ENOENT, "no srpt fabric"},
       {port > 65535, EINVAL, "invalid port"},
       {port != 0 && siw_elsewhere, EADDRINUSE, "cma_listen_on_dev, error -98"}},
      [&] { cm_port = port; },
      port ? "listen for SRP logins on RDMA/CM port " + std::to_string(port) : "stop listening on RDMA/CM",
      echo_into_attr(std::to_string(port), srpt_dir() + "/discovery_auth/rdma_cm_port"));
}

Result<std::string> ModelSrp::service_guid() {
  return std::string(srpt_loaded() ? kServiceGuid : "");
}

Result<std::vector<SrptTarget>> ModelSrp::srpt_targets() {
  std::vector<SrptTarget> out;
  if (*srpt_fabric())
    for (const auto& [name, t] : targets) out.push_back(t);
  return out;
}

Result<void> ModelSrp::add_srpt_target(const std::string& target) {
  bool named = false;
  for (const auto& d : rdma_.devices)
    if (auto gids = rdma_.gids(d.name, 1); gids && !gids->empty())
      if (auto names = srpt_port_names(gids->front().gid))
        named = named || names->guid == target || names->gid == target;
  return k_.act(
      "srp", "srp.add_srpt_target", target,
      {{!fabric, ENOENT, "no srpt fabric"},
       {targets.count(target) > 0, EEXIST, "target " + target + " exists"},
       {!named, EINVAL, "no RDMA port is named " + target}},
      [&] { targets[target].name = target; }, "create SRP target port " + target,
      shell_join({"mkdir", srpt_target_dir(target)}));
}

Result<void> ModelSrp::remove_srpt_target(const std::string& target) {
  const auto* t = target_of(target);
  return k_.act(
      "srp", "srp.remove_srpt_target", target,
      {{!t, ENOENT, "no target " + target}, {t && !t->tpgs.empty(), ENOTEMPTY, "target " + target + " has TPGs"}},
      [&] { targets.erase(target); }, "remove SRP target port " + target,
      shell_join({"rmdir", srpt_target_dir(target)}));
}

Result<void> ModelSrp::add_tpg(const std::string& target, const std::string& tpg) {
  auto* t = target_of(target);
  return k_.act(
      "srp", "srp.add_tpg", target,
      {{!t, ENOENT, "no target " + target}, {tpg_of(target, tpg) != nullptr, EEXIST, "TPG " + tpg + " exists"}},
      [&] { t->tpgs.push_back({.name = tpg}); }, "create its TPG " + tpg,
      shell_join({"mkdir", srpt_tpg_dir(target, tpg)}));
}

Result<void> ModelSrp::remove_tpg(const std::string& target, const std::string& tpg) {
  const auto* g = tpg_of(target, tpg);
  return k_.act(
      "srp", "srp.remove_tpg", target,
      {{!g, ENOENT, "no TPG " + tpg},
       {g && (!g->luns.empty() || !g->acls.empty()), ENOTEMPTY, "TPG " + tpg + " is not empty"}},
      [&] { std::erase_if(targets[target].tpgs, [&](const SrptTpg& x) { return x.name == tpg; }); },
      "remove TPG " + tpg + " of " + target, shell_join({"rmdir", srpt_tpg_dir(target, tpg)}));
}

Result<void> ModelSrp::add_lun(const std::string& target, const std::string& tpg, const SrptLun& lun) {
  auto* g = tpg_of(target, tpg);
  const std::string dir = srpt_tpg_dir(target, tpg) + "/lun/lun_" + std::to_string(lun.index);
  const auto slash = lun.backstore.find('/');
  return k_.act(
      "srp", "srp.add_lun", target,
      {{!g, ENOENT, "no TPG " + tpg},
       {g && std::any_of(g->luns.begin(), g->luns.end(), [&](const SrptLun& l) { return l.index == lun.index; }),
        EEXIST, "LUN " + std::to_string(lun.index) + " exists"},
       {!backstore_dirs.count(lun.backstore), ENOENT, "no backstore " + lun.backstore}},
      [&] { g->luns.push_back(lun); }, "export " + lun.backstore + " as LUN " + std::to_string(lun.index),
      shell_join({"mkdir", dir}) + "; " +
          shell_join({"ln", "-s", lio_backstore_dir(lun.backstore.substr(0, slash), lun.backstore.substr(slash + 1)),
                      dir + "/" + lun.backstore.substr(slash + 1)}));
}

Result<void> ModelSrp::remove_lun(const std::string& target, const std::string& tpg, unsigned index) {
  auto* g = tpg_of(target, tpg);
  auto lun = g ? std::find_if(g->luns.begin(), g->luns.end(), [&](const SrptLun& l) { return l.index == index; })
               : std::vector<SrptLun>::iterator{};
  const bool there = g && lun != g->luns.end();
  const std::string dir = srpt_tpg_dir(target, tpg) + "/lun/lun_" + std::to_string(index);
  const std::string link = there ? dir + "/" + lun->backstore.substr(lun->backstore.find('/') + 1) : dir;
  return k_.act(
      "srp", "srp.remove_lun", target, {{!there, ENOENT, "no LUN " + std::to_string(index)}},
      [&] { g->luns.erase(lun); }, "remove LUN " + std::to_string(index) + " of " + target,
      shell_join({"rm", link}) + "; " + shell_join({"rmdir", dir}));
}

Result<void> ModelSrp::add_acl(const std::string& target, const std::string& tpg, const std::string& initiator,
                               const std::vector<unsigned>& luns) {
  auto* g = tpg_of(target, tpg);
  const std::string dir = srpt_tpg_dir(target, tpg) + "/acls/" + initiator;
  std::string shell = shell_join({"mkdir", dir});
  for (unsigned n : luns) {
    const std::string lun = "lun_" + std::to_string(n);
    shell += "; " + shell_join({"mkdir", dir + "/" + lun}) + "; " +
             shell_join({"ln", "-s", srpt_tpg_dir(target, tpg) + "/lun/" + lun, dir + "/" + lun + "/" + lun});
  }
  return k_.act(
      "srp", "srp.add_acl", initiator,
      {{!g, ENOENT, "no TPG " + tpg},
       {g && std::any_of(g->acls.begin(), g->acls.end(), [&](const SrptAcl& a) { return a.initiator == initiator; }),
        EEXIST, "ACL " + initiator + " exists"}},
      [&] { g->acls.push_back({.initiator = initiator, .mapped_luns = luns}); },
      "let initiator " + initiator + " log in to " + target, shell);
}

Result<void> ModelSrp::remove_acl(const std::string& target, const std::string& tpg, const std::string& initiator) {
  auto* g = tpg_of(target, tpg);
  auto acl =
      g ? std::find_if(g->acls.begin(), g->acls.end(), [&](const SrptAcl& a) { return a.initiator == initiator; })
        : std::vector<SrptAcl>::iterator{};
  const bool there = g && acl != g->acls.end();
  const std::string dir = srpt_tpg_dir(target, tpg) + "/acls/" + initiator;
  std::string shell;
  std::vector<std::string> dirs = {"rmdir"};
  for (unsigned n : there ? acl->mapped_luns : std::vector<unsigned>{}) {
    const std::string lun = dir + "/lun_" + std::to_string(n);
    shell += shell_join({"rm", lun + "/lun_" + std::to_string(n)}) + "; ";
    dirs.push_back(lun);
  }
  dirs.push_back(dir);
  return k_.act(
      "srp", "srp.remove_acl", initiator, {{!there, ENOENT, "no ACL " + initiator}}, [&] { g->acls.erase(acl); },
      "stop letting initiator " + initiator + " log in to " + target, shell + shell_join(dirs));
}

Result<void> ModelSrp::enable_tpg(const std::string& target, const std::string& tpg, bool enable) {
  auto* g = tpg_of(target, tpg);
  return k_.act(
      "srp", "srp.enable_tpg", target, {{!g, ENOENT, "no TPG " + tpg}}, [&] { g->enabled = enable; },
      std::string(enable ? "enable" : "disable") + " TPG " + tpg + " of " + target,
      echo_into_attr(enable ? "1" : "0", srpt_tpg_dir(target, tpg) + "/enable"));
}

Result<std::vector<std::string>> ModelSrp::srp_ports() {
  std::vector<std::string> out;
  if (*modules_.loaded("ib_srp"))
    for (const auto& d : rdma_.devices) out.push_back("srp-" + d.name + "-1");
  return out;
}

std::string ModelSrp::login_refusal(const std::string& address, unsigned port, const std::string& id_ext,
                                    std::uint64_t* bytes) {
  if (!*srpt_fabric() || cm_port == 0 || cm_port != port)
    return "nobody listens on RDMA/CM port " + std::to_string(port);
  // The target's RDMA device: the one over the interface with that address, in the initial namespace.
  const ModelRdma::Device* device = nullptr;
  for (const auto& d : rdma_.devices) {
    if (!d.netns.empty()) continue;
    auto ns = links_.addrs.find("");
    if (ns == links_.addrs.end()) continue;
    auto cidrs = ns->second.find(d.netdev);
    if (cidrs == ns->second.end()) continue;
    for (const auto& c : cidrs->second)
      if (without_prefix(c) == address) device = &d;
  }
  if (!device) return "no RDMA device has " + address;
  auto gids = rdma_.gids(device->name, 1);
  const auto names = gids && !gids->empty() ? srpt_port_names(gids->front().gid) : std::nullopt;
  if (id_ext != kServiceGuid && "0x" + id_ext != kServiceGuid)
    return "rejected SRP_LOGIN_REQ because it has an invalid target port identifier";
  const std::string login_name = srpt_login_name(address);  // what ib_srpt matches the ACLs against
  for (const auto& [name, t] : targets) {
    if (!names || (name != names->guid && name != names->gid)) continue;
    for (const auto& g : t.tpgs)
      if (g.enabled && !g.luns.empty() &&
          std::any_of(g.acls.begin(), g.acls.end(), [&](const SrptAcl& a) { return a.initiator == login_name; })) {
        *bytes = backstore_bytes(g.luns.front().backstore);
        return "";
      }
  }
  return "Rejected login for initiator " + login_name + ": ret = -13.";
}

std::uint64_t ModelSrp::backstore_bytes(const std::string& key) {
  auto it = backstore_dirs.find(key);
  if (it == backstore_dirs.end()) return 0;
  if (it->second.plugin() == "fileio") return it->second.size;
  for (const auto& [name, b] : storage_.nullb_dirs)
    if (b.disk == it->second.path) return b.size_mib << 20;
  return 0;
}

Result<void> ModelSrp::add_target(const std::string& srp_port, const std::string& options,
                                  std::vector<std::string>* kernel_lines) {
  if (auto f = k_.fault("srp.add_target", srp_port)) return *f;
  if (!k_.open_world && !*modules_.loaded("ib_srp")) return make_error("no " + srp_port, ENOENT);
  const auto o = login_options(options);
  const auto dest = split_dest(o.count("dest") ? o.at("dest") : "");
  const std::string address = dest.first;
  const unsigned port = dest.second;
  const std::string id_ext = o.count("id_ext") ? o.at("id_ext") : "";
  std::uint64_t bytes = 0;
  std::string why = login_refusal(address, port, id_ext, &bytes);
  int code = ECONNRESET;
  // ib_srp takes an IPv6 address only in brackets: "[fd00::2]".
  if (const std::string src = o.count("src") ? o.at("src") : "";
      src.find(':') != std::string::npos && src.front() != '[')
    why = "bad source parameter '" + src + "'", code = EINVAL;
  for (const auto& [host, l] : login_hosts)
    if (l.id_ext == id_ext && dests_[host] == address) {
      why = "Already connected to target port with id_ext=" + id_ext, code = EEXIST;
    }
  const auto srp_dir = std::string("/sys/class/infiniband_srp/") + srp_port;
  auto write = [&] {
    k_.did_anywhere("srp", "log in to the SRP target at " + address + " port " + std::to_string(port),
                    echo_into_attr(options, srp_dir + "/add_target"));
  };
  if (k_.open_world) write();
  if (!why.empty() && !k_.open_world) {
    kernel_log.push_back("ib_srp: " + why);
    if (kernel_lines) *kernel_lines = kernel_log;
    return make_error("the kernel refused the login: " + std::string(std::strerror(code)), code);
  }
  if (!k_.open_world) write();
  const unsigned host = next_host_++;
  std::string device = srp_port.substr(4, srp_port.rfind('-') - 4);
  login_hosts[host] = SrpLogin{.host = host,
                               .remote_port = "port-" + std::to_string(host) + ":1",
                               .device = device,
                               .port = 1,
                               .id_ext = o.count("id_ext") ? o.at("id_ext") : "",
                               .ioc_guid = o.count("ioc_guid") ? o.at("ioc_guid") : "",
                               .state = "running",
                               .disks = {{.name = std::string("sd") + next_disk_++, .bytes = bytes}}};
  dests_[host] = address;
  storage_.disks.insert(login_hosts[host].disks.front().name);
  if (disks_after > 0) hidden_[host] = disks_after;
  return {};
}

Result<std::vector<SrpLogin>> ModelSrp::logins() {
  std::vector<SrpLogin> out;
  for (auto [host, l] : login_hosts) {
    if (auto it = hidden_.find(host); it != hidden_.end()) {
      l.disks.clear();
      if (--it->second <= 0) hidden_.erase(it);
    }
    out.push_back(std::move(l));
  }
  return out;
}

Result<void> ModelSrp::logout(const std::string& remote_port) {
  auto it = std::find_if(login_hosts.begin(), login_hosts.end(),
                         [&](const auto& h) { return h.second.remote_port == remote_port; });
  return k_.act(
      "srp", "srp.logout", remote_port, {{it == login_hosts.end(), ENOENT, "no remote port " + remote_port}},
      [&] {
        for (const auto& d : it->second.disks) storage_.disks.erase(d.name);
        login_hosts.erase(it);
      },
      "log out of SRP remote port " + remote_port,
      echo_into_attr("1", "/sys/class/srp_remote_ports/" + remote_port + "/delete"));
}

}  // namespace rxerun::sys
