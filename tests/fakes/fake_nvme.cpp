#include "fakes/fake_nvme.h"

#include <cerrno>
#include <cstring>

#include "fakes/fake_system.h"

namespace rxerun::fakes {

FakeNvme::FakeNvme(FakeRdma& rdma) : rdma_(rdma) {
  rdma_.modules["configfs"] = {};
  rdma_.modules["nvme_core"] = {};
  rdma_.modules["nvme_fabrics"] = {"nvme_core"};
  rdma_.modules["nvme_rdma"] = {"nvme_fabrics", "nvme_core", "rdma_cm", "iw_cm", "ib_cm", "ib_core"};
  rdma_.modules["nvmet"] = {"configfs", "nvme_core"};
  rdma_.modules["nvmet_rdma"] = {"nvmet", "configfs", "nvme_core", "rdma_cm", "iw_cm", "ib_cm", "ib_core"};
  rdma_.modules["null_blk"] = {"configfs"};
  rdma_.known_parameters["null_blk"] = {{"nr_devices", "1"}, {"gb", "250"}};
}

bool FakeNvme::nvmet_visible() const {
  return configfs_mount_id && rdma_.loaded.count("nvmet");
}

// Logs `entry` and returns the model's answer, or the injected failure
// (then the model's state is as it was: the fake checks `fail` before
// asking the model, see the callers).
Result<void> FakeNvme::act(const std::string& entry, const Result<void>& model_answer) {
  if (model_answer) log.push_back(entry);
  return model_answer;
}

namespace {

// The errno injected for `entry`, or 0.
int injected(std::map<std::string, int>& fail, std::map<std::string, int>& times, const std::string& entry) {
  for (auto& [prefix, code] : fail) {
    if (!entry.starts_with(prefix)) continue;
    auto t = times.find(prefix);
    if (t != times.end()) {
      if (t->second == 0) continue;
      if (t->second > 0) --t->second;
    }
    return code;
  }
  return 0;
}

}  // namespace

#define FAKE_NVME_INJECT(entry)                                                                  \
  do {                                                                                           \
    if (int code = injected(fail, fail_times, (entry)))                                          \
      return make_error(std::string("injected: ") + (entry) + ": " + std::strerror(code), code); \
  } while (0)

Result<std::uint64_t> FakeNvme::mount_configfs() {
  FAKE_NVME_INJECT("mount configfs");
  if (!rdma_.loaded.count("configfs")) return make_error("unknown filesystem type 'configfs'", ENODEV);
  log.push_back("mount configfs");
  return mount();
}

Result<void> FakeNvme::unmount_configfs() {
  FAKE_NVME_INJECT("umount configfs");
  return act("umount configfs", unmount());
}

Result<std::vector<sys::NvmetSubsystem>> FakeNvme::subsystems() {
  if (!nvmet_visible()) return std::vector<sys::NvmetSubsystem>{};
  return subsystem_list();
}

Result<void> FakeNvme::add_subsystem(const std::string& nqn) {
  const std::string entry = "mkdir subsystem " + nqn;
  FAKE_NVME_INJECT(entry);
  if (!nvmet_visible()) return make_error("no nvmet tree", ENOENT);
  return act(entry, mkdir_subsystem(nqn));
}

Result<void> FakeNvme::remove_subsystem(const std::string& nqn) {
  const std::string entry = "rmdir subsystem " + nqn;
  FAKE_NVME_INJECT(entry);
  return act(entry, rmdir_subsystem(nqn));
}

Result<void> FakeNvme::set_allow_any_host(const std::string& nqn, bool allow) {
  const std::string entry = "allow_any_host " + nqn + (allow ? " 1" : " 0");
  FAKE_NVME_INJECT(entry);
  return act(entry, write_allow_any_host(nqn, allow));
}

Result<std::vector<std::string>> FakeNvme::hosts() {
  if (!nvmet_visible()) return std::vector<std::string>{};
  return std::vector<std::string>(host_dirs.begin(), host_dirs.end());
}

Result<void> FakeNvme::add_host(const std::string& hostnqn) {
  const std::string entry = "mkdir host " + hostnqn;
  FAKE_NVME_INJECT(entry);
  return act(entry, mkdir_host(hostnqn));
}

Result<void> FakeNvme::remove_host(const std::string& hostnqn) {
  const std::string entry = "rmdir host " + hostnqn;
  FAKE_NVME_INJECT(entry);
  return act(entry, rmdir_host(hostnqn));
}

Result<void> FakeNvme::allow_host(const std::string& nqn, const std::string& hostnqn) {
  const std::string entry = "link allowed_host " + nqn + " " + hostnqn;
  FAKE_NVME_INJECT(entry);
  return act(entry, link_allowed_host(nqn, hostnqn));
}

Result<void> FakeNvme::disallow_host(const std::string& nqn, const std::string& hostnqn) {
  const std::string entry = "unlink allowed_host " + nqn + " " + hostnqn;
  FAKE_NVME_INJECT(entry);
  return act(entry, unlink_allowed_host(nqn, hostnqn));
}

Result<void> FakeNvme::add_namespace(const std::string& nqn, unsigned nsid) {
  const std::string entry = "mkdir namespace " + nqn + " " + std::to_string(nsid);
  FAKE_NVME_INJECT(entry);
  return act(entry, mkdir_namespace(nqn, nsid));
}

Result<void> FakeNvme::set_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path,
                                            bool buffered_io) {
  const std::string entry =
      "device " + nqn + " " + std::to_string(nsid) + " " + path + (buffered_io ? " buffered" : "");
  FAKE_NVME_INJECT(entry);
  return act(entry, write_namespace_device(nqn, nsid, path, buffered_io));
}

Result<void> FakeNvme::enable_namespace(const std::string& nqn, unsigned nsid, bool enable) {
  const std::string entry = std::string(enable ? "enable " : "disable ") + nqn + " " + std::to_string(nsid);
  FAKE_NVME_INJECT(entry);
  return act(entry, write_namespace_enable(nqn, nsid, enable));
}

Result<void> FakeNvme::remove_namespace(const std::string& nqn, unsigned nsid) {
  const std::string entry = "rmdir namespace " + nqn + " " + std::to_string(nsid);
  FAKE_NVME_INJECT(entry);
  return act(entry, rmdir_namespace(nqn, nsid));
}

Result<std::vector<sys::NvmetPort>> FakeNvme::ports() {
  if (!nvmet_visible()) return std::vector<sys::NvmetPort>{};
  return port_list();
}

Result<void> FakeNvme::add_port(const sys::NvmetPort& port) {
  const std::string entry =
      "mkdir port " + std::to_string(port.id) + " " + port.trtype + " " + port.traddr + ":" + port.trsvcid;
  FAKE_NVME_INJECT(entry);
  if (!nvmet_visible()) return make_error("no nvmet tree", ENOENT);
  return act(entry, mkdir_port(port));
}

Result<void> FakeNvme::remove_port(unsigned id) {
  const std::string entry = "rmdir port " + std::to_string(id);
  FAKE_NVME_INJECT(entry);
  return act(entry, rmdir_port(id));
}

Result<void> FakeNvme::link_port(unsigned id, const std::string& nqn) {
  const std::string entry = "link port " + std::to_string(id) + " " + nqn;
  FAKE_NVME_INJECT(entry);
  return act(entry, link_port_subsystem(id, nqn));
}

Result<void> FakeNvme::unlink_port(unsigned id, const std::string& nqn) {
  const std::string entry = "unlink port " + std::to_string(id) + " " + nqn;
  FAKE_NVME_INJECT(entry);
  return act(entry, unlink_port_subsystem(id, nqn));
}

Result<std::vector<sys::NullBlk>> FakeNvme::null_blks() {
  if (!configfs_mount_id || !rdma_.loaded.count("null_blk")) return std::vector<sys::NullBlk>{};
  return null_blk_list();
}

Result<void> FakeNvme::add_null_blk(const std::string& name, std::uint64_t size_mib) {
  const std::string entry = "mkdir nullb " + name + " " + std::to_string(size_mib) + "MiB";
  FAKE_NVME_INJECT(entry);
  if (!configfs_mount_id || !rdma_.loaded.count("null_blk")) return make_error("no nullb tree", ENOENT);
  return act(entry, mkdir_null_blk(name, size_mib));
}

Result<void> FakeNvme::remove_null_blk(const std::string& name) {
  const std::string entry = "rmdir nullb " + name;
  FAKE_NVME_INJECT(entry);
  return act(entry, rmdir_null_blk(name));
}

Result<std::optional<sys::FileId>> FakeNvme::file_id(const std::string& path) {
  auto it = files.find(path);
  if (it == files.end()) return std::optional<sys::FileId>();
  return std::optional<sys::FileId>(it->second);
}

Result<sys::FileId> FakeNvme::create_file(const std::string& path, std::uint64_t size) {
  const std::string entry = "create " + path + " " + std::to_string(size);
  FAKE_NVME_INJECT(entry);
  auto made = make_file(path, size);
  if (made) log.push_back(entry);
  return made;
}

Result<void> FakeNvme::remove_file(const std::string& path) {
  const std::string entry = "remove " + path;
  FAKE_NVME_INJECT(entry);
  return act(entry, unlink_file(path));
}

Result<std::string> FakeNvme::file_system(const std::string& path) {
  for (const auto& [prefix, fs] : file_systems)
    if (path.starts_with(prefix)) return fs;
  return std::string("tmpfs");
}

Result<sys::FabricsConnected> FakeNvme::connect(const sys::FabricsOptions& options,
                                                std::vector<std::string>* kernel_lines) {
  const std::string entry = "connect " + sys::fabrics_options_line(options);
  FAKE_NVME_INJECT(entry);
  if (!rdma_.loaded.count("nvme_fabrics")) return make_error("cannot open /dev/nvme-fabrics", ENOENT);
  if (options.transport == "rdma" && !rdma_.loaded.count("nvme_rdma")) return make_error("no transport rdma", EINVAL);
  auto c = connect_host(options);
  if (!c) {
    if (kernel_lines) *kernel_lines = kernel_log;
    return make_error("the kernel refused the connect: " + std::string(std::strerror(c.error().code)), c.error().code);
  }
  log.push_back(entry);
  if (devices_after > 0) hidden_[c->instance] = devices_after;
  return c;
}

Result<std::vector<sys::FabricsController>> FakeNvme::controllers() {
  auto list = controller_list();
  for (auto& c : list) {
    auto it = hidden_.find(c.instance);
    if (it == hidden_.end()) continue;
    c.block_devices.clear();
    if (--it->second <= 0) hidden_.erase(it);
  }
  return list;
}

Result<void> FakeNvme::delete_controller(unsigned instance) {
  const std::string entry = "delete nvme" + std::to_string(instance);
  FAKE_NVME_INJECT(entry);
  return act(entry, remove_controller(instance));
}

Result<bool> FakeNvme::block_device(const std::string& name) {
  for (const auto& [item, b] : nullb_dirs)
    if (b.powered && b.disk == "/dev/" + name) return true;
  for (const auto& [i, c] : ctrls)
    for (const auto& d : c.block_devices)
      if (d == name) return true;
  return false;
}

}  // namespace rxerun::fakes
