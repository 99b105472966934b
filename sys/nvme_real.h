#pragma once
// NVMe over Fabrics on the real kernel (sys/nvme.h): configfs directories,
// attributes and symbolic links made with mkdir(2), write(2) and
// symlink(2); the fabrics connect as one write to /dev/nvme-fabrics and
// one read of its answer; controllers from /sys/class/nvme. Every refusal
// comes back with the kernel's errno.

#include "sys/nvme.h"

namespace rxerun::sys {

class RealNvme final : public Nvme {
 public:
  Result<std::vector<NvmetSubsystem>> subsystems() override;
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
  Result<std::vector<NvmetPort>> ports() override;
  Result<void> add_port(const NvmetPort& port) override;
  Result<void> remove_port(unsigned id) override;
  Result<void> link_port(unsigned id, const std::string& nqn) override;
  Result<void> unlink_port(unsigned id, const std::string& nqn) override;
  Result<FabricsConnected> connect(const FabricsOptions& options, std::vector<std::string>* kernel_log) override;
  Result<std::vector<FabricsController>> controllers() override;
  Result<void> delete_controller(unsigned instance) override;
  std::vector<std::string> kernel_messages(std::uint64_t since) override;
  std::uint64_t log_clock() override;
};

}  // namespace rxerun::sys
