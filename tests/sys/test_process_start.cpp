// A process's start time: what tells it from a later process given its pid.

#include <doctest/doctest.h>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "sys/process_start.h"

using namespace rxerun;

namespace {

// Field 22 of /proc/PID/stat as awk(1) splits it: right only for a plain
// command name, which is what the cases that use it have.
std::uint64_t field22(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string word;
  for (int i = 1; i <= 22 && in >> word; ++i) {
  }
  return std::stoull(word);
}

// A child that waits on a pipe until told to end (or renamed first).
struct Sleeper {
  pid_t pid = -1;
  int to_child = -1, from_child = -1;

  explicit Sleeper(const char* name = nullptr) {
    int down[2], up[2];
    REQUIRE(::pipe(down) == 0);
    REQUIRE(::pipe(up) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(down[1]);  // else its own copy keeps the read below from ending
      ::close(up[0]);
      if (name) ::prctl(PR_SET_NAME, name, 0, 0, 0);
      char c = 'r';
      (void)!::write(up[1], &c, 1);
      (void)!::read(down[0], &c, 1);
      ::_exit(0);
    }
    ::close(down[0]);
    ::close(up[1]);
    to_child = down[1];
    from_child = up[0];
    char c;
    REQUIRE(::read(from_child, &c, 1) == 1);  // renamed, if asked
  }
  void end() {
    if (pid <= 0) return;
    ::close(to_child);
    ::close(from_child);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
  ~Sleeper() { end(); }
};

}  // namespace

TEST_CASE("sys.process_start: a process's start time is field 22 of its stat, and stays") {
  auto mine = sys::process_start_time(::getpid());
  REQUIRE(mine);
  CHECK(*mine == field22(::getpid()));
  CHECK(*sys::process_start_time(::getpid()) == *mine);

  Sleeper child;
  auto theirs = sys::process_start_time(child.pid);
  REQUIRE(theirs);
  CHECK(*theirs == field22(child.pid));
  CHECK(*theirs >= *mine);  // started after this process (ticks of 10 ms may tie)
}

TEST_CASE("sys.process_start: a command name with spaces and parentheses does not shift the fields") {
  Sleeper plain;
  const std::uint64_t expected = field22(plain.pid);
  plain.end();
  Sleeper odd("a) 1 2 (b c)");
  auto t = sys::process_start_time(odd.pid);
  REQUIRE(t);
  std::ifstream in("/proc/" + std::to_string(odd.pid) + "/stat");
  std::stringstream text;
  text << in.rdbuf();
  CAPTURE(text.str());
  REQUIRE(text.str().find("(a) 1 2 (b c))") != std::string::npos);
  // Started after `plain`; awk-style splitting would read another field.
  CHECK(*t >= expected);
  const auto tail = text.str().substr(text.str().rfind(')') + 2);
  std::istringstream fields(tail);
  std::string word;
  for (int i = 3; i <= 22 && fields >> word; ++i) {
  }
  CHECK(*t == std::stoull(word));
}

TEST_CASE("sys.process_start: a process that is gone, and a pid that cannot be one") {
  Sleeper child;
  const pid_t pid = child.pid;
  child.end();
  auto gone = sys::process_start_time(pid);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == ESRCH);
  for (pid_t bad : {0, -1}) {
    auto r = sys::process_start_time(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == EINVAL);
  }
}
