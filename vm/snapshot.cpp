#include "vm/snapshot.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <system_error>

#include "sys/process.h"
#include "vm/boot_protocol.h"
#include "vm/files.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

Result<Qmp> Qmp::connect(const fs::path& socket, std::chrono::milliseconds timeout) {
  auto channel = connect_control(socket, timeout);
  if (!channel) return channel.error();
  Qmp qmp(std::move(*channel));
  auto greeting = qmp.channel_.receive(-1, timeout);
  if (!greeting) return greeting.error();
  if (!greeting->message || !greeting->message->contains("QMP"))
    return make_error("qemu's monitor did not greet at " + socket.string());
  if (auto r = qmp.execute("qmp_capabilities", nullptr, timeout); !r) return r.error();
  return qmp;
}

Result<nlohmann::json> Qmp::execute(const std::string& command, const nlohmann::json& arguments,
                                    std::chrono::milliseconds timeout) {
  nlohmann::json message = {{"execute", command}};
  if (!arguments.is_null()) message["arguments"] = arguments;
  if (auto r = channel_.send(message); !r) return r.error();
  return reply(command, timeout);
}

Result<nlohmann::json> Qmp::reply(const std::string& command, std::chrono::milliseconds timeout) {
  for (;;) {
    auto got = channel_.receive(-1, timeout);
    if (!got) return got.error();
    if (got->closed) return make_error("qemu's monitor closed during " + command);
    if (got->timed_out) return make_error("qemu's monitor did not answer " + command);
    const nlohmann::json& m = *got->message;
    if (m.contains("return")) return m["return"];
    if (m.contains("error")) {
      const auto& e = m["error"];
      return make_error(command + ": " + (e.is_object() ? e.value("desc", e.dump()) : e.dump()));
    }
  }
}

Result<void> Qmp::pass_fd(const std::string& name, int fd) {
  const std::string line = nlohmann::json{{"execute", "getfd"}, {"arguments", {{"fdname", name}}}}.dump() + "\n";
  iovec iov{const_cast<char*>(line.data()), line.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t n;
  do n = ::sendmsg(channel_.fd(), &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) return make_error("cannot hand qemu a file", n < 0 ? errno : EIO);
  if (auto r = reply("getfd", std::chrono::seconds(10)); !r) return r.error();
  return {};
}

namespace {

// A file by what identifies its contents without reading them all: path,
// size, modification time, inode.
void mix_file(Digest& d, const fs::path& p) {
  struct stat st {};
  d.mix(p.string());
  if (::stat(p.c_str(), &st) == 0)
    d.mix(std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
          std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ino));
}

// The files this process mapped when it started: its binary and the shared
// libraries the dynamic linker loaded for it, which is what the lab VM's
// guest copies and runs (vm/boot_protocol.h), and a snapshot holds. Read
// before main(): what is opened later (a plugin, a verbs provider, an NSS
// module) is no part of the guest's copy, and must not make another key.
std::set<std::string> files_mapped_now() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> files;
  for (std::string line; std::getline(maps, line);) {
    const auto path = line.find(" /");
    if (path != std::string::npos && !line.ends_with(" (deleted)")) files.insert(line.substr(path + 1));
  }
  return files;
}
const std::set<std::string> kFilesAtStart = files_mapped_now();

bool is_snapshot_file(const fs::path& p) {
  return p.extension() == ".snap";
}

// Whether `name` is a file of `shape`: "SHAPE-KEY." and its end, the key 16
// hex digits. A name of a longer shape ("tcg-control-..." beside "tcg")
// is not.
bool of_shape(const std::string& name, const std::string& shape) {
  const std::size_t key = shape.size() + 1;
  return name.size() > key + 16 && name.starts_with(shape + "-") && name[key + 16] == '.' &&
         std::all_of(name.begin() + static_cast<std::ptrdiff_t>(key),
                     name.begin() + static_cast<std::ptrdiff_t>(key + 16),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

fs::path SnapshotSlot::temporary() const {
  return dir / (shape + "-" + key + "." + std::to_string(::getpid()) + ".tmp");
}

std::vector<fs::path> SnapshotSlot::stale() const {
  std::vector<fs::path> out;
  std::error_code ec;
  const std::string mine = path().filename().string();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_snapshot_file(it->path()) && name != mine && of_shape(name, shape)) out.push_back(it->path());
  }
  return out;
}

SnapshotSlot snapshot_slot(const PreparedKernel& kernel, const std::vector<std::string>& machine, bool kvm,
                           bool control, std::size_t wires) {
  Digest d;
  for (const auto& arg : machine) d.mix(arg);
  mix_file(d, kernel.vmlinux);
  mix_file(d, kernel.bzimage);
  mix_file(d, kernel.initramfs);
  for (const auto& f : kFilesAtStart) mix_file(d, f);
  d.mix(stage1_init_script());
  // qemu as exec finds it, links followed. None: the start says so, and
  // the key does not matter then.
  const std::string qemu = machine.empty() ? "qemu-system-x86_64" : machine.front();
  const char* path = std::getenv("PATH");
  const fs::path found = sys::find_in_path(qemu, path ? path : "").value_or(qemu);
  std::error_code ec;
  const fs::path real = fs::canonical(found, ec);
  mix_file(d, ec ? found : real);
  return SnapshotSlot{.dir = kernel.dir / "snapshots",
                      .shape = std::string(kvm ? "kvm" : "tcg") + (control ? "-control" : "") +
                               (wires ? "-" + std::to_string(wires) + "wire" : ""),
                      .key = d.hex()};
}

std::optional<SnapshotLock> SnapshotLock::try_take(const SnapshotSlot& slot, std::string* why) {
  why->clear();
  std::error_code ec;
  fs::create_directories(slot.dir, ec);
  const fs::path lock = slot.dir / (slot.shape + ".lock");
  UniqueFd fd(::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd.valid()) {
    *why = "cannot write in " + slot.dir.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return std::nullopt;
  // What a maker of this shape that was killed left half written.
  for (fs::directory_iterator it(slot.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code ignored;
    if (of_shape(name, slot.shape) && name.ends_with(".tmp")) fs::remove(it->path(), ignored);
  }
  return SnapshotLock(std::move(fd));
}

std::vector<SnapshotFile> list_snapshots(const std::vector<PreparedKernel>& kernels) {
  std::vector<SnapshotFile> out;
  for (const auto& k : kernels) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(k.dir / "snapshots", ec), end; !ec && it != end; it.increment(ec))
      if (is_snapshot_file(it->path())) files.push_back(it->path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      if (const auto bytes = fs::file_size(f, ec); !ec) out.push_back({k.label, f, bytes});  // not gone meanwhile
  }
  return out;
}

Result<int> remove_snapshots(const std::vector<PreparedKernel>& kernels) {
  int removed = 0;
  for (const auto& s : list_snapshots(kernels)) {
    std::error_code ec;
    if (!fs::remove(s.path, ec) && ec) return make_error("cannot remove " + s.path.string(), ec.value());
    ++removed;
  }
  return removed;
}

}  // namespace rxerun::vm
