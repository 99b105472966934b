// Child processes: started without a shell, captured, stopped as a group,
// and never outliving rxerun.

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

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

TEST_CASE("sys.process: shell_quote quotes only what needs it") {
  CHECK(sys::shell_quote({"ip", "link", "add", "vA"}) == "ip link add vA");
  CHECK(sys::shell_quote({"echo", "a b", "it's"}) == "echo 'a b' 'it'\\''s'");
  CHECK(sys::shell_quote({""}) == "''");
}
