#pragma once
// NVMe over Fabrics in the model (sys/model/kernel.h): nvmet's configfs
// tree, seen only while configfs is mounted and nvmet loaded, with the
// kernel's refusals (a subsystem with namespaces or allowed hosts, or linked
// by a port, cannot go; a port linking a subsystem cannot go; an enabled
// namespace's device cannot change; a second port on one address cannot
// listen), on sys/model/storage.h's configfs mount and devices; and the
// host's controllers, which a connect makes only when a port listens for
// the subsystem at that address and lets the host in, their namespaces'
// disks registered with the storage model. Each change is logged as the shell command
// a person would type (mkdir, echo into an attribute, ln -s, rmdir).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sys/model/modules.h"
#include "sys/model/storage.h"
#include "sys/nvme.h"

namespace rxerun::sys {

class ModelNvme final : public Nvme {
 public:
  struct Subsystem {
    std::string serial;
    bool allow_any_host = false;
    std::set<std::string> allowed_hosts;
    std::map<unsigned, NvmetNamespace> namespaces;
  };
  // The kernel's default host NQN, for a connect that names none.
  static constexpr const char* kDefaultHostNqn = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001";

  ModelNvme(ModelKernel& k, ModelModules& modules, ModelStorage& storage)
      : k_(k), modules_(modules), storage_(storage) {}

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
  // Enabling opens the device (ModelStorage::opens).
  Result<void> enable_namespace(const std::string& nqn, unsigned nsid, bool enable) override;
  Result<void> remove_namespace(const std::string& nqn, unsigned nsid) override;
  Result<std::vector<NvmetPort>> ports() override;
  Result<void> add_port(const NvmetPort& port) override;
  Result<void> remove_port(unsigned id) override;
  Result<void> link_port(unsigned id, const std::string& nqn) override;
  Result<void> unlink_port(unsigned id, const std::string& nqn) override;
  // ECONNRESET when no port listens for the subsystem there, EIO when it
  // does not allow the host; then `kernel_log` is what the kernel said.
  Result<FabricsConnected> connect(const FabricsOptions& options, std::vector<std::string>* kernel_log) override;
  // A new controller's block devices show after `devices_after` calls.
  Result<std::vector<FabricsController>> controllers() override;
  Result<void> delete_controller(unsigned instance) override;
  std::vector<std::string> kernel_messages(std::uint64_t) override { return kernel_log; }
  std::uint64_t log_clock() override { return 0; }

  std::map<std::string, Subsystem> subsys_dirs;
  std::set<std::string> host_dirs;
  std::map<unsigned, NvmetPort> port_dirs;
  std::map<unsigned, FabricsController> ctrls;
  std::vector<std::string> kernel_log;  // what the kernel logged
  int devices_after = 0;                // controllers() calls before a new one's devices show

 private:
  // ModelKernel::act() under "nvme".
  Result<void> act(const char* op, const std::string& arg, const std::vector<ModelKernel::Refusal>& refusals,
                   const std::function<void()>& change, std::string what, std::string shell) {
    return k_.act("nvme", op, arg, refusals, change, std::move(what), std::move(shell));
  }
  bool nvmet_visible() { return storage_.configfs_mounted() && *modules_.loaded("nvmet"); }
  Subsystem* subsystem(const std::string& nqn);
  NvmetNamespace* namespace_of(const std::string& nqn, unsigned nsid);
  Result<FabricsController> connect_host(const FabricsOptions& o, unsigned instance);

  ModelKernel& k_;
  ModelModules& modules_;
  ModelStorage& storage_;
  std::map<unsigned, int> hidden_;  // instance -> controllers() calls left before its devices show
  std::uint64_t next_serial_ = 0x5eed0001;
  unsigned next_instance_ = 0;
};

}  // namespace rxerun::sys
