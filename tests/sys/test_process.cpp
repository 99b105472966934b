// Child processes: started without a shell, captured, stopped as a group,
// and never outliving rxerun.

#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "sys/process.h"

using namespace rxerun;
using namespace std::chrono_literals;

namespace {

bool gone(pid_t pid, std::chrono::milliseconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

}  // namespace

TEST_CASE("sys.process: a program that is not installed is named") {
  auto r = sys::run_command({"rxerun-no-such-program", "x"}, 5s);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "cannot run rxerun-no-such-program: not installed (not found in PATH)");
}

TEST_CASE("sys.process: exit code, stdout and stderr come back separately") {
  auto r = sys::run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, 5s);
  REQUIRE(r);
  CHECK(r->status.code == 3);
  CHECK_FALSE(r->status.ok());
  CHECK(r->status.describe() == "exit 3");
  CHECK(r->out == "out\n");
  CHECK(r->err == "err\n");
  CHECK_FALSE(r->timed_out);
}

TEST_CASE("sys.process: a timeout stops the whole process group") {
  // The shell starts a grandchild; stopping the group must take it along.
  auto r = sys::run_command({"sh", "-c", "sleep 60 & echo $!; wait"}, 300ms);
  REQUIRE(r);
  CHECK(r->timed_out);
  CHECK(r->status.signal == SIGTERM);
  const pid_t grandchild = static_cast<pid_t>(std::stoi(r->out));
  CHECK(gone(grandchild, 3s));
}

TEST_CASE("sys.process: the environment and working directory are the child's") {
  sys::SpawnOptions o;
  o.cwd = "/usr";
  o.env = {{"RXERUN_TEST_VALUE", "42"}};
  auto r = sys::run_command({"sh", "-c", "echo $PWD $RXERUN_TEST_VALUE"}, 5s, o);
  REQUIRE(r);
  CHECK(r->out == "/usr 42\n");
}

TEST_CASE("sys.process: the child's own PATH finds its program, and its variables replace rxerun's") {
  char dir_template[] = "/tmp/rxerun-path-XXXXXX";
  REQUIRE(::mkdtemp(dir_template));
  const std::string dir = dir_template;
  const std::string tool = dir + "/rxerun-test-tool";
  {
    UniqueFd f(::open(tool.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755));
    REQUIRE(f.get() >= 0);
    const std::string script = "#!/bin/sh\necho \"tool $HOME\"\n";
    REQUIRE(::write(f.get(), script.data(), script.size()) == static_cast<ssize_t>(script.size()));
  }
  sys::SpawnOptions o;
  o.env = {{"PATH", dir + ":/usr/bin:/bin"}, {"HOME", "/elsewhere"}};
  auto r = sys::run_command({"rxerun-test-tool"}, 5s, o);
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(r->out == "tool /elsewhere\n");
  // rxerun's own PATH does not have it.
  auto missing = sys::run_command({"rxerun-test-tool"}, 5s);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ENOENT);
  // A directory of that name is no program.
  sys::SpawnOptions d;
  d.env = {{"PATH", "/"}};
  auto not_a_file = sys::run_command({"tmp"}, 5s, d);
  REQUIRE_FALSE(not_a_file);
  ::unlink(tool.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("sys.process: a child dies with the process that started it") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    auto child = sys::spawn({"sleep", "60"});
    pid_t pid = child ? child->pid() : -1;
    (void)!::write(fds[1], &pid, sizeof pid);
    ::_exit(0);  // no destructor: only PR_SET_PDEATHSIG can stop the sleep
  }
  ::close(fds[1]);
  pid_t sleeper = -1;
  REQUIRE(::read(fds[0], &sleeper, sizeof sleeper) == static_cast<ssize_t>(sizeof sleeper));
  ::close(fds[0]);
  ::waitpid(parent, nullptr, 0);
  REQUIRE(sleeper > 0);
  CHECK(gone(sleeper, 5s));
}

TEST_CASE("sys.process: a Child going out of scope is killed and reaped") {
  pid_t pid = -1;
  {
    auto child = sys::spawn({"sleep", "60"});
    REQUIRE(child);
    pid = child->pid();
    CHECK(child->running());
  }
  CHECK(::kill(pid, 0) != 0);
}

TEST_CASE("sys.process: extra fds reach the child at the number asked") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  sys::SpawnOptions o;
  o.fds = {{3, fds[1]}};
  auto r = sys::run_command({"sh", "-c", "echo via-fd3 >&3"}, 5s, o);
  ::close(fds[1]);
  REQUIRE(r);
  CHECK(r->status.ok());
  char buf[32] = {};
  CHECK(::read(fds[0], buf, sizeof buf - 1) == 8);
  CHECK(std::string(buf) == "via-fd3\n");
  ::close(fds[0]);
}

namespace {

// A file held with flock() and inherited across fork, as the scenario's
// lock is: opened without O_CLOEXEC, at a distinctive descriptor number.
struct HeldLock {
  std::string path = "/tmp/rxerun-lock-test-" + std::to_string(::getpid());
  UniqueFd fd;
  HeldLock() {
    const UniqueFd opened(::open(path.c_str(), O_RDWR | O_CREAT, 0600));
    REQUIRE(opened.valid());
    fd.reset(::dup2(opened.get(), 77));
    REQUIRE(fd.get() == 77);
    REQUIRE(::flock(fd.get(), LOCK_EX | LOCK_NB) == 0);
  }
  ~HeldLock() { ::unlink(path.c_str()); }
  // Whether another holder still has it: after our own descriptor is closed.
  bool free_after_close() {
    fd.reset();
    const UniqueFd again(::open(path.c_str(), O_RDWR));
    return again.valid() && ::flock(again.get(), LOCK_EX | LOCK_NB) == 0;
  }
};

// The descriptors open in this process, up to 1024 (no allocation: safe
// after fork).
int open_fds(int* out, int max) {
  int n = 0;
  for (int fd = 0; fd < 1024 && n < max; ++fd)
    if (::fcntl(fd, F_GETFD) >= 0) out[n++] = fd;
  return n;
}

}  // namespace

TEST_CASE("sys.process: a forked worker keeps only stdio and what it was given, not the lock") {
  HeldLock lock;
  int report[2], hold[2];
  REQUIRE(::pipe2(report, O_CLOEXEC) == 0);
  REQUIRE(::pipe(hold) == 0);  // no O_CLOEXEC: like a descriptor a library opened
  const int keep[] = {report[1]};
  auto pid = sys::fork_worker(keep, [&] {
    int fds[64];
    const int n = open_fds(fds, 64);
    (void)!::write(report[1], fds, sizeof(int) * static_cast<std::size_t>(n));
    ::close(report[1]);
    ::pause();  // until killed: the lock must already be free meanwhile
    return 0;
  });
  REQUIRE(pid.ok());
  ::close(report[1]);
  int fds[64] = {};
  ssize_t got = 0;
  for (ssize_t n; (n = ::read(report[0], reinterpret_cast<char*>(fds) + got, sizeof fds - got)) > 0;) got += n;
  ::close(report[0]);
  std::vector<int> seen(fds, fds + got / static_cast<ssize_t>(sizeof(int)));
  CAPTURE(seen);
  CHECK(std::find(seen.begin(), seen.end(), report[1]) != seen.end());
  CHECK(std::find(seen.begin(), seen.end(), 77) == seen.end());
  CHECK(std::find(seen.begin(), seen.end(), hold[0]) == seen.end());
  CHECK(std::find(seen.begin(), seen.end(), hold[1]) == seen.end());
  for (int fd : seen) CHECK((fd <= 2 || fd == report[1]));
  // The behaviour that matters: the worker does not keep the scenario's lock.
  CHECK(lock.free_after_close());
  ::kill(*pid, SIGKILL);
  int status = 0;
  ::waitpid(*pid, &status, 0);
  ::close(hold[0]);
  ::close(hold[1]);
}

TEST_CASE("sys.process: a spawned program inherits no descriptor of rxerun's but those it was given") {
  HeldLock lock;
  // Without O_CLOEXEC, at numbers of their own: the write end is passed on
  // purpose as fd 3, the read end is not passed.
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const int given[2] = {::dup2(pipe_fds[0], 60), ::dup2(pipe_fds[1], 61)};
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  REQUIRE(given[0] == 60);
  REQUIRE(given[1] == 61);
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  sys::SpawnOptions o;
  o.stdout_fd = out[1];
  o.fds = {{3, given[1]}};
  // The shell lists its own descriptors, then holds on until stdin (the
  // pipe below) ends, so the lock is tested while it runs.
  int in[2];
  REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
  o.stdin_fd = in[0];
  auto child = sys::spawn({"/bin/sh", "-c", "ls /proc/$$/fd; echo end; read x"}, o);
  REQUIRE(child.ok());
  ::close(out[1]);
  ::close(in[0]);
  std::string text;
  char buf[512];
  while (text.find("end\n") == std::string::npos) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  CAPTURE(text);
  std::vector<std::string> fds;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t nl = text.find('\n', i);
    fds.push_back(text.substr(i, nl - i));
    i = nl == std::string::npos ? text.size() : nl + 1;
  }
  auto has = [&](const std::string& fd) { return std::find(fds.begin(), fds.end(), fd) != fds.end(); };
  CHECK(has("0"));
  CHECK(has("1"));
  CHECK(has("3"));  // what it was given
  CHECK_FALSE(has("77"));
  CHECK_FALSE(has("60"));
  CHECK_FALSE(has("61"));
  CHECK(lock.free_after_close());
  ::close(in[1]);  // `read` ends
  child->wait();
  ::close(out[0]);
  ::close(given[0]);
  ::close(given[1]);
}
