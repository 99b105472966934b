#pragma once
// NFS in the model (sys/model/kernel.h): nfsd of each network namespace
// (reached where its filesystem is mounted: versions settable only while it
// is stopped, an RDMA listener only with rpcrdma, stopping it, or
// unmounting the last mount of its filesystem, empties its export caches), the export caches of each namespace, and the
// mount namespace's mounts and directories. An NFS mount succeeds only when nfsd runs in some namespace with a listener
// for the mount's transport and port, and a client of it (an address of the mounter's namespace) is in a domain whose
// NFSv4 root is exported; else the kernel's errno (ECONNREFUSED: nobody listens there; EACCES: no export for the
// client). Each change is logged as the command a person would type.

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sys/model/kernel.h"
#include "sys/model/links.h"
#include "sys/model/modules.h"
#include "sys/nfs.h"

namespace rxerun::sys {

class ModelNfs final : public Nfs {
 public:
  ModelNfs(ModelKernel& k, ModelModules& modules, ModelLinks& links) : k_(k), modules_(modules), links_(links) {}

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
  // A mount in `unanswered` has its client shut down first (when the
  // kernel has `client_shutdown`); `patience` is not waited out.
  Result<bool> unmount_nfs(const std::string& target, Duration patience) override;
  Result<void> make_dir(const std::string& path) override;
  Result<void> remove_dir(const std::string& path) override;
  Result<void> remove_records_dir(const std::string& path) override;
  Result<bool> is_dir(const std::string& path) override;

  // One namespace's nfsd and caches ("" is rxerun's own namespace).
  struct Namespace {
    NfsdState nfsd{.threads = 0, .versions = "+3 +4 +4.1 +4.2", .listeners = {}};
    std::string recovery_dir = "/var/lib/nfs/v4recovery";  // a 6.1 kernel's
    unsigned grace_time = 90;
    std::map<std::string, std::string> clients;                       // address -> domain
    std::map<std::pair<std::string, std::string>, unsigned> exports;  // (domain, path) -> flags
  };
  std::map<std::string, Namespace> namespaces;
  std::vector<MountEntry> mount_table;
  std::map<std::string, std::string> nfsd_mounts;  // where nfsd's filesystem is mounted -> its namespace
  std::set<std::string> dirs;
  std::set<std::string> unanswered;  // NFS mount points whose server no longer answers
  bool client_shutdown = true;       // the kernel has /sys/fs/nfs/DEVICE/shutdown (7.3; 6.1 has not)

 private:
  Namespace& here() { return namespaces[k_.netns]; }
  // The namespace of the nfsd filesystem mounted on `ctl`; null when none is.
  Namespace* of(const std::string& ctl);
  static void stop(Namespace& ns);
  std::string in_netns(const std::string& shell) const;
  ModelKernel& k_;
  ModelModules& modules_;
  ModelLinks& links_;
  std::uint64_t next_mount_id_ = 100;
};

}  // namespace rxerun::sys
