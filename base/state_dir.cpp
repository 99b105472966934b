#include "base/state_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace rxerun {

namespace {

// What every refusal of a state directory ends with.
constexpr const char* kStateDirElsewhere = "or set RXERUN_STATE_DIR to a directory of your own";

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

Error foreign_state_dir(const std::string& dir, uid_t owner) {
  return make_error(
      fmt::format("state directory {} belongs to uid {}, not to uid {} that runs rxerun (its owner could "
                  "change what cleanup undoes); remove it, {}",
                  dir, owner, ::geteuid(), kStateDirElsewhere));
}

// Why `dir` could not be opened (errno `err`): what is wrong with it rather
// than how opening it failed.
Error unopenable_state_dir(const std::string& dir, int err) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      return make_error("state directory " + dir + " is a symbolic link; remove it, " + kStateDirElsewhere);
    if (!S_ISDIR(st.st_mode))
      return make_error("state directory " + dir + " is not a directory; remove it, " + kStateDirElsewhere);
    if (st.st_uid != ::geteuid()) return foreign_state_dir(dir, st.st_uid);
  }
  return make_error("cannot open state directory " + dir, err);
}

// Opens `dir`, creating it (the last component only) when missing; or why not.
Result<UniqueFd> open_or_make(const std::string& dir, bool* made) {
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(dir.c_str(), flags);
  if (fd < 0 && errno == ENOENT) {
    if (::mkdir(dir.c_str(), 0700) == 0) {
      *made = true;
    } else if (errno == ENOENT) {
      return make_error("cannot create state directory " + dir + ": its parent directory does not exist (rxerun " +
                        "creates only the last component); create it, " + kStateDirElsewhere);
    } else if (errno != EEXIST) {
      return make_error("cannot create state directory " + dir, errno);
    }
    fd = ::open(dir.c_str(), flags);
  }
  if (fd < 0) return unopenable_state_dir(dir, errno);
  return UniqueFd(fd);
}

}  // namespace

std::string default_state_dir() {
  if (const char* d = std::getenv("RXERUN_STATE_DIR"); d && *d) return d;
  if (::geteuid() == 0) return "/run/rxerun";
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return std::string(x) + "/rxerun";
  return "/tmp/rxerun-" + std::to_string(::geteuid());
}

Result<StateDir> open_state_dir(const std::string& given) {
  const std::string dir = without_trailing_slashes(given);
  if (dir.empty()) return make_error("no state directory: set RXERUN_STATE_DIR to a directory of your own");
  bool made = false;
  auto opened = open_or_make(dir, &made);
  if (!opened) return opened.error();
  UniqueFd owned = std::move(*opened);
  struct stat st {};
  if (::fstat(owned.get(), &st) != 0) return make_error("cannot stat state directory " + dir, errno);
  if (st.st_uid != ::geteuid()) return foreign_state_dir(dir, st.st_uid);
  // A umask can take the owner's own bits from a directory just made.
  if (made && (st.st_mode & 07777) != 0700 && ::fchmod(owned.get(), 0700) == 0)
    st.st_mode = (st.st_mode & ~07777) | 0700;
  if ((st.st_mode & 077) != 0) {
    return make_error(
        fmt::format("state directory {} has mode {:04o}, open to others (they could change what cleanup "
                    "undoes); chmod 700 {}",
                    dir, st.st_mode & 07777, dir));
  }
  return StateDir{dir, std::move(owned)};
}

Result<UniqueFd> open_state_file(const StateDir& dir, const std::string& name, int flags) {
  const std::string path = dir.path + "/" + name;
  UniqueFd fd(::openat(dir.fd.get(), name.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ELOOP) return make_error(path + " is a symbolic link; remove it (rxerun never writes through one)");
    if (err == EISDIR) return make_error(path + " is not a regular file; remove it");
    return make_error("cannot open " + path, err);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return make_error("cannot stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return make_error(path + " is not a regular file; remove it");
  return fd;
}

}  // namespace rxerun
