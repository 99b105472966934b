#include "sys/netns.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "base/fd.h"
#include "sys/links_rtnl.h"
#include "sys/netns_local.h"

namespace rxerun::sys {

namespace {

class RealNetnsScope final : public NetnsScope {
 public:
  explicit RealNetnsScope(UniqueFd original) : original_(std::move(original)) {}
  ~RealNetnsScope() override {
    // Going back can only fail if the kernel lost our own namespace; then
    // nothing rxerun does afterwards would be safe.
    if (enter_netns(original_.get()) != 0) std::abort();
  }

 private:
  UniqueFd original_;
};

}  // namespace

Result<std::unique_ptr<NetnsScope>> RealNetns::enter(const std::string& name) {
  UniqueFd original(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!original.valid()) return make_error("cannot open /proc/thread-self/ns/net", errno);
  std::string path = "/run/netns/" + name;
  UniqueFd target(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!target.valid()) {
    int err = errno;
    return make_error(err == ENOENT ? "network namespace '" + name + "' does not exist" : "cannot open " + path, err);
  }
  if (enter_netns(target.get()) != 0) {
    const int err = errno;
    return make_error("cannot enter network namespace '" + name + "'", err);
  }
  return std::unique_ptr<NetnsScope>(std::make_unique<RealNetnsScope>(std::move(original)));
}

namespace {

constexpr const char* kRunDir = "/run/netns";

std::string path_of(const std::string& name) {
  return std::string(kRunDir) + "/" + name;
}

std::string needs_root(int err) {
  return err == EPERM || err == EACCES ? " (needs root: CAP_SYS_ADMIN)" : "";
}

// A name `ip netns` could use: a plain file name under /run/netns.
Result<void> check_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return make_error("'" + name + "' is not a network namespace name", EINVAL);
  return {};
}

// What `ip netns add` does first (iproute2, ip/ipnetns.c): create /run/netns
// and make it a shared mount (bind-mounting it onto itself when it is not a
// mount point yet), so that unmounting a namespace file in one mount
// namespace unmounts it in all of them and the namespace can be freed. A
// lock on the directory keeps concurrent callers from stacking mounts.
Result<void> prepare_run_dir() {
  if (::mkdir(kRunDir, 0755) != 0 && errno != EEXIST) {
    const int err = errno;
    return make_error(std::string("cannot create ") + kRunDir + needs_root(err), err);
  }
  int lock = ::open(kRunDir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock >= 0) (void)::flock(lock, LOCK_EX);
  Result<void> result;
  bool made_mount = false;
  while (::mount("", kRunDir, "none", MS_SHARED | MS_REC, nullptr) != 0) {
    const int err = errno;
    if (err != EINVAL || made_mount) {
      result = make_error(std::string("cannot make ") + kRunDir + " a shared mount" + needs_root(err), err);
      break;
    }
    if (::mount(kRunDir, kRunDir, "none", MS_BIND | MS_REC, nullptr) != 0) {
      const int bind_err = errno;
      result =
          make_error(std::string("cannot bind-mount ") + kRunDir + " onto itself" + needs_root(bind_err), bind_err);
      break;
    }
    made_mount = true;
  }
  if (lock >= 0) {
    (void)::flock(lock, LOCK_UN);
    ::close(lock);
  }
  return result;
}

// Creates the namespace in a helper thread, so that no thread of the caller
// ever leaves its own namespace: the thread unshares, binds its new
// namespace onto `path` (which keeps the namespace alive after the thread
// ends) and brings its loopback up.
Result<void> bind_new_netns(const std::string& name, const std::string& path) {
  Result<void> result;
  try {
    std::thread helper([&] {
      if (unshare_netns() != 0) {
        const int err = errno;
        result = make_error("cannot create network namespace " + name + needs_root(err), err);
        return;
      }
      if (::mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr) != 0) {
        const int err = errno;
        result = make_error("cannot bind network namespace " + name + " to " + path + needs_root(err), err);
        return;
      }
      RtnlLinks links;
      result = links.set_up("lo", true);
    });
    helper.join();
  } catch (const std::system_error& e) {
    return make_error("cannot start a thread to create network namespace " + name, e.code().value());
  }
  return result;
}

}  // namespace

Result<bool> RealNetns::exists(const std::string& name) {
  if (auto r = check_name(name); !r) return r.error();
  struct stat st {};
  if (::stat(path_of(name).c_str(), &st) == 0) return true;
  const int err = errno;
  if (err == ENOENT) return false;
  return make_error("cannot look at " + path_of(name), err);
}

Result<std::uint64_t> RealNetns::inode(const std::string& name) {
  if (auto r = check_name(name); !r) return r.error();
  struct stat st {};
  if (::stat(path_of(name).c_str(), &st) == 0) return static_cast<std::uint64_t>(st.st_ino);
  const int err = errno;
  if (err == ENOENT) return make_error("network namespace " + name + " does not exist", ENOENT);
  return make_error("cannot look at " + path_of(name), err);
}

Result<std::uint64_t> RealNetns::current_inode() {
  return current_netns_id();
}

Result<void> RealNetns::create(const std::string& name) {
  if (auto r = check_name(name); !r) return r;
  if (auto r = prepare_run_dir(); !r) return r;
  const std::string path = path_of(name);
  int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    if (err == EEXIST) return make_error("network namespace " + name + " exists", EEXIST);
    return make_error("cannot create " + path + needs_root(err), err);
  }
  ::close(fd);
  if (auto r = bind_new_netns(name, path); !r) {
    (void)::umount2(path.c_str(), MNT_DETACH);
    (void)::unlink(path.c_str());
    return r;
  }
  return {};
}

Result<void> RealNetns::remove(const std::string& name) {
  if (auto r = check_name(name); !r) return r;
  const std::string path = path_of(name);
  // A socket rxerun keeps open in the namespace would keep it, and the
  // interfaces in it, alive after the unmount.
  drop_cached_netlink_sockets();
  // EINVAL: not a mount point (a file left by an interrupted create).
  if (::umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
    const int err = errno;
    return make_error("cannot unmount " + path + needs_root(err), err);
  }
  if (::unlink(path.c_str()) != 0) {
    const int err = errno;
    if (err == ENOENT) return make_error("network namespace " + name + " does not exist", ENOENT);
    return make_error("cannot remove " + path + needs_root(err), err);
  }
  return {};
}

}  // namespace rxerun::sys
