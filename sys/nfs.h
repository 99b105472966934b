#pragma once
// NFS over RDMA, natively (never rpc.nfsd, exportfs, rpc.mountd or
// mount.nfs):
// - the server: nfsd of a network namespace, through its control
//   filesystem ("nfsd"), which mount(2) ties to the namespace of the
//   caller: its NFS versions, its listeners (portlist: "rdma 20049") and its
//   threads, which start and stop it. The kernel stops nfsd when the last
//   mount of that filesystem goes, so it stays mounted while nfsd serves;
// - the exports: the kernel's export caches of that namespace
//   (/proc/net/rpc/*/channel), filled as rpc.mountd fills them but ahead of
//   any request: a client address into a domain (auth.unix.ip), the NFSv4
//   root of the domain (fsid 0, nfsd.fh) and its export with its options
//   (nfsd.export); an entry is taken back by writing it again expired;
// - the client: mount(2) of "nfs4" with the options as text, in the
//   caller's mount namespace and (for the connection) network namespace;
//   the mounts as /proc/self/mountinfo shows them.
// docs/kernel-notes.md, "NFS over RDMA", says why and what each kernel does.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/result.h"
#include "sys/mountinfo.h"

namespace rxerun::sys {

// nfsd of one network namespace. Not running: no threads and no listener.
struct NfsdState {
  unsigned threads = 0;
  std::string versions;                // as the kernel shows them: "-3 +4 +4.1 +4.2"
  std::vector<std::string> listeners;  // portlist's lines: "rdma 20049" (one per address family)
  bool grace_ended = false;            // v4_end_grace: "Y"
  bool running() const { return threads > 0 || !listeners.empty(); }
};

// An export in the kernel's cache: a directory for a domain of clients.
struct NfsExport {
  std::string domain;  // "rxerun-1534e4e7d"
  std::string path;
  std::string options;  // as the kernel shows them: "rw,insecure,no_root_squash,sync,no_wdelay,no_subtree_check,fsid=0"
};

// A client address and the domain it belongs to (auth.unix.ip).
struct NfsClient {
  std::string address;
  std::string domain;
};

// The export flags of the kernel (nfsd's export.h) that an export's options
// set, by name; fsid= is separate.
struct NfsExportFlag {
  const char* set;    // "ro", "root_squash", ...
  const char* unset;  // "rw", "no_root_squash", ...; "" when the kernel shows nothing
  unsigned bit;
};
extern const std::vector<NfsExportFlag> kNfsExportFlags;  // in the order the kernel shows them
constexpr unsigned kNfsExportFsid = 0x2000;               // NFSEXP_FSID: fsid= given
// The options the kernel shows for `flags` with fsid 0 ("rw,...,fsid=0").
std::string nfs_export_options(unsigned flags);
// One option of a mount's or an export's options text: "proto" of
// "rw,vers=4.2,proto=rdma" is "rdma"; "" when absent, "" too for a flag.
std::string option_value(const std::string& options, const std::string& key);
// The switch that fails every RPC of the NFS client of a mount whose
// filesystem is `device` ("0:39", as in mountinfo): /sys/fs/nfs/0:39/shutdown.
std::string nfs_shutdown_file(const std::string& device);

class Nfs {
 public:
  virtual ~Nfs() = default;

  // --- nfsd of the namespace whose control filesystem is mounted on `ctl`
  // (mount("nfsd", ctl, "nfsd", "")). ENOENT when nothing is there.
  virtual Result<NfsdState> nfsd(const std::string& ctl) = 0;
  // "-2 -3 +4 +4.1 +4.2": EBUSY while nfsd runs.
  virtual Result<void> set_versions(const std::string& ctl, const std::string& versions) = 0;
  // A listener: "rdma", 20049. EPROTONOSUPPORT without the transport's
  // module (rpcrdma), EADDRINUSE when the port is taken.
  virtual Result<void> add_listener(const std::string& ctl, const std::string& transport, unsigned port) = 0;
  // Starts nfsd (with its listeners) or, with 0, stops it: its threads and
  // listeners go, and the kernel empties the export caches.
  virtual Result<void> set_threads(const std::string& ctl, unsigned threads) = 0;
  // Where nfsd keeps its NFSv4 clients' records (nfsv4recoverydir), on a
  // kernel that tracks them there (6.1; 7.3 has no such tracking): nullopt
  // on one that does not. EBUSY while nfsd runs.
  virtual Result<std::optional<std::string>> recovery_dir(const std::string& ctl) = 0;
  virtual Result<void> set_recovery_dir(const std::string& ctl, const std::string& dir) = 0;
  // Ends the NFSv4 grace period now (v4_end_grace): false when the kernel
  // will not (EBUSY: it does not track clients, or it ended already).
  virtual Result<bool> end_grace(const std::string& ctl) = 0;
  // The grace period's length in seconds (nfsv4gracetime; 10 to 3600):
  // EBUSY while nfsd runs.
  virtual Result<unsigned> grace_time(const std::string& ctl) = 0;
  virtual Result<void> set_grace_time(const std::string& ctl, unsigned seconds) = 0;

  // --- the export caches of the caller's network namespace (empty while
  // sunrpc is not loaded). Entries that expired are not listed.
  virtual Result<std::vector<NfsExport>> exports() = 0;
  virtual Result<std::vector<NfsClient>> clients() = 0;
  // The address into the domain (until the year 2038, as rpc.mountd never does).
  virtual Result<void> add_client(const NfsClient& client) = 0;
  // `path` as the domain's NFSv4 root (fsid 0) with `flags`
  // (kNfsExportFsid among them). EINVAL when the kernel cannot export the
  // filesystem, ENOENT when the domain has no client.
  virtual Result<void> add_export(const std::string& domain, const std::string& path, unsigned flags) = 0;
  // The entries written again expired.
  virtual Result<void> remove_export(const std::string& domain, const std::string& path) = 0;
  virtual Result<void> remove_client(const std::string& address) = 0;

  // --- mounts, in the caller's mount namespace.
  virtual Result<std::vector<MountEntry>> mounts() = 0;
  // mount(2), in the caller's network namespace for "nfs4" and "nfsd": the
  // kernel's errno when it refuses (an NFS mount that reaches nobody:
  // ECONNREFUSED, EIO, ETIMEDOUT).
  virtual Result<void> mount(const std::string& source, const std::string& target, const std::string& fstype,
                             const std::string& options) = 0;
  // EBUSY while in use. The last mount of a namespace's nfsd filesystem
  // going stops its nfsd.
  virtual Result<void> unmount(const std::string& target) = 0;
  // An NFS mount's unmount. One whose server no longer answers would wait
  // out its RPCs' timeouts (three minutes at timeo=600,retrans=2, the RDMA
  // default), so the server is asked first (statfs(2)); when it has not
  // answered after `patience`, the mount's NFS client is shut down
  // (/sys/fs/nfs/DEVICE/shutdown: each of its RPCs then fails at once;
  // the file goes once an unmount begins) and the unmount returns at once.
  // True when it was. A kernel without that file (6.1) unmounts as ever.
  virtual Result<bool> unmount_nfs(const std::string& target, Duration patience) = 0;
  // A directory to mount on: EEXIST when there is one; whether one is there.
  virtual Result<void> make_dir(const std::string& path) = 0;
  virtual Result<void> remove_dir(const std::string& path) = 0;  // ENOTEMPTY with anything in it
  // The directories in `path` (nfsd's client records), then `path`.
  // ENOTEMPTY when it holds anything else.
  virtual Result<void> remove_records_dir(const std::string& path) = 0;
  virtual Result<bool> is_dir(const std::string& path) = 0;
};

}  // namespace rxerun::sys
