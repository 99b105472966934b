#include "sys/sysctl_proc.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "base/fd.h"
#include "base/strings.h"

namespace rxerun::sys {

namespace {

// One message per errno that says what it means for a sysctl and what to do.
Error sysctl_error(int code, const std::string& key, const std::string& path, std::string_view verb,
                   const std::string& value = {}) {
  switch (code) {
    case ENOENT:
      return make_error("no sysctl " + key + " (" + path +
                            "): check the spelling, and that the interface it names exists in this namespace",
                        code);
    case EACCES:
    case EPERM:
      if (verb == "read") return make_error("cannot read sysctl " + key + ": it is not readable (" + path + ")", code);
      return make_error("cannot write sysctl " + key + ": needs root (CAP_NET_ADMIN), and " + path +
                            " must be writable here (not read-only in this namespace)",
                        code);
    case EINVAL:
      return make_error("the kernel refused '" + value + "' for sysctl " + key +
                            ": out of range or not the format it takes (see its documentation)",
                        code);
    case EISDIR: return make_error(key + " is a group of sysctls (" + path + " is a directory), not one key", code);
    default:
      return make_error("cannot " + std::string(verb) + " sysctl " + key + " (" + path + "): " + std::strerror(code),
                        code);
  }
}

}  // namespace

std::string sysctl_path(const std::string& key) {
  std::string rel = key;
  if (rel.find('/') != std::string::npos) {
    // Already a path below /proc/sys (sysctl(8) takes both spellings).
    while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  } else {
    for (char& c : rel)
      if (c == '.') c = '/';
  }
  return "/proc/sys/" + rel;
}

Result<std::string> ProcSysctl::read(const std::string& key) {
  const std::string path = sysctl_path(key);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return sysctl_error(errno, key, path, "read");
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return sysctl_error(errno, key, path, "read");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    // The kernel formats a sysctl whole into the buffer of each read(): a
    // short read is the end, and asking again only to hear so costs a syscall.
    if (static_cast<std::size_t>(n) < sizeof buf) break;
  }
  return std::string(trim(text));
}

Result<void> ProcSysctl::write(const std::string& key, const std::string& value) {
  const std::string path = sysctl_path(key);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return sysctl_error(errno, key, path, "write", value);
  // One write(): the kernel parses a sysctl from the buffer of a single call.
  const std::string line = value + "\n";
  ssize_t n;
  do {
    n = ::write(fd.get(), line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return sysctl_error(errno, key, path, "write", value);
  if (static_cast<std::size_t>(n) != line.size())
    return make_error("sysctl " + key + ": the kernel took " + std::to_string(n) + " of " +
                          std::to_string(line.size()) + " bytes of '" + value + "'",
                      EIO);
  return {};
}

}  // namespace rxerun::sys
