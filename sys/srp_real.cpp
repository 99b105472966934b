#include "sys/srp_real.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "sys/kernel_files.h"
#include "sys/kernel_log.h"

namespace rxerun::sys {

namespace {

const char* const kSrpClassDir = "/sys/class/infiniband_srp";
const char* const kRemotePortsDir = "/sys/class/srp_remote_ports";

// "Size: 67108864" -> 67108864, from a backstore's `info` ("... File: /run/x Size: 67108864 Mode: ...").
std::string info_value(const std::string& info, const std::string& key) {
  std::istringstream words(info);
  std::string word;
  while (words >> word)
    if (word == key + ":" && words >> word) return word;
  return {};
}

// The last two components of a link into core/: "fileio_0/NAME".
std::string backstore_of_link(const std::string& target) {
  const auto last = target.rfind('/');
  if (last == std::string::npos || last == 0) return {};
  const auto before = target.rfind('/', last - 1);
  return target.substr(before == std::string::npos ? 0 : before + 1);
}

// The LUN numbers of "lun_N" directories.
std::vector<unsigned> lun_indexes(const std::string& dir) {
  std::vector<unsigned> out;
  for (const auto& name : subdirectories(dir)) {
    unsigned n = 0;
    if (name.starts_with("lun_") && parse_unsigned(std::string_view(name).substr(4), &n)) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The only link in a directory (a LUN's link to its backstore, a mapped
// LUN's to the TPG's LUN); "" when there is none.
std::string only_link(const std::string& dir) {
  for (const auto& name : dir_entries(dir))
    if (auto target = link_target(dir + "/" + name); !target.empty()) return dir + "/" + name;
  return {};
}

}  // namespace

Result<std::vector<LioBackstore>> RealSrp::backstores() {
  std::vector<LioBackstore> out;
  for (const auto& hba : subdirectories(lio_dir() + "/core")) {
    if (hba == "alua") continue;  // ALUA's groups, not an HBA
    for (const auto& name : subdirectories(lio_dir() + "/core/" + hba)) {
      const std::string dir = lio_backstore_dir(hba, name);
      if (!kernel_path_exists(dir + "/control")) continue;
      LioBackstore b{.hba = hba, .name = name};
      const std::string info = attr_or_empty(dir + "/info");
      b.path = attr_or_empty(dir + "/udev_path");
      if (b.path.empty()) b.path = info_value(info, "File");
      (void)parse_unsigned(info_value(info, "Size"), &b.size);
      b.enabled = attr_or_empty(dir + "/enable") == "1";  // `info`'s ACTIVATED says exported, not enabled
      // "T10 VPD Unit Serial Number: 1c5c7c0e-..."
      const std::string serial = attr_or_empty(dir + "/wwn/vpd_unit_serial");
      b.serial = serial.substr(serial.rfind(' ') == std::string::npos ? 0 : serial.rfind(' ') + 1);
      out.push_back(std::move(b));
    }
  }
  return out;
}

Result<std::vector<std::string>> RealSrp::hbas() {
  auto all = subdirectories(lio_dir() + "/core");
  std::erase(all, "alua");
  return all;
}

Result<void> RealSrp::add_backstore(const LioBackstore& b) {
  const std::string hba_dir = lio_dir() + "/core/" + b.hba;
  if (!kernel_path_exists(hba_dir))
    if (auto r = make_kernel_dir(hba_dir); !r && r.error().code != EEXIST) return r;
  const std::string dir = lio_backstore_dir(b.hba, b.name);
  if (auto r = make_kernel_dir(dir); !r) return r;
  const std::string control = b.plugin() == "fileio"
                                  ? "fd_dev_name=" + b.path + ",fd_dev_size=" + std::to_string(b.size)
                                  : "udev_path=" + b.path;
  if (auto r = write_attr(dir + "/control", control); !r) return r;
  if (auto r = write_attr(dir + "/udev_path", b.path); !r) return r;
  if (!b.serial.empty())
    if (auto r = write_attr(dir + "/wwn/vpd_unit_serial", b.serial); !r) return r;
  return write_attr(dir + "/enable", "1");
}

Result<void> RealSrp::remove_backstore(const std::string& hba, const std::string& name) {
  if (auto r = remove_kernel_dir(lio_backstore_dir(hba, name)); !r) return r;
  const std::string hba_dir = lio_dir() + "/core/" + hba;
  if (subdirectories(hba_dir).empty())
    if (auto r = remove_kernel_dir(hba_dir);
        !r && r.error().code != ENOENT && r.error().code != ENOTEMPTY && r.error().code != EBUSY)
      return r;
  return {};
}

Result<bool> RealSrp::srpt_fabric() {
  return kernel_path_exists(srpt_dir());
}

Result<void> RealSrp::add_srpt_fabric() {
  return make_kernel_dir(srpt_dir());
}

Result<void> RealSrp::remove_srpt_fabric() {
  return remove_kernel_dir(srpt_dir());
}

Result<unsigned> RealSrp::rdma_cm_port() {
  auto text = read_attr(srpt_dir() + "/discovery_auth/rdma_cm_port");
  if (!text) return text.error();
  unsigned port = 0;
  if (!parse_unsigned(*text, &port)) return make_error("rdma_cm_port reads '" + *text + "', not a port", EIO);
  return port;
}

Result<void> RealSrp::set_rdma_cm_port(unsigned port) {
  return write_attr(srpt_dir() + "/discovery_auth/rdma_cm_port", std::to_string(port));
}

Result<std::string> RealSrp::service_guid() {
  const std::string path = "/sys/module/ib_srpt/parameters/srpt_service_guid";
  if (!kernel_path_exists(path)) return std::string();
  return read_attr(path);
}

Result<std::vector<SrptTarget>> RealSrp::srpt_targets() {
  std::vector<SrptTarget> out;
  for (const auto& target : subdirectories(srpt_dir())) {
    if (target == "discovery_auth") continue;
    SrptTarget t{.name = target};
    for (const auto& tpg : subdirectories(srpt_target_dir(target))) {
      const std::string dir = srpt_tpg_dir(target, tpg);
      if (!kernel_path_exists(dir + "/enable")) continue;  // fabric_statistics
      SrptTpg g{.name = tpg, .enabled = attr_or_empty(dir + "/enable") == "1"};
      for (unsigned index : lun_indexes(dir + "/lun")) {
        const std::string link = only_link(dir + "/lun/lun_" + std::to_string(index));
        g.luns.push_back({.index = index, .backstore = link.empty() ? "" : backstore_of_link(link_target(link))});
      }
      for (const auto& initiator : subdirectories(dir + "/acls")) {
        g.acls.push_back({.initiator = initiator, .mapped_luns = lun_indexes(dir + "/acls/" + initiator)});
      }
      t.tpgs.push_back(std::move(g));
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<void> RealSrp::add_srpt_target(const std::string& target) {
  return make_kernel_dir(srpt_target_dir(target));
}

Result<void> RealSrp::remove_srpt_target(const std::string& target) {
  return remove_kernel_dir(srpt_target_dir(target));
}

Result<void> RealSrp::add_tpg(const std::string& target, const std::string& tpg) {
  return make_kernel_dir(srpt_tpg_dir(target, tpg));
}

Result<void> RealSrp::remove_tpg(const std::string& target, const std::string& tpg) {
  return remove_kernel_dir(srpt_tpg_dir(target, tpg));
}

Result<void> RealSrp::add_lun(const std::string& target, const std::string& tpg, const SrptLun& lun) {
  const std::string dir = srpt_tpg_dir(target, tpg) + "/lun/lun_" + std::to_string(lun.index);
  if (auto r = make_kernel_dir(dir); !r) return r;
  const auto slash = lun.backstore.find('/');
  const std::string object = lio_backstore_dir(lun.backstore.substr(0, slash), lun.backstore.substr(slash + 1));
  return make_kernel_link(object, dir + "/" + lun.backstore.substr(slash + 1));
}

Result<void> RealSrp::remove_lun(const std::string& target, const std::string& tpg, unsigned index) {
  const std::string dir = srpt_tpg_dir(target, tpg) + "/lun/lun_" + std::to_string(index);
  if (const std::string link = only_link(dir); !link.empty())
    if (auto r = remove_kernel_link(link); !r) return r;
  return remove_kernel_dir(dir);
}

Result<void> RealSrp::add_acl(const std::string& target, const std::string& tpg, const std::string& initiator,
                              const std::vector<unsigned>& luns) {
  const std::string tpg_dir = srpt_tpg_dir(target, tpg);
  const std::string dir = tpg_dir + "/acls/" + initiator;
  if (auto r = make_kernel_dir(dir); !r) return r;
  for (unsigned index : luns) {
    const std::string lun = "lun_" + std::to_string(index);
    if (auto r = make_kernel_dir(dir + "/" + lun); !r) return r;
    if (auto r = make_kernel_link(tpg_dir + "/lun/" + lun, dir + "/" + lun + "/" + lun); !r) return r;
  }
  return {};
}

Result<void> RealSrp::remove_acl(const std::string& target, const std::string& tpg, const std::string& initiator) {
  const std::string dir = srpt_tpg_dir(target, tpg) + "/acls/" + initiator;
  for (unsigned index : lun_indexes(dir)) {
    const std::string lun = dir + "/lun_" + std::to_string(index);
    if (const std::string link = only_link(lun); !link.empty())
      if (auto r = remove_kernel_link(link); !r) return r;
    if (auto r = remove_kernel_dir(lun); !r) return r;
  }
  return remove_kernel_dir(dir);
}

Result<void> RealSrp::enable_tpg(const std::string& target, const std::string& tpg, bool enable) {
  return write_attr(srpt_tpg_dir(target, tpg) + "/enable", enable ? "1" : "0");
}

Result<std::vector<std::string>> RealSrp::srp_ports() {
  return dir_entries(kSrpClassDir);
}

Result<void> RealSrp::add_target(const std::string& srp_port, const std::string& options,
                                 std::vector<std::string>* kernel_log) {
  const std::uint64_t since = kernel_log_now();
  auto r = write_attr(std::string(kSrpClassDir) + "/" + srp_port + "/add_target", options);
  if (kernel_log) *kernel_log = srp_kernel_messages(since);
  if (!r)
    return make_error("the kernel refused the login: " + std::string(std::strerror(r.error().code)), r.error().code);
  return {};
}

Result<std::vector<SrpLogin>> RealSrp::logins() {
  std::vector<SrpLogin> out;
  const auto scsi_devices = dir_entries("/sys/class/scsi_device");
  for (const auto& remote : dir_entries(kRemotePortsDir)) {
    // "port-3:1": host 3, the SRP rport's channel 1
    unsigned host = 0;
    const auto colon = remote.find(':');
    if (!remote.starts_with("port-") || colon == std::string::npos ||
        !parse_unsigned(std::string_view(remote).substr(5, colon - 5), &host))
      continue;
    const std::string dir = "/sys/class/scsi_host/host" + std::to_string(host);
    SrpLogin l{.host = host,
               .remote_port = remote,
               .device = attr_or_empty(dir + "/local_ib_device"),
               .id_ext = attr_or_empty(dir + "/id_ext"),
               .ioc_guid = attr_or_empty(dir + "/ioc_guid"),
               .state = attr_or_empty(std::string(kRemotePortsDir) + "/" + remote + "/state")};
    (void)parse_unsigned(attr_or_empty(dir + "/local_ib_port"), &l.port);
    const std::string prefix = std::to_string(host) + ":";
    for (const auto& sd : scsi_devices)
      if (sd.starts_with(prefix))
        for (const auto& disk : dir_entries("/sys/class/scsi_device/" + sd + "/device/block")) {
          std::uint64_t sectors = 0;  // of 512 bytes, whatever the disk's block size
          (void)parse_unsigned(attr_or_empty("/sys/class/block/" + disk + "/size"), &sectors);
          l.disks.push_back({.name = disk, .bytes = sectors * 512});
        }
    out.push_back(std::move(l));
  }
  return out;
}

Result<void> RealSrp::logout(const std::string& remote_port) {
  return write_attr(std::string(kRemotePortsDir) + "/" + remote_port + "/delete", "1");
}

}  // namespace rxerun::sys
