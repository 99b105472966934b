#include "vm/guest.h"

#include <fcntl.h>
#include <linux/random.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sys/kernel_log.h"
#include "sys/links_rtnl.h"
#include "sys/netns_local.h"
#include "sys/process.h"
#include "vm/boot_protocol.h"

namespace rxerun::vm {

nlohmann::json GuestRequest::to_json() const {
  return {{"program", program}, {"args", args}, {"cwd", cwd}, {"term", term}, {"wire_macs", wire_macs}};
}

GuestRequest GuestRequest::from_json(const nlohmann::json& j) {
  GuestRequest r;
  r.program = j.value("program", "");
  r.args = j.at("args").get<std::vector<std::string>>();
  r.cwd = j.value("cwd", "/");
  r.term = j.value("term", "dumb");
  r.wire_macs = j.value("wire_macs", decltype(r.wire_macs){});
  return r;
}

nlohmann::json GuestResult::to_json() const {
  return {{"exit_code", exit_code},
          {"ended", ended},
          {"uptime_at_start", uptime_at_start},
          {"uptime_at_end", uptime_at_end},
          {"dmesg", dmesg}};
}

GuestResult GuestResult::from_json(const nlohmann::json& j) {
  GuestResult r;
  r.exit_code = j.at("exit_code").get<int>();
  r.ended = j.value("ended", "");
  r.uptime_at_start = j.value("uptime_at_start", 0.0);
  r.uptime_at_end = j.value("uptime_at_end", 0.0);
  r.dmesg = j.value("dmesg", std::vector<std::string>{});
  return r;
}

namespace {

// PID 1's messages go to the console, which the host reads.
void say(const std::string& line) {
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
}

[[noreturn]] void power_off(const std::string& why) {
  if (!why.empty()) say("rxerun-guest: " + why);
  ::sync();
  ::reboot(RB_POWER_OFF);
  for (;;) ::pause();
}

void mount_or_say(const char* source, const char* target, const char* type, unsigned long flags, const char* data) {
  ::mkdir(target, 0755);
  if (::mount(source, target, type, flags, data) != 0)
    say(std::string("rxerun-guest: cannot mount ") + type + " on " + target + ": " + std::strerror(errno));
}

double uptime() {
  std::ifstream in("/proc/uptime");
  double up = 0;
  in >> up;
  return up;
}

// The rest of the root a run expects: an empty /run (the host's namespaces,
// journals and locks are not the guest's), devpts, shared memory, /dev/fd, a
// hostname, lo up. /tmp stays the host's, under the writable overlay:
// scenarios and build trees live there too.
void finish_root() {
  mount_or_say("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
  ::mkdir("/run/netns", 0755);
  ::mkdir("/run/lock", 01777);
  mount_or_say("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "gid=5,mode=620,ptmxmode=666");
  mount_or_say("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
  ::symlink("/proc/self/fd", "/dev/fd");
  ::symlink("/proc/self/fd/0", "/dev/stdin");
  ::symlink("/proc/self/fd/1", "/dev/stdout");
  ::symlink("/proc/self/fd/2", "/dev/stderr");
  const char host[] = "rxerun-lab";
  ::sethostname(host, sizeof host - 1);
  sys::RtnlLinks links;
  if (auto r = links.set_up("lo", true); !r) say("rxerun-guest: cannot bring lo up: " + r.error().message);
}

// The second serial port, raw: the run's bytes reach the host unchanged.
int open_output() {
  int fd = ::open("/dev/ttyS1", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -1;
  termios t{};
  if (::tcgetattr(fd, &t) == 0) {
    ::cfmakeraw(&t);
    ::cfsetspeed(&t, B115200);
    ::tcsetattr(fd, TCSANOW, &t);
  }
  return fd;
}

[[noreturn]] void fatal(const std::string& why) {
  say("rxerun-init: FATAL: " + why);
  power_off("");
}

// rxerun.go=console (vm/boot_protocol.h): says so on the console and waits
// there for the host's go line. A snapshot of the guest is taken during the
// wait. `uptime_then`: the guest's uptime when the line came.
GoLine wait_for_go(double* uptime_then) {
  say(std::string(kWaitingMarker));
  char* line = nullptr;
  std::size_t size = 0;
  for (;;) {
    if (::getline(&line, &size, stdin) < 0) fatal("the console closed before the host's go line");
    if (auto go = parse_go_line(line)) {
      *uptime_then = uptime();
      std::free(line);
      say(std::string(kGoMarker));
      return *go;
    }
  }
}

// What /init does when it does not wait: the host's root read-only with a
// tmpfs overlay on top, the run's share, the kernel's modules at
// /lib/modules/RELEASE; then that root becomes this process's (as
// switch_root does; the initramfs's files stay, the copy of rxerun among them).
void enter_host_root(const GoLine& go) {
  auto must = [](int rc, const std::string& what) {
    if (rc != 0) fatal(what + ": " + std::strerror(errno));
  };
  must(::mount("hostroot", "/lower", "9p", MS_RDONLY, "trans=virtio,version=9p2000.L,msize=512000,cache=loose"),
       "mount of the host root (9p) failed");
  must(::mount("tmpfs", "/upper", "tmpfs", 0, "mode=0755"), "tmpfs");
  ::mkdir("/upper/u", 0755);
  ::mkdir("/upper/w", 0755);
  must(::mount("overlay", "/newroot", "overlay", 0, "lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w"),
       "overlay root");
  const std::string modules = "/newroot/lib/modules/" + go.release;
  std::error_code ec;
  std::filesystem::create_directories("/newroot" + std::string(kShareMount), ec);
  std::filesystem::create_directories(modules, ec);
  must(::mount(std::string(kShareTag).c_str(), ("/newroot" + std::string(kShareMount)).c_str(), "9p", 0,
               "trans=virtio,version=9p2000.L,msize=512000"),
       "mount of the run share (9p) failed");
  must(::mount(("/newroot" + go.modules).c_str(), modules.c_str(), nullptr, MS_BIND, nullptr),
       "no module tree at " + go.modules);
  for (const char* fs : {"/proc", "/sys", "/dev"})
    must(::mount(fs, ("/newroot" + std::string(fs)).c_str(), nullptr, MS_MOVE, nullptr), std::string("move ") + fs);
  must(::chdir("/newroot"), "chdir /newroot");
  must(::mount(".", "/", nullptr, MS_MOVE, nullptr), "move the new root");
  must(::chroot("."), "chroot");
  must(::chdir("/"), "chdir /");
  // The copy's libraries were found there; the run's programs are the host's.
  ::unsetenv("LD_LIBRARY_PATH");
  ::unsetenv(kEnvGo);
}

// The host's go line: a restored guest's clock is its snapshot's and its
// random state every other restore's, so the host's clock and random bytes
// are taken as its own.
void take_go_line(const GoLine& go, double uptime_then) {
  // The host's clock when it sent the line, plus what has passed here since.
  const long long ns = go.host_time_ns + static_cast<long long>((uptime() - uptime_then) * 1e9);
  const timespec now{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  if (ns > 0 && ::clock_settime(CLOCK_REALTIME, &now) != 0)
    say(std::string("rxerun-guest: cannot set the clock: ") + std::strerror(errno));
  struct {
    int entropy_count;
    int buf_size;
    unsigned char buf[32];
  } entropy{256, 32, {}};
  for (int i = 0; i < 32; ++i)  // 64 hex digits (parse_go_line)
    entropy.buf[i] = static_cast<unsigned char>(std::stoul(go.seed_hex.substr(2 * i, 2), nullptr, 16));
  // Credited, then the kernel's generator reseeded from it at once (it
  // would otherwise reseed on its own schedule, up to a minute later).
  const int fd = ::open("/dev/urandom", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::ioctl(fd, RNDADDENTROPY, &entropy) != 0 || ::ioctl(fd, RNDRESEEDCRNG) != 0)
    say(std::string("rxerun-guest: cannot reseed the random generator: ") + std::strerror(errno));
  if (fd >= 0) ::close(fd);
}

// Gives the wire NICs that booted with stand-in MAC addresses the lab's
// (GuestRequest::wire_macs). Stand-ins come only with a current initramfs,
// whose /init has loaded virtio_net (kInitramfsNodeModules) unless it is
// built in. All are found before any is changed: a lab's address may be
// another NIC's stand-in. What fails is said on the console and the run goes
// on: the agent then names the NIC it cannot find.
void take_wire_macs(const std::vector<std::pair<std::string, std::string>>& macs) {
  if (macs.empty()) return;
  std::vector<std::string> nics;
  for (const auto& [boot, lab] : macs) {
    std::string name;
    for (int i = 0; i < 100 && (name = sys::interface_with_mac(boot)).empty(); ++i) ::usleep(20000);
    if (name.empty()) {
      say("rxerun-guest: no interface has the boot MAC address " + boot);
      return;
    }
    nics.push_back(name);
  }
  sys::RtnlLinks links;
  for (std::size_t i = 0; i < macs.size(); ++i)
    if (auto r = links.set_mac(nics[i], macs[i].second); !r) say("rxerun-guest: " + r.error().message);
}

// The request's program, with the run's output as its stdout and stderr.
Result<sys::Child> run_program(const GuestRequest& request, const std::string& cwd,
                               const std::map<std::string, std::string>& env, int output) {
  std::vector<std::string> argv{request.program};
  argv.insert(argv.end(), request.args.begin(), request.args.end());
  return sys::spawn(argv, sys::SpawnOptions{.cwd = cwd, .env = env, .stdout_fd = output, .stderr_fd = output});
}

// rxerun's own command line (an empty program: `rxerun run ...`, `rxerun
// __agent ...`) in a forked copy of this process rather than a new exec of
// the binary: under software emulation an exec of rxerun costs about 0.2 s
// even from the page cache, most of it the dynamic linker binding its 46
// libraries again. The copy is set up as spawn() sets up a child: its own
// process group, no blocked or ignored signals, stdin /dev/null, the run's
// output as stdout and stderr, the request's directory and environment.
Result<sys::Child> run_self_forked(const RunSelf& run_self, const std::vector<std::string>& args,
                                   const std::string& cwd, const std::map<std::string, std::string>& env, int output) {
  // PID 1's netlink sockets (lo brought up, the wire NICs' addresses) would
  // be the copy's too, closed in it by fork_worker yet still cached.
  sys::drop_cached_netlink_sockets();
  const int keep[] = {output};
  auto pid = sys::fork_worker(keep, [&] {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) ::signal(s, SIG_DFL);
    const int in = ::open("/dev/null", O_RDONLY);
    if (in < 0 || ::dup2(in, 0) < 0 || ::dup2(output, 1) < 0 || ::dup2(output, 2) < 0) return 127;
    if (in > 2) ::close(in);
    if (output > 2) ::close(output);
    if (::chdir(cwd.c_str()) != 0) return 127;
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    const int code = run_self(args);
    std::fflush(nullptr);
    return code;
  });
  if (!pid) return pid.error();
  return sys::Child(*pid);
}

Result<GuestRequest> read_request(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("no request in the share: " + path, errno);
  try {
    return GuestRequest::from_json(nlohmann::json::parse(in));
  } catch (const std::exception& e) {
    return make_error(std::string("bad request: ") + e.what());
  }
}

bool write_result(const std::string& path, const GuestResult& result) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << result.to_json().dump() << "\n";
    if (!out) return false;
  }
  return ::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

void guest_main(const RunSelf& run_self) {
  const std::string share(kShareMount);
  if (const char* go = std::getenv(kEnvGo); go && std::string_view(go) == "console") {
    double uptime_then = 0;
    const GoLine line = wait_for_go(&uptime_then);
    enter_host_root(line);
    take_go_line(line, uptime_then);
  }
  finish_root();
  auto request = read_request(share + "/request.json");
  if (!request) power_off(request.error().message);
  take_wire_macs(request->wire_macs);
  int output = open_output();
  if (output < 0) power_off(std::string("cannot open /dev/ttyS1: ") + std::strerror(errno));

  GuestResult result;
  result.uptime_at_start = uptime();
  char marker[96];
  std::snprintf(marker, sizeof marker, "%s uptime=%.2f", std::string(kStartedMarker).c_str(), result.uptime_at_start);
  say(marker);

  const std::string cwd = ::access(request->cwd.c_str(), X_OK) == 0 ? request->cwd : "/";
  const std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"HOME", "/root"},
      {"TERM", request->term},
      {"LANG", "C.UTF-8"},
      {"RXERUN_IN_LAB_VM", "1"}};
  auto child = request->program.empty() ? run_self_forked(run_self, request->args, cwd, env, output)
                                        : run_program(*request, cwd, env, output);
  if (!child) {
    result.exit_code = 3;
    result.ended = child.error().message;
  } else {
    // PID 1 reaps every orphan until the run itself ends.
    const pid_t main_pid = child->pid();
    for (;;) {
      int ws = 0;
      pid_t pid = ::waitpid(-1, &ws, 0);
      if (pid < 0 && errno == EINTR) continue;
      if (pid < 0) break;
      if (pid != main_pid) continue;
      sys::ExitStatus st;
      if (WIFSIGNALED(ws))
        st.signal = WTERMSIG(ws);
      else
        st.code = WEXITSTATUS(ws);
      result.exit_code = st.signal ? 128 + st.signal : st.code;
      result.ended = st.describe();
      break;
    }
    (void)child->release();
  }
  // Whatever the run left running goes now; the VM is about to vanish.
  ::kill(-1, SIGKILL);
  result.uptime_at_end = uptime();
  result.dmesg = sys::rdma_kernel_messages();
  ::tcdrain(output);
  if (!write_result(share + "/result.json", result)) say("rxerun-guest: cannot write the result into the share");
  say(std::string(kFinishedMarker) + " exit=" + std::to_string(result.exit_code));
  power_off("");
}

}  // namespace rxerun::vm
