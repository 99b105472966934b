#pragma once
// NVMe over Fabrics for `rxerun plan` (sys/recording/system.h): each
// configfs change is noted as the shell command a person would type (mkdir,
// echo into an attribute, ln -s, rmdir), the connect as the write to
// /dev/nvme-fabrics, and the plan's own target, null_blk devices, files and
// controllers are kept in sys/model/nvme.h so that later steps find them.
// configfs is mounted when the host has it mounted (or the plan mounted it);
// the host's files count as there.

#include "sys/model/nvme.h"
#include "sys/nvme.h"

namespace rxerun::sys {

class ActionLog;

class RecordingNvme final : public Nvme {
 public:
  explicit RecordingNvme(ActionLog& log);
  Result<std::optional<std::uint64_t>> configfs_mount() override;
  Result<std::uint64_t> mount_configfs() override;
  Result<void> unmount_configfs() override;
  Result<std::vector<NvmetSubsystem>> subsystems() override { return model_.subsystem_list(); }
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
  Result<std::vector<NvmetPort>> ports() override { return model_.port_list(); }
  Result<void> add_port(const NvmetPort& port) override;
  Result<void> remove_port(unsigned id) override;
  Result<void> link_port(unsigned id, const std::string& nqn) override;
  Result<void> unlink_port(unsigned id, const std::string& nqn) override;
  Result<std::vector<NullBlk>> null_blks() override { return model_.null_blk_list(); }
  Result<void> add_null_blk(const std::string& name, std::uint64_t size_mib) override;
  Result<void> remove_null_blk(const std::string& name) override;
  Result<std::optional<FileId>> file_id(const std::string& path) override;
  Result<FileId> create_file(const std::string& path, std::uint64_t size) override;
  Result<void> remove_file(const std::string& path) override;
  Result<std::string> file_system(const std::string&) override { return std::string(); }
  Result<FabricsConnected> connect(const FabricsOptions& options, std::vector<std::string>* kernel_log) override;
  Result<std::vector<FabricsController>> controllers() override { return model_.controller_list(); }
  Result<void> delete_controller(unsigned instance) override;
  Result<bool> block_device(const std::string&) override { return true; }
  std::vector<std::string> kernel_messages(std::uint64_t) override { return {}; }
  std::uint64_t log_clock() override { return 0; }

 private:
  ActionLog& log_;
  NvmeModel model_;
};

}  // namespace rxerun::sys
