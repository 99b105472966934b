#include "sys/nfs_real.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <memory>
#include <sstream>
#include <thread>

#include "base/fd.h"
#include "sys/kernel_files.h"

namespace rxerun::sys {

namespace {

// Written into an entry of the caches: rpc.mountd's "never", 2038.
constexpr const char* kNever = "2147483647";
// An expiry in the past: the entry written again is gone.
constexpr const char* kExpired = "1";

Error nfs_error(const std::string& what, int code) {
  return make_error(what + ": " + std::strerror(code), code);
}

// statfs(2) of the mount on `path`, a request to its NFS server; ready
// once the call returned. A server that does not answer holds the call (a
// hard mount's RPCs retry for ever), so it is made from a thread of its
// own, which ends with the call.
std::future<void> ask_server(const std::string& path) {
  auto answered = std::make_shared<std::promise<void>>();
  auto done = answered->get_future();
  // The thread starts with every signal blocked: Ctrl-C stays the caller's.
  sigset_t all, before;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &before);
  std::thread([answered, path] {
    struct statfs st {};
    (void)::statfs(path.c_str(), &st);
    answered->set_value();
  }).detach();
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return done;
}

// One of nfsd's control files, written with its newline (versions wants one).
Result<void> write_nfsd(const std::string& ctl, const char* name, const std::string& value) {
  return write_attr(ctl + "/" + name, value + "\n");
}

std::string rpc_cache(const char* cache, const char* file) {
  return std::string("/proc/thread-self/net/rpc/") + cache + "/" + file;
}

// A word as the caches' channels read it (qword_get): anything but
// letters, digits and "/._-" as a backslash and three octal digits.
std::string qword(const std::string& word) {
  std::string out;
  for (unsigned char c : word) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\%03o", c);
      out += esc;
    }
  }
  return out;
}

// A line into a cache's channel: one write, as the kernel wants it.
Result<void> write_channel(const char* cache, const std::string& line) {
  return write_attr(rpc_cache(cache, "channel"), line + "\n");
}

// The lines of a cache's content, without the header and the entries that
// are not valid ("# " before them).
std::vector<std::string> content_lines(const char* cache) {
  std::vector<std::string> out;
  std::stringstream in(attr_or_empty(rpc_cache(cache, "content")));
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.front() != '#') out.push_back(line);
  return out;
}

}  // namespace

Result<NfsdState> RealNfs::nfsd(const std::string& ctl) {
  NfsdState state;
  auto threads = read_attr(ctl + "/threads");
  if (!threads) return threads.error();
  if (!parse_unsigned(*threads, &state.threads))
    return make_error("nfsd's threads reads '" + *threads + "', not a number", EIO);
  auto versions = read_attr(ctl + "/versions");
  if (!versions) return versions.error();
  state.versions = *versions;
  auto ports = read_attr(ctl + "/portlist");
  if (!ports) return ports.error();
  std::stringstream in(*ports);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) state.listeners.push_back(line);
  state.grace_ended = attr_or_empty(ctl + "/v4_end_grace") == "Y";
  return state;
}

Result<std::optional<std::string>> RealNfs::recovery_dir(const std::string& ctl) {
  if (!kernel_path_exists(ctl + "/nfsv4recoverydir")) return std::optional<std::string>();
  auto dir = read_attr(ctl + "/nfsv4recoverydir");
  if (!dir) return dir.error();
  return std::optional<std::string>(*dir);
}

Result<void> RealNfs::set_recovery_dir(const std::string& ctl, const std::string& dir) {
  return write_nfsd(ctl, "nfsv4recoverydir", dir);
}

Result<unsigned> RealNfs::grace_time(const std::string& ctl) {
  auto text = read_attr(ctl + "/nfsv4gracetime");
  if (!text) return text.error();
  unsigned seconds = 0;
  if (!parse_unsigned(*text, &seconds)) return make_error("nfsv4gracetime reads '" + *text + "'", EIO);
  return seconds;
}

Result<void> RealNfs::set_grace_time(const std::string& ctl, unsigned seconds) {
  return write_nfsd(ctl, "nfsv4gracetime", std::to_string(seconds));
}

Result<bool> RealNfs::end_grace(const std::string& ctl) {
  if (auto r = write_nfsd(ctl, "v4_end_grace", "Y"); !r) {
    if (r.error().code == EBUSY) return false;
    return r.error();
  }
  return true;
}

Result<void> RealNfs::set_versions(const std::string& ctl, const std::string& versions) {
  return write_nfsd(ctl, "versions", versions);
}

Result<void> RealNfs::add_listener(const std::string& ctl, const std::string& transport, unsigned port) {
  return write_nfsd(ctl, "portlist", transport + " " + std::to_string(port));
}

Result<void> RealNfs::set_threads(const std::string& ctl, unsigned threads) {
  return write_nfsd(ctl, "threads", std::to_string(threads));
}

Result<std::vector<NfsExport>> RealNfs::exports() {
  // "/run/exp\trxerun-1a(rw,insecure,...,fsid=0)"
  std::vector<NfsExport> out;
  for (const auto& line : content_lines("nfsd.export")) {
    const auto tab = line.rfind('\t');
    const auto open = line.find('(', tab == std::string::npos ? 0 : tab);
    if (tab == std::string::npos || open == std::string::npos || line.back() != ')') continue;
    out.push_back({.domain = line.substr(tab + 1, open - tab - 1),
                   .path = unescape_octal(line.substr(0, tab)),
                   .options = line.substr(open + 1, line.size() - open - 2)});
  }
  return out;
}

Result<std::vector<NfsClient>> RealNfs::clients() {
  // "nfsd 10.10.0.2 rxerun-1a"
  std::vector<NfsClient> out;
  for (const auto& line : content_lines("auth.unix.ip")) {
    std::istringstream words(line);
    std::string cls, address, domain;
    if (words >> cls >> address >> domain && cls == "nfsd") out.push_back({address, domain});
  }
  return out;
}

Result<void> RealNfs::add_client(const NfsClient& client) {
  return write_channel("auth.unix.ip", "nfsd " + client.address + " " + kNever + " " + qword(client.domain));
}

Result<void> RealNfs::add_export(const std::string& domain, const std::string& path, unsigned flags) {
  // The domain's fsid 0 is the path (what NFSv4 clients mount as "/"), and
  // the path's export: flags, anonymous uid and gid (nobody), fsid.
  if (auto r = write_channel("nfsd.fh", qword(domain) + " 1 \\x00000000 " + kNever + " " + qword(path)); !r) return r;
  return write_channel(
      "nfsd.export", qword(domain) + " " + qword(path) + " " + kNever + " " + std::to_string(flags) + " 65534 65534 0");
}

Result<void> RealNfs::remove_export(const std::string& domain, const std::string& path) {
  if (auto r = write_channel("nfsd.export", qword(domain) + " " + qword(path) + " " + kExpired); !r) return r;
  return write_channel("nfsd.fh", qword(domain) + " 1 \\x00000000 " + kExpired);
}

Result<void> RealNfs::remove_client(const std::string& address) {
  return write_channel("auth.unix.ip", "nfsd " + address + " " + kExpired + " ");
}

Result<std::vector<MountEntry>> RealNfs::mounts() {
  return read_mountinfo();
}

Result<void> RealNfs::mount(const std::string& source, const std::string& target, const std::string& fstype,
                            const std::string& options) {
  if (::mount(source.c_str(), target.c_str(), fstype.c_str(), MS_NOSUID | MS_NODEV, options.c_str()) != 0)
    return nfs_error("mount -t " + fstype + " -o " + options + " " + source + " " + target, errno);
  return {};
}

Result<void> RealNfs::unmount(const std::string& target) {
  if (::umount2(target.c_str(), 0) != 0) return nfs_error("umount " + target, errno);
  return {};
}

Result<bool> RealNfs::unmount_nfs(const std::string& target, Duration patience) {
  // The superblock's device names its client's directory (stat(2) of the
  // mount point would itself wait on a silent server). The directory goes
  // as soon as an unmount begins: the server is asked first.
  auto table = read_mountinfo();
  if (!table) return table.error();
  const auto m = mount_at(*table, target);
  const std::string shutdown = m ? nfs_shutdown_file(m->device) : "";
  bool shut = false;
  if (!shutdown.empty() && ::access(shutdown.c_str(), W_OK) == 0) {
    auto answered = ask_server(target);
    if (answered.wait_for(patience) == std::future_status::timeout) {
      if (auto r = write_attr(shutdown, "1"); !r) return r.error();
      shut = true;
      // The question holds the mount (EBUSY) until the shutdown fails it.
      answered.wait_for(patience);
    }
  }
  if (auto r = unmount(target); !r) return r.error();
  return shut;
}

Result<void> RealNfs::make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0) return nfs_error("mkdir " + path, errno);
  return {};
}

Result<void> RealNfs::remove_dir(const std::string& path) {
  if (::rmdir(path.c_str()) != 0) return nfs_error("rmdir " + path, errno);
  return {};
}

Result<void> RealNfs::remove_records_dir(const std::string& path) {
  for (const auto& record : subdirectories(path))
    if (auto r = remove_dir(path + "/" + record); !r) return r;
  return remove_dir(path);
}

Result<bool> RealNfs::is_dir(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    return nfs_error("stat " + path, errno);
  }
  return S_ISDIR(st.st_mode);
}

}  // namespace rxerun::sys
