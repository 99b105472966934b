#include "sys/model/nfs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

const char* const kRpcDir = "/proc/net/rpc";

}  // namespace

std::string ModelNfs::in_netns(const std::string& shell) const {
  // nsenter keeps the mount namespace, where `ip netns exec` makes one of its own.
  return k_.netns.empty() ? shell : shell_join({"nsenter", "--net=/run/netns/" + k_.netns, "sh", "-c", shell});
}

ModelNfs::Namespace* ModelNfs::of(const std::string& ctl) {
  auto it = nfsd_mounts.find(ctl);
  return it == nfsd_mounts.end() ? nullptr : &namespaces[it->second];
}

Result<NfsdState> ModelNfs::nfsd(const std::string& ctl) {
  auto* ns = of(ctl);
  if (!ns) return make_error("cannot read " + ctl + "/threads: No such file or directory", ENOENT);
  return ns->nfsd;
}

Result<void> ModelNfs::set_versions(const std::string& ctl, const std::string& versions) {
  auto* ns = of(ctl);
  return k_.act(
      "nfs", "nfs.set_versions", versions,
      {{!ns, ENOENT, "no nfsd filesystem on " + ctl}, {ns && ns->nfsd.running(), EBUSY, "nfsd runs"}},
      [&] { ns->nfsd.versions = versions; }, "offer NFS versions " + versions,
      echo_into_attr(versions, ctl + "/versions"));
}

Result<void> ModelNfs::add_listener(const std::string& ctl, const std::string& transport, unsigned port) {
  auto* ns = of(ctl);
  const std::string line = transport + " " + std::to_string(port);
  return k_.act(
      "nfs", "nfs.add_listener", line,
      {{!ns, ENOENT, "no nfsd filesystem on " + ctl},
       {transport == "rdma" && !*modules_.loaded("rpcrdma"), EPROTONOSUPPORT, "no transport " + transport},
       {ns && std::count(ns->nfsd.listeners.begin(), ns->nfsd.listeners.end(), line) > 0, EADDRINUSE,
        line + " is taken"}},
      [&] { ns->nfsd.listeners.insert(ns->nfsd.listeners.end(), 2, line); },  // IPv4 and IPv6, as the kernel lists them
      "let nfsd listen on " + line, echo_into_attr(line, ctl + "/portlist"));
}

Result<std::optional<std::string>> ModelNfs::recovery_dir(const std::string& ctl) {
  auto* ns = of(ctl);
  if (!ns) return make_error("cannot read " + ctl + "/nfsv4recoverydir: No such file or directory", ENOENT);
  return std::optional<std::string>(ns->recovery_dir);
}

Result<void> ModelNfs::set_recovery_dir(const std::string& ctl, const std::string& dir) {
  auto* ns = of(ctl);
  return k_.act(
      "nfs", "nfs.set_recovery_dir", dir,
      {{!ns, ENOENT, "no nfsd filesystem on " + ctl}, {ns && ns->nfsd.running(), EBUSY, "nfsd runs"}},
      [&] { ns->recovery_dir = dir; }, "keep nfsd's client records in " + dir,
      echo_into_attr(dir, ctl + "/nfsv4recoverydir"));
}

Result<unsigned> ModelNfs::grace_time(const std::string& ctl) {
  auto* ns = of(ctl);
  if (!ns) return make_error("cannot read " + ctl + "/nfsv4gracetime: No such file or directory", ENOENT);
  return ns->grace_time;
}

Result<void> ModelNfs::set_grace_time(const std::string& ctl, unsigned seconds) {
  auto* ns = of(ctl);
  return k_.act(
      "nfs", "nfs.set_grace_time", std::to_string(seconds),
      {{!ns, ENOENT, "no nfsd filesystem on " + ctl},
       {ns && ns->nfsd.running(), EBUSY, "nfsd runs"},
       {seconds < 10 || seconds > 3600, EINVAL, "a grace period of 10 to 3600 s"}},
      [&] { ns->grace_time = seconds; }, "give nfsd a grace period of " + std::to_string(seconds) + " s",
      echo_into_attr(std::to_string(seconds), ctl + "/nfsv4gracetime"));
}

Result<bool> ModelNfs::end_grace(const std::string& ctl) {
  auto* ns = of(ctl);
  // The kernel tracks clients (and ends grace on request) with a records directory that is there.
  const bool tracks = ns && ns->nfsd.running() && dirs.count(ns->recovery_dir) && !ns->nfsd.grace_ended;
  auto r = k_.act(
      "nfs", "nfs.end_grace", ctl, {{!ns, ENOENT, "no nfsd filesystem on " + ctl}},
      [&] {
        if (tracks) ns->nfsd.grace_ended = true;
      },
      "end nfsd's grace period", echo_into_attr("Y", ctl + "/v4_end_grace"));
  if (!r) return r.error();
  return tracks;
}

void ModelNfs::stop(Namespace& ns) {
  ns.nfsd.threads = 0;
  ns.nfsd.listeners.clear();
  ns.nfsd.grace_ended = false;
  ns.exports.clear();  // the kernel empties the export caches
}

Result<void> ModelNfs::set_threads(const std::string& ctl, unsigned threads) {
  auto* ns = of(ctl);
  return k_.act(
      "nfs", "nfs.set_threads", std::to_string(threads), {{!ns, ENOENT, "no nfsd filesystem on " + ctl}},
      [&] {
        if (threads == 0)
          stop(*ns);
        else
          ns->nfsd.threads = threads;
      },
      threads ? "start nfsd with " + std::to_string(threads) + " threads" : "stop nfsd",
      echo_into_attr(std::to_string(threads), ctl + "/threads"));
}

Result<std::vector<NfsExport>> ModelNfs::exports() {
  std::vector<NfsExport> out;
  for (const auto& [key, flags] : here().exports)
    out.push_back({.domain = key.first, .path = key.second, .options = nfs_export_options(flags)});
  return out;
}

Result<std::vector<NfsClient>> ModelNfs::clients() {
  std::vector<NfsClient> out;
  for (const auto& [address, domain] : here().clients) out.push_back({address, domain});
  return out;
}

Result<void> ModelNfs::add_client(const NfsClient& client) {
  auto& ns = here();
  return k_.act(
      "nfs", "nfs.add_client", client.address,
      {{!*modules_.loaded("sunrpc") && !*modules_.loaded("nfsd"), ENOENT, "no export caches"}},
      [&] { ns.clients[client.address] = client.domain; }, "let " + client.address + " into " + client.domain,
      in_netns(echo_into_attr("nfsd " + client.address + " 2147483647 " + client.domain,
                              std::string(kRpcDir) + "/auth.unix.ip/channel")));
}

Result<void> ModelNfs::add_export(const std::string& domain, const std::string& path, unsigned flags) {
  auto& ns = here();
  const bool domain_known =
      std::any_of(ns.clients.begin(), ns.clients.end(), [&](const auto& c) { return c.second == domain; });
  return k_.act(
      "nfs", "nfs.add_export", path,
      {{!*modules_.loaded("nfsd"), ENOENT, "no nfsd export cache"},
       {!domain_known, ENOENT, "no domain " + domain},
       {!dirs.count(path), ENOENT, "no directory " + path}},
      [&] {
        ns.exports[{domain, path}] = flags;
      },
      "export " + path + " to " + domain + " as its NFSv4 root",
      in_netns(echo_into_attr(domain + " 1 \\x00000000 2147483647 " + path, std::string(kRpcDir) + "/nfsd.fh/channel") +
               "; " +
               echo_into_attr(domain + " " + path + " 2147483647 " + std::to_string(flags) + " 65534 65534 0",
                              std::string(kRpcDir) + "/nfsd.export/channel")));
}

Result<void> ModelNfs::remove_export(const std::string& domain, const std::string& path) {
  auto& ns = here();
  return k_.act(
      "nfs", "nfs.remove_export", path, {},
      [&] {
        ns.exports.erase({domain, path});
      },
      "withdraw the export of " + path + " to " + domain,
      in_netns(echo_into_attr(domain + " " + path + " 1", std::string(kRpcDir) + "/nfsd.export/channel") + "; " +
               echo_into_attr(domain + " 1 \\x00000000 1", std::string(kRpcDir) + "/nfsd.fh/channel")));
}

Result<void> ModelNfs::remove_client(const std::string& address) {
  auto& ns = here();
  return k_.act(
      "nfs", "nfs.remove_client", address, {}, [&] { ns.clients.erase(address); }, "forget client " + address,
      in_netns(echo_into_attr("nfsd " + address + " 1 ", std::string(kRpcDir) + "/auth.unix.ip/channel")));
}

Result<std::vector<MountEntry>> ModelNfs::mounts() {
  return mount_table;
}

Result<void> ModelNfs::mount(const std::string& source, const std::string& target, const std::string& fstype,
                             const std::string& options) {
  int refusal = 0;
  std::string why;
  MountEntry m{.id = next_mount_id_, .mountpoint = target, .fstype = fstype, .source = source, .options = "rw"};
  if (fstype == "nfs4") {
    const std::string proto = option_value(options, "proto"), port = option_value(options, "port");
    const std::string listener = proto + " " + port;
    const Namespace* server = nullptr;
    for (const auto& [name, ns] : namespaces)
      if (ns.nfsd.threads > 0 &&
          std::find(ns.nfsd.listeners.begin(), ns.nfsd.listeners.end(), listener) != ns.nfsd.listeners.end())
        server = &ns;
    // The client is the mounter's namespace: one of its addresses must be
    // in a domain with an NFSv4 root (any, in an open world, which does not
    // hold the host's addresses).
    std::set<std::string> mine;
    for (const auto& [dev, cidrs] : links_.addrs[k_.netns])
      for (const auto& cidr : cidrs) mine.insert(cidr.substr(0, cidr.find('/')));
    bool exported = false;
    if (server)
      for (const auto& [address, domain] : server->clients)
        for (const auto& [key, flags] : server->exports)
          exported =
              exported || ((k_.open_world || mine.count(address)) && key.first == domain && (flags & kNfsExportFsid));
    if (!*modules_.loaded("nfsv4")) {
      refusal = ENODEV, why = "unknown filesystem type nfs4";
    } else if (proto == "rdma" && !*modules_.loaded("rpcrdma")) {
      refusal = EPROTONOSUPPORT, why = "no RPC transport rdma";
    } else if (!server) {
      refusal = ECONNREFUSED, why = "nobody listens on " + listener;
    } else if (!exported) {
      refusal = EACCES, why = "no export for the client";
    }
    m.options = "rw,vers=" + option_value(options, "vers") + ",hard,proto=" + proto + ",port=" + port +
                ",sec=sys,addr=" + option_value(options, "addr");
  }
  if (fstype == "nfsd" && !*modules_.loaded("nfsd")) refusal = ENODEV, why = "unknown filesystem type nfsd";
  // nfsd's filesystem has one superblock per namespace; any other mount its own.
  m.device = fstype == "nfsd" ? "nfsd:" + k_.netns : "0:" + std::to_string(m.id);
  auto r = k_.act(
      "nfs", "nfs.mount", target,
      {{!dirs.count(target), ENOENT, "no directory " + target}, {refusal != 0, refusal, why}},
      [&] {
        mount_table.push_back(m);
        ++next_mount_id_;
        if (fstype == "nfsd") nfsd_mounts[target] = k_.netns;
      },
      "mount " + source + " on " + target,
      in_netns(options.empty() ? shell_join({"mount", "-t", fstype, source, target})
                               : shell_join({"mount", "-t", fstype, "-o", options, source, target})));
  return r;
}

Result<void> ModelNfs::unmount(const std::string& target) {
  auto it = std::find_if(mount_table.rbegin(), mount_table.rend(),
                         [&](const MountEntry& m) { return m.mountpoint == target; });
  return k_.act(
      "nfs", "nfs.unmount", target, {{it == mount_table.rend(), EINVAL, target + " is no mount point"}},
      [&] {
        mount_table.erase(std::next(it).base());
        if (auto n = nfsd_mounts.find(target); n != nfsd_mounts.end()) {
          const std::string netns = n->second;
          nfsd_mounts.erase(n);
          // The last mount of a namespace's nfsd filesystem stops its nfsd.
          if (std::none_of(nfsd_mounts.begin(), nfsd_mounts.end(), [&](const auto& x) { return x.second == netns; }))
            stop(namespaces[netns]);
        }
      },
      "unmount " + target, shell_join({"umount", target}));
}

Result<bool> ModelNfs::unmount_nfs(const std::string& target, Duration patience) {
  const auto m = mount_at(mount_table, target);
  const bool shut = m && unanswered.count(target) && client_shutdown;
  if (shut)
    k_.did_anywhere("nfs",
                    fmt::format("shut down the NFS client of {}: its server did not answer for {} s", target,
                                decimal_text(std::chrono::duration<double>(patience).count())),
                    echo_into_attr("1", nfs_shutdown_file(m->device)));
  if (auto r = unmount(target); !r) return r.error();
  unanswered.erase(target);
  return shut;
}

Result<void> ModelNfs::make_dir(const std::string& path) {
  return k_.act(
      "nfs", "nfs.make_dir", path, {{dirs.count(path) > 0, EEXIST, path + " exists"}}, [&] { dirs.insert(path); },
      "create directory " + path, shell_join({"mkdir", path}));
}

Result<void> ModelNfs::remove_dir(const std::string& path) {
  const bool mounted = mount_at(mount_table, path).has_value();
  return k_.act(
      "nfs", "nfs.remove_dir", path,
      {{!dirs.count(path), ENOENT, "no directory " + path}, {mounted, EBUSY, path + " is a mount point"}},
      [&] { dirs.erase(path); }, "remove directory " + path, shell_join({"rmdir", path}));
}

Result<void> ModelNfs::remove_records_dir(const std::string& path) {
  return remove_dir(path);
}

Result<bool> ModelNfs::is_dir(const std::string& path) {
  return dirs.count(path) > 0;
}

}  // namespace rxerun::sys
