#pragma once
// NVMe over Fabrics for step tests: the state of sys::NvmeModel (nvmet's
// configfs tree, null_blk items, files, controllers), open to the test,
// visible the way the kernel shows it (nvmet's tree only with configfs
// mounted and nvmet loaded in FakeRdma's modules, /dev/nvme-fabrics only
// with nvme_fabrics loaded), with a log of every change and failures to
// inject.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sys/model/nvme.h"
#include "sys/nvme.h"

namespace rxerun::fakes {

class FakeRdma;

class FakeNvme final : public sys::Nvme, public sys::NvmeModel {
 public:
  // Adds the NVMe modules (nvmet, nvmet_rdma, nvme_rdma, null_blk, ...) to
  // the kernel's modules of `rdma`.
  explicit FakeNvme(FakeRdma& rdma);

  Result<std::optional<std::uint64_t>> configfs_mount() override { return configfs_mount_id; }
  Result<std::uint64_t> mount_configfs() override;
  Result<void> unmount_configfs() override;
  Result<std::vector<sys::NvmetSubsystem>> subsystems() override;
  Result<void> add_subsystem(const std::string& nqn) override;
  Result<void> remove_subsystem(const std::string& nqn) override;
  Result<void> set_allow_any_host(const std::string& nqn, bool allow) override;
  Result<std::vector<std::string>> hosts() override;
  Result<void> add_host(const std::string& hostnqn) override;
  Result<void> remove_host(const std::string& hostnqn) override;
  Result<void> allow_host(const std::string& nqn, const std::string& hostnqn) override;
  Result<void> disallow_host(const std::string& nqn, const std::string& hostnqn) override;
  Result<void> add_namespace(const std::string& nqn, unsigned nsid) override;
  Result<void> set_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path,
                                    bool buffered_io) override;
  Result<void> enable_namespace(const std::string& nqn, unsigned nsid, bool enable) override;
  Result<void> remove_namespace(const std::string& nqn, unsigned nsid) override;
  Result<std::vector<sys::NvmetPort>> ports() override;
  Result<void> add_port(const sys::NvmetPort& port) override;
  Result<void> remove_port(unsigned id) override;
  Result<void> link_port(unsigned id, const std::string& nqn) override;
  Result<void> unlink_port(unsigned id, const std::string& nqn) override;
  Result<std::vector<sys::NullBlk>> null_blks() override;
  Result<void> add_null_blk(const std::string& name, std::uint64_t size_mib) override;
  Result<void> remove_null_blk(const std::string& name) override;
  Result<std::optional<sys::FileId>> file_id(const std::string& path) override;
  Result<sys::FileId> create_file(const std::string& path, std::uint64_t size) override;
  Result<void> remove_file(const std::string& path) override;
  Result<std::string> file_system(const std::string& path) override;
  Result<sys::FabricsConnected> connect(const sys::FabricsOptions& options,
                                        std::vector<std::string>* kernel_log) override;
  Result<std::vector<sys::FabricsController>> controllers() override;
  Result<void> delete_controller(unsigned instance) override;
  Result<bool> block_device(const std::string& name) override;
  std::vector<std::string> kernel_messages(std::uint64_t) override { return kernel_log; }
  std::uint64_t log_clock() override { return 0; }

  // Every change, in order: "mount configfs", "mkdir subsystem NQN",
  // "allow_any_host NQN 1", "mkdir namespace NQN 1", "device NQN 1 PATH",
  // "enable NQN 1", "mkdir port 1 rdma 10.0.0.1:4420", "link port 1 NQN",
  // "connect nqn=...", "delete nvme0", ...
  std::vector<std::string> log;
  // A change whose log entry starts with a key fails with its errno, once
  // per entry (a count below 0: always).
  std::map<std::string, int> fail;
  std::map<std::string, int> fail_times;
  // What the kernel logged, as kernel_messages() and a failing connect report it.
  std::vector<std::string> kernel_log;
  // controllers() calls before a new controller's block devices show (the
  // kernel scans its namespaces after the connect returned).
  int devices_after = 0;
  // The file system of paths under a prefix: {"/tmp/", "overlayfs"}; else "tmpfs".
  std::map<std::string, std::string> file_systems;

 private:
  Result<void> act(const std::string& entry, const Result<void>& model_answer);
  bool nvmet_visible() const;
  FakeRdma& rdma_;
  std::map<unsigned, int> hidden_;  // instance -> controllers() calls left before its devices show
};

}  // namespace rxerun::fakes
