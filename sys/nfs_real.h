#pragma once
// NFS on the real kernel (sys/nfs.h): nfsd's control files where its
// filesystem is mounted, the export caches through /proc/thread-self/net/rpc, mount(2)
// and umount2(2), /proc/self/mountinfo. Every refusal comes back with the
// kernel's errno.

#include "sys/nfs.h"

namespace rxerun::sys {

class RealNfs final : public Nfs {
 public:
  Result<NfsdState> nfsd(const std::string& ctl) override;
  Result<void> set_versions(const std::string& ctl, const std::string& versions) override;
  Result<void> add_listener(const std::string& ctl, const std::string& transport, unsigned port) override;
  Result<void> set_threads(const std::string& ctl, unsigned threads) override;
  Result<std::optional<std::string>> recovery_dir(const std::string& ctl) override;
  Result<void> set_recovery_dir(const std::string& ctl, const std::string& dir) override;
  Result<bool> end_grace(const std::string& ctl) override;
  Result<unsigned> grace_time(const std::string& ctl) override;
  Result<void> set_grace_time(const std::string& ctl, unsigned seconds) override;
  Result<std::vector<NfsExport>> exports() override;
  Result<std::vector<NfsClient>> clients() override;
  Result<void> add_client(const NfsClient& client) override;
  Result<void> add_export(const std::string& domain, const std::string& path, unsigned flags) override;
  Result<void> remove_export(const std::string& domain, const std::string& path) override;
  Result<void> remove_client(const std::string& address) override;
  Result<std::vector<MountEntry>> mounts() override;
  Result<void> mount(const std::string& source, const std::string& target, const std::string& fstype,
                     const std::string& options) override;
  Result<void> unmount(const std::string& target) override;
  Result<bool> unmount_nfs(const std::string& target, Duration patience) override;
  Result<void> make_dir(const std::string& path) override;
  Result<void> remove_dir(const std::string& path) override;
  Result<void> remove_records_dir(const std::string& path) override;
  Result<bool> is_dir(const std::string& path) override;
};

}  // namespace rxerun::sys
