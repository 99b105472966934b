#include "sys/recording/nvme.h"

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

namespace {

// `echo VALUE > FILE`, as a person writes an attribute.
std::string echo_into_attr(const std::string& value, const std::string& file) {
  return "echo " + shell_quote(value) + " > " + shell_quote(file);
}

bool plan_host_has(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace

RecordingNvme::RecordingNvme(ActionLog& log) : log_(log) {
  model_.exists = plan_host_has;
}

Result<std::optional<std::uint64_t>> RecordingNvme::configfs_mount() {
  if (model_.configfs_mount_id) return model_.configfs_mount_id;
  // The host's mount table (reading it changes nothing): a plan shows the
  // mount where the run would make it.
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.find(std::string(" ") + kConfigfsPath + " ") != std::string::npos &&
        line.find(" - configfs ") != std::string::npos)
      return std::optional<std::uint64_t>(1);
  return std::optional<std::uint64_t>();
}

Result<std::uint64_t> RecordingNvme::mount_configfs() {
  log_.record_anywhere("mount configfs on " + std::string(kConfigfsPath),
                       shell_join({"mount", "-t", "configfs", "none", kConfigfsPath}));
  return model_.mount();
}

Result<void> RecordingNvme::unmount_configfs() {
  log_.record_anywhere("unmount configfs from " + std::string(kConfigfsPath), shell_join({"umount", kConfigfsPath}));
  model_.configfs_mount_id.reset();
  return {};
}

Result<void> RecordingNvme::add_subsystem(const std::string& nqn) {
  if (auto r = model_.mkdir_subsystem(nqn); refused(r)) return r;
  log_.record_anywhere("create NVMe target subsystem " + nqn, shell_join({"mkdir", nvmet_subsystem_dir(nqn)}));
  return {};
}

Result<void> RecordingNvme::remove_subsystem(const std::string& nqn) {
  if (auto r = model_.rmdir_subsystem(nqn); refused(r)) return r;
  log_.record_anywhere("remove NVMe target subsystem " + nqn, shell_join({"rmdir", nvmet_subsystem_dir(nqn)}));
  return {};
}

Result<void> RecordingNvme::set_allow_any_host(const std::string& nqn, bool allow) {
  if (auto r = model_.write_allow_any_host(nqn, allow); refused(r)) return r;
  log_.record_anywhere(std::string(allow ? "allow any host in " : "allow only listed hosts in ") + nqn,
                       echo_into_attr(allow ? "1" : "0", nvmet_subsystem_dir(nqn) + "/attr_allow_any_host"));
  return {};
}

Result<std::vector<std::string>> RecordingNvme::hosts() {
  return std::vector<std::string>(model_.host_dirs.begin(), model_.host_dirs.end());
}

Result<void> RecordingNvme::add_host(const std::string& hostnqn) {
  if (auto r = model_.mkdir_host(hostnqn); refused(r)) return r;
  log_.record_anywhere("create NVMe target host " + hostnqn, shell_join({"mkdir", nvmet_host_dir(hostnqn)}));
  return {};
}

Result<void> RecordingNvme::remove_host(const std::string& hostnqn) {
  if (auto r = model_.rmdir_host(hostnqn); refused(r)) return r;
  log_.record_anywhere("remove NVMe target host " + hostnqn, shell_join({"rmdir", nvmet_host_dir(hostnqn)}));
  return {};
}

Result<void> RecordingNvme::allow_host(const std::string& nqn, const std::string& hostnqn) {
  if (auto r = model_.link_allowed_host(nqn, hostnqn); refused(r)) return r;
  log_.record_anywhere(
      "allow host " + hostnqn + " in " + nqn,
      shell_join({"ln", "-s", nvmet_host_dir(hostnqn), nvmet_subsystem_dir(nqn) + "/allowed_hosts/" + hostnqn}));
  return {};
}

Result<void> RecordingNvme::disallow_host(const std::string& nqn, const std::string& hostnqn) {
  if (auto r = model_.unlink_allowed_host(nqn, hostnqn); refused(r)) return r;
  log_.record_anywhere("stop allowing host " + hostnqn + " in " + nqn,
                       shell_join({"rm", nvmet_subsystem_dir(nqn) + "/allowed_hosts/" + hostnqn}));
  return {};
}

Result<void> RecordingNvme::add_namespace(const std::string& nqn, unsigned nsid) {
  if (auto r = model_.mkdir_namespace(nqn, nsid); refused(r)) return r;
  log_.record_anywhere("create namespace " + std::to_string(nsid) + " of " + nqn,
                       shell_join({"mkdir", nvmet_namespace_dir(nqn, nsid)}));
  return {};
}

Result<void> RecordingNvme::set_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path,
                                                 bool buffered_io) {
  if (auto r = model_.write_namespace_device(nqn, nsid, path, buffered_io); refused(r)) return r;
  log_.record_anywhere("back namespace " + std::to_string(nsid) + " of " + nqn + " by " + path,
                       echo_into_attr(path, nvmet_namespace_dir(nqn, nsid) + "/device_path"));
  if (buffered_io)
    log_.record_anywhere("read and write it through the page cache",
                         echo_into_attr("1", nvmet_namespace_dir(nqn, nsid) + "/buffered_io"));
  return {};
}

Result<void> RecordingNvme::enable_namespace(const std::string& nqn, unsigned nsid, bool enable) {
  if (auto r = model_.write_namespace_enable(nqn, nsid, enable); refused(r)) return r;
  log_.record_anywhere(std::string(enable ? "enable" : "disable") + " namespace " + std::to_string(nsid) + " of " + nqn,
                       echo_into_attr(enable ? "1" : "0", nvmet_namespace_dir(nqn, nsid) + "/enable"));
  return {};
}

Result<void> RecordingNvme::remove_namespace(const std::string& nqn, unsigned nsid) {
  if (auto r = model_.rmdir_namespace(nqn, nsid); refused(r)) return r;
  log_.record_anywhere("remove namespace " + std::to_string(nsid) + " of " + nqn,
                       shell_join({"rmdir", nvmet_namespace_dir(nqn, nsid)}));
  return {};
}

Result<void> RecordingNvme::add_port(const NvmetPort& port) {
  if (auto r = model_.mkdir_port(port); refused(r)) return r;
  const std::string dir = nvmet_port_dir(port.id);
  log_.record_anywhere("create NVMe target port " + std::to_string(port.id), shell_join({"mkdir", dir}));
  log_.record_anywhere("set its address: " + port.trtype + " " + port.traddr + ":" + port.trsvcid,
                       echo_into_attr(port.trtype, dir + "/addr_trtype") + "; " +
                           echo_into_attr(port.adrfam, dir + "/addr_adrfam") + "; " +
                           echo_into_attr(port.traddr, dir + "/addr_traddr") + "; " +
                           echo_into_attr(port.trsvcid, dir + "/addr_trsvcid"));
  return {};
}

Result<void> RecordingNvme::remove_port(unsigned id) {
  if (auto r = model_.rmdir_port(id); refused(r)) return r;
  log_.record_anywhere("remove NVMe target port " + std::to_string(id), shell_join({"rmdir", nvmet_port_dir(id)}));
  return {};
}

Result<void> RecordingNvme::link_port(unsigned id, const std::string& nqn) {
  if (auto r = model_.link_port_subsystem(id, nqn); refused(r)) return r;
  log_.record_anywhere("offer " + nqn + " on port " + std::to_string(id) + " (the port listens)",
                       shell_join({"ln", "-s", nvmet_subsystem_dir(nqn), nvmet_port_dir(id) + "/subsystems/" + nqn}));
  return {};
}

Result<void> RecordingNvme::unlink_port(unsigned id, const std::string& nqn) {
  if (auto r = model_.unlink_port_subsystem(id, nqn); refused(r)) return r;
  log_.record_anywhere("withdraw " + nqn + " from port " + std::to_string(id),
                       shell_join({"rm", nvmet_port_dir(id) + "/subsystems/" + nqn}));
  return {};
}

Result<void> RecordingNvme::add_null_blk(const std::string& name, std::uint64_t size_mib) {
  if (auto r = model_.mkdir_null_blk(name, size_mib); refused(r)) return r;
  const std::string dir = null_blk_dir(name);
  log_.record_anywhere("create null_blk device " + name + " of " + std::to_string(size_mib) + " MiB, memory-backed",
                       shell_join({"mkdir", dir}) + "; " + echo_into_attr(std::to_string(size_mib), dir + "/size") +
                           "; " + echo_into_attr("1", dir + "/memory_backed") + "; " +
                           echo_into_attr("1", dir + "/power"));
  return {};
}

Result<void> RecordingNvme::remove_null_blk(const std::string& name) {
  if (auto r = model_.rmdir_null_blk(name); refused(r)) return r;
  const std::string dir = null_blk_dir(name);
  log_.record_anywhere("remove null_blk device " + name,
                       echo_into_attr("0", dir + "/power") + "; " + shell_join({"rmdir", dir}));
  return {};
}

Result<std::optional<FileId>> RecordingNvme::file_id(const std::string& path) {
  if (auto it = model_.files.find(path); it != model_.files.end()) return std::optional<FileId>(it->second);
  if (plan_host_has(path)) return std::optional<FileId>(FileId{});
  return std::optional<FileId>();
}

Result<FileId> RecordingNvme::create_file(const std::string& path, std::uint64_t size) {
  auto made = model_.make_file(path, size);
  if (!made) return made.error();
  log_.record_anywhere("create " + path + " (" + std::to_string(size) + " bytes, sparse)",
                       shell_join({"truncate", "-s", std::to_string(size), path}));
  // Zeros: known only at run time (the plan's undo then checks nothing).
  return FileId{};
}

Result<void> RecordingNvme::remove_file(const std::string& path) {
  (void)model_.unlink_file(path);
  log_.record_anywhere("remove " + path, shell_join({"rm", path}));
  return {};
}

Result<FabricsConnected> RecordingNvme::connect(const FabricsOptions& options, std::vector<std::string>*) {
  log_.record_anywhere("connect to NVMe subsystem " + options.nqn + " over " + options.transport + " at " +
                           options.traddr + ":" + options.trsvcid,
                       echo_into_attr(fabrics_options_line(options), "/dev/nvme-fabrics"));
  auto c = model_.connect_host(options);
  if (c) return c;
  // A target the plan did not make may well be there at run time.
  const unsigned instance = model_.ctrls.empty() ? 0 : model_.ctrls.rbegin()->first + 1;
  model_.ctrls[instance] = FabricsController{.instance = instance,
                                             .transport = options.transport,
                                             .traddr = options.traddr,
                                             .trsvcid = options.trsvcid,
                                             .subsysnqn = options.nqn,
                                             .cntlid = 1,
                                             .state = "live",
                                             .block_devices = {"nvme" + std::to_string(instance) + "n1"}};
  return FabricsConnected{instance, 1};
}

Result<void> RecordingNvme::delete_controller(unsigned instance) {
  (void)model_.remove_controller(instance);
  const std::string name = "nvme" + std::to_string(instance);
  log_.record_anywhere("disconnect NVMe controller " + name,
                       echo_into_attr("1", "/sys/class/nvme/" + name + "/delete_controller"));
  return {};
}

}  // namespace rxerun::sys
