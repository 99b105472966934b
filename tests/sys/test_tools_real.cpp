// The real Tools (sys/tools_real.h) with harmless programs: output captured
// (also more than a pipe holds), the environment, the deadline, Ctrl-C,
// SIGTERM then SIGKILL to the whole process group, a dropped tool killed, a
// missing program named. As root: a tool started inside a named namespace
// while the calling thread stays in its own, and a tool that does not die
// after SIGKILL (frozen by the cgroup v1 freezer, the way a process asleep in
// the kernel behaves) reported and let go. Last, the rping step end to end
// with the real Tools and stand-in `rping` scripts on PATH (the rest of the
// system fake): every pid the step reports is gone when it returns.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/registry.h"
#include "fakes/fake_system.h"
#include "steps/kinds.h"
#include "support/privileged.h"
#include "support/scenario_harness.h"
#include "sys/interrupt.h"
#include "sys/netns.h"
#include "sys/tools_real.h"

using namespace rxerun;
namespace fs = std::filesystem;

namespace {

sys::SteadyTime in(std::chrono::milliseconds d) {
  return std::chrono::steady_clock::now() + d;
}

bool gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

bool group_gone(pid_t pgid) {
  return ::kill(-pgid, 0) != 0 && errno == ESRCH;
}

std::unique_ptr<sys::RunningTool> start(sys::RealTools& tools, sys::ToolSpec spec) {
  auto t = tools.start(spec);
  REQUIRE_MESSAGE(t, (t ? "" : t.error().message));
  return std::move(*t);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

bool write_file(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace

TEST_CASE("tools (real): stdout and stderr are captured and the exit status kept") {
  sys::RealTools tools;
  sys::Interrupt interrupt;
  auto t = start(tools, {{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}});
  CHECK(t->wait(in(std::chrono::seconds(20)), interrupt) == sys::ToolWait::Exited);
  REQUIRE(t->poll());
  CHECK(t->poll()->code == 3);
  CHECK(t->out() == "out\n");
  CHECK(t->err() == "err\n");
  CHECK(t->stop(Duration(100)).status->code == 3);  // ended already: just says how
}

TEST_CASE("tools (real): the environment is set and output beyond a pipe's size is drained while waiting") {
  sys::RealTools tools;
  sys::Interrupt interrupt;
  auto env = start(tools, {{"/bin/sh", "-c", "echo $LC_ALL"}, std::nullopt, {{"LC_ALL", "C"}}});
  CHECK(env->wait(in(std::chrono::seconds(20)), interrupt) == sys::ToolWait::Exited);
  CHECK(env->out() == "C\n");
  auto big = start(tools, {{"/bin/sh", "-c", "head -c 1000000 /dev/zero; echo done >&2"}});
  CHECK(big->wait(in(std::chrono::seconds(20)), interrupt) == sys::ToolWait::Exited);
  CHECK(big->out().size() == 1000000);
  CHECK(big->err() == "done\n");
}

TEST_CASE("tools (real): a tool still running at the deadline is stopped with SIGTERM") {
  sys::RealTools tools;
  sys::Interrupt interrupt;
  auto t = start(tools, {{"/bin/sleep", "30"}});
  CHECK(t->wait(in(std::chrono::milliseconds(100)), interrupt) == sys::ToolWait::Deadline);
  CHECK_FALSE(t->poll());
  const pid_t pid = t->pid();
  const auto s = t->stop(Duration(2000));
  REQUIRE(s.status);
  CHECK(s.status->signal == SIGTERM);
  CHECK_FALSE(s.stuck);
  CHECK(gone(pid));
}

TEST_CASE("tools (real): one that ignores SIGTERM gets SIGKILL, and so does its whole process group") {
  sys::RealTools tools;
  sys::Interrupt interrupt;
  // The shell and its sleep both ignore SIGTERM; the sleep is in the group.
  auto t = start(tools, {{"/bin/sh", "-c", "trap '' TERM; /bin/sleep 30; echo never"}});
  CHECK(t->wait(in(std::chrono::milliseconds(200)), interrupt) == sys::ToolWait::Deadline);
  const pid_t pid = t->pid();
  const auto s = t->stop(Duration(200));
  REQUIRE(s.status);
  CHECK(s.status->signal == SIGKILL);
  // The group's other member (the sleep) may take a moment to be reaped by init.
  for (int i = 0; i < 100 && !group_gone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(group_gone(pid));
}

TEST_CASE("tools (real): Ctrl-C ends a wait at once, a dropped tool is killed") {
  sys::RealTools tools;
  sys::Interrupt interrupt;
  auto t = start(tools, {{"/bin/sleep", "30"}});
  const pid_t pid = t->pid();
  interrupt.request(SIGINT);
  CHECK(t->wait(sys::SteadyTime::max(), interrupt) == sys::ToolWait::Interrupted);
  t.reset();  // dropped while running
  CHECK(gone(pid));
}

TEST_CASE("tools (real): a program that is not installed is named") {
  sys::RealTools tools;
  auto t = tools.start({{"rxerun-no-such-tool", "-v"}});
  REQUIRE_FALSE(t);
  CHECK(t.error().message.find("rxerun-no-such-tool") != std::string::npos);
  CHECK(t.error().message.find("not installed") != std::string::npos);
}

TEST_CASE("tools (real): a tool starts inside a named namespace, the caller stays in its own") {
  testing::require_root();
  sys::RealNetns netns;
  const std::string name = "rxerun-tools-" + std::to_string(::getpid());
  REQUIRE(netns.create(name));
  const std::string own_before = fs::read_symlink("/proc/thread-self/ns/net").string();
  sys::RealTools tools;
  sys::Interrupt interrupt;
  auto t = start(tools, {{"/bin/readlink", "/proc/self/ns/net"}, name});
  CHECK(fs::read_symlink("/proc/thread-self/ns/net").string() == own_before);
  CHECK(t->wait(in(std::chrono::seconds(20)), interrupt) == sys::ToolWait::Exited);
  struct stat st {};
  REQUIRE(::stat(("/run/netns/" + name).c_str(), &st) == 0);
  CHECK(t->out() == "net:[" + std::to_string(st.st_ino) + "]\n");
  auto missing = tools.start({{"/bin/true"}, std::string("rxerun-no-such-netns")});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ENOENT);
  CHECK(missing.error().message.find("rxerun-no-such-netns") != std::string::npos);
  CHECK(netns.remove(name));
}

TEST_CASE("tools (real): a tool that survives SIGKILL is reported with its wait channel and let go") {
  testing::require_root();
  const std::string freezer = "/sys/fs/cgroup/freezer";
  if (!fs::exists(freezer + "/freezer.state") && !fs::exists(freezer + "/tasks"))
    testing::skip_test("no cgroup v1 freezer here to hold a process the way the kernel does");
  const std::string group = freezer + "/rxerun-tools-" + std::to_string(::getpid());
  REQUIRE(::mkdir(group.c_str(), 0755) == 0);
  sys::RealTools tools;
  tools.kill_wait = std::chrono::milliseconds(300);
  sys::Interrupt interrupt;
  auto t = start(tools, {{"/bin/sleep", "30"}});
  const pid_t pid = t->pid();
  REQUIRE(write_file(group + "/cgroup.procs", std::to_string(pid)));
  REQUIRE(write_file(group + "/freezer.state", "FROZEN"));
  for (int i = 0; i < 100 && read_file(group + "/freezer.state") != "FROZEN"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(read_file(group + "/freezer.state") == "FROZEN");

  const auto s = t->stop(Duration(100));
  CHECK(s.stuck);
  CHECK_FALSE(s.status);
  MESSAGE("wchan of the frozen process: '", s.wchan, "'");
  CHECK_FALSE(gone(pid));               // still there: let go, not waited for
  CHECK(t->stop(Duration(100)).stuck);  // asked again: the same answer, at once
  t.reset();                            // and dropping it does not block either

  // Thawed, it dies of the signals it has pending (SIGTERM comes first);
  // it is still this process's child, so the test reaps it.
  REQUIRE(write_file(group + "/freezer.state", "THAWED"));
  int ws = 0;
  CHECK(::waitpid(pid, &ws, 0) == pid);
  CHECK(WIFSIGNALED(ws));
  ::rmdir(group.c_str());
}

namespace {

// The rping step with the real Tools and clock; everything else fake.
struct RealToolsHarness : testing::ScenarioHarness {
  RealToolsHarness() : ScenarioHarness(Registry(steps::all_kinds())) {}
  fakes::FakeSystem fake;
  sys::RealClock clock;
  sys::RealTools tools;
  sys::System mixed = sys::with_tools(fake.system, tools, &clock);

 protected:
  sys::System& system() override { return mixed; }
};

// A directory with a stand-in `rping` put first on PATH for the scope.
class FakeRping {
 public:
  explicit FakeRping(const std::string& script) {
    char tmpl[] = "/tmp/rxerun-fake-rping.XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    dir_ = tmpl;
    std::ofstream(dir_ + "/rping") << "#!/bin/sh\n" << script;
    fs::permissions(dir_ + "/rping", fs::perms::owner_all);
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", (dir_ + ":" + old_path_).c_str(), 1);
  }
  ~FakeRping() {
    ::setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, old_path_;
};

}  // namespace

TEST_CASE("tools (real): the rping step leaves no process behind, passed or timed out") {
  SUBCASE("passed: the client's round trips; the waiting server stopped") {
    FakeRping rping(
        "case \"$1\" in\n"
        "  -s) exec /bin/sleep 30 ;;\n"
        "  -c) for i in 0 1 2; do echo \"ping data: rdma-ping-$i: ABC\"; done ;;\n"
        "esac\n");
    RealToolsHarness h;
    auto r = h.run("steps:\n  - name: r\n    rping: {server: 10.10.0.1, count: 3}\n");
    REQUIRE(r.exit_code == 0);
    const auto& s = testing::step_named(r, "r");
    CHECK(s.facts.at("iterations") == 3);
    CHECK(s.facts.at("server_exit") == "killed by SIGTERM");
    CHECK(gone(s.facts.at("server_pid").get<pid_t>()));
    CHECK(gone(s.facts.at("client_pid").get<pid_t>()));
  }
  SUBCASE("refused once while the server comes up, then passed") {
    FakeRping rping(
        "case \"$1\" in\n"
        "  -s) exec /bin/sleep 30 ;;\n"
        "  -c) if [ ! -e \"$(dirname \"$0\")/listening\" ]; then touch \"$(dirname \"$0\")/listening\";\n"
        "        echo 'cma event RDMA_CM_EVENT_REJECTED, error 8' >&2; exit 255; fi\n"
        "      echo 'ping data: rdma-ping-0: ABC' ;;\n"
        "esac\n");
    RealToolsHarness h;
    auto r = h.run("steps:\n  - name: r\n    rping: {server: 10.10.0.1, count: 1}\n");
    REQUIRE(r.exit_code == 0);
    CHECK(testing::step_named(r, "r").facts.at("attempts") == 2);
  }
  SUBCASE("timed out: a stalled client and its server both killed") {
    FakeRping rping("exec /bin/sleep 30\n");
    RealToolsHarness h;
    auto r = h.run("steps:\n  - name: r\n    rping: {server: 10.10.0.1}\n    timeout: 500ms\n    expect: timeout\n");
    REQUIRE(r.exit_code == 0);
    const auto& s = testing::step_named(r, "r");
    CHECK(s.outcome == Outcome::Timeout);
    CHECK(s.facts.at("client_exit") == "killed by SIGTERM");
    CHECK(gone(s.facts.at("server_pid").get<pid_t>()));
    CHECK(gone(s.facts.at("client_pid").get<pid_t>()));
  }
}
