// IcmpPinger and the ping step on real sockets, as root, inside a throwaway
// network namespace.

#include <doctest/doctest.h>

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "support/privileged.h"
#include "support/real_harness.h"
#include "sys/ping_icmp.h"

using namespace rxerun;
using rxerun::testing::loopback_up;
using rxerun::testing::RealHarness;
using rxerun::testing::ThrowawayNetns;
using std::chrono::steady_clock;

namespace {

bool ipv6_on_lo() {
  std::ifstream f("/proc/sys/net/ipv6/conf/lo/disable_ipv6");
  int disabled = 1;
  return f && (f >> disabled) && disabled == 0;
}

void write_proc(const std::string& path, const std::string& value) {
  std::ofstream f(path);
  REQUIRE(f);
  f << value;
  f.close();
  REQUIRE(f);
}

sys::PingSpec spec_to(const std::string& to, int count = 3, Duration interval = Duration(20)) {
  sys::PingSpec s;
  s.to = to;
  s.count = count;
  s.interval = interval;
  return s;
}

sys::SteadyTime far() {
  return steady_clock::now() + std::chrono::seconds(60);
}

}  // namespace

TEST_CASE("sys.ping: 127.0.0.1 answers every request, with round trips") {
  ThrowawayNetns ns;
  loopback_up();
  sys::IcmpPinger pinger;
  sys::Interrupt intr;
  auto r = pinger.ping(spec_to("127.0.0.1"), far(), intr);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->sent == 3);
  CHECK(r->received == 3);
  CHECK(r->send_errors == 0);
  REQUIRE(r->rtt_min_ms);
  REQUIRE(r->rtt_avg_ms);
  REQUIRE(r->rtt_max_ms);
  CHECK(*r->rtt_min_ms >= 0);
  CHECK(*r->rtt_min_ms <= *r->rtt_avg_ms);
  CHECK(*r->rtt_avg_ms <= *r->rtt_max_ms);
}

TEST_CASE("sys.ping: ::1 answers over ICMPv6") {
  ThrowawayNetns ns;
  loopback_up();
  if (!ipv6_on_lo()) rxerun::testing::skip_test("IPv6 is disabled here");
  sys::IcmpPinger pinger;
  sys::Interrupt intr;
  auto r = pinger.ping(spec_to("::1"), far(), intr);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->sent == 3);
  CHECK(r->received == 3);
  CHECK(r->rtt_avg_ms.has_value());
}

TEST_CASE("sys.ping: from an interface or a source address") {
  ThrowawayNetns ns;
  loopback_up();
  sys::IcmpPinger pinger;
  sys::Interrupt intr;

  auto dev = spec_to("127.0.0.1", 1);
  dev.from_dev = "lo";
  auto r = pinger.ping(dev, far(), intr);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->received == 1);

  auto addr = spec_to("127.0.0.1", 1);
  addr.from_addr = "127.0.0.1";
  r = pinger.ping(addr, far(), intr);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->received == 1);

  auto no_dev = spec_to("127.0.0.1", 1);
  no_dev.from_dev = "rxt-nope0";
  r = pinger.ping(no_dev, far(), intr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ENODEV);
  CHECK(r.error().message.find("rxt-nope0") != std::string::npos);

  auto foreign = spec_to("127.0.0.1", 1);
  foreign.from_addr = "192.0.2.1";  // not an address of this namespace
  r = pinger.ping(foreign, far(), intr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == EADDRNOTAVAIL);
  CHECK(r.error().message.find("192.0.2.1") != std::string::npos);

  auto mixed = spec_to("127.0.0.1", 1);
  mixed.from_addr = "::1";
  r = pinger.ping(mixed, far(), intr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("address family") != std::string::npos);
}

TEST_CASE("sys.ping: an address without a route gets no reply and says why") {
  ThrowawayNetns ns;
  loopback_up();
  sys::IcmpPinger pinger;
  sys::Interrupt intr;
  auto r = pinger.ping(spec_to("192.0.2.1", 2), far(), intr);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->sent == 2);
  CHECK(r->received == 0);
  CHECK(r->send_errors == 2);
  CHECK(r->send_error == std::strerror(ENETUNREACH));
  CHECK_FALSE(r->rtt_avg_ms.has_value());
}

TEST_CASE("sys.ping: a silent neighbour gets no reply after the wait") {
  ThrowawayNetns ns;
  loopback_up();
  REQUIRE(std::system("ip link add rxt-pA type veth peer name rxt-pB && ip addr add 192.0.2.1/24 dev rxt-pA && "
                      "ip link set rxt-pA up && ip link set rxt-pB up") == 0);
  sys::IcmpPinger pinger;
  sys::Interrupt intr;
  auto spec = spec_to("192.0.2.2", 2);
  spec.wait = Duration(300);
  const auto start = steady_clock::now();
  auto r = pinger.ping(spec, far(), intr);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->sent == 2);
  CHECK(r->received == 0);
  // It waited the `wait` after the last request (an order, not a timing bound).
  CHECK(steady_clock::now() - start >= spec.interval + spec.wait);
}

TEST_CASE("sys.ping: only its own replies count when two pings run at once") {
  ThrowawayNetns ns;
  loopback_up();
  sys::IcmpPinger a, b;
  sys::Interrupt intr;
  // The other ping runs in another process, as another ping program would;
  // both raw sockets see both streams of replies.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    sys::Interrupt ci;
    auto r = b.ping(spec_to("127.0.0.1", 10, Duration(10)), steady_clock::now() + std::chrono::seconds(30), ci);
    ::_exit(r.ok() && r->received == 10 ? 0 : 1);
  }
  auto r = a.ping(spec_to("127.0.0.1", 10, Duration(10)), far(), intr);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->sent == 10);
  CHECK(r->received == 10);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("sys.ping: an interrupt stops a long ping at once, with what it has") {
  ThrowawayNetns ns;
  loopback_up();
  sys::IcmpPinger pinger;
  sys::Interrupt intr;
  std::thread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    intr.request(SIGINT);
  });
  const auto start = steady_clock::now();
  auto r = pinger.ping(spec_to("127.0.0.1", 1000, Duration(100)), far(), intr);  // 100 s if left alone
  ctrl_c.join();
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(r->sent >= 1);
  CHECK(r->sent < 100);
  CHECK(r->received >= 1);
  CHECK(steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("sys.ping: the deadline cuts a long ping short") {
  ThrowawayNetns ns;
  loopback_up();
  sys::IcmpPinger pinger;
  sys::Interrupt intr;
  const auto deadline = steady_clock::now() + std::chrono::milliseconds(300);
  auto r = pinger.ping(spec_to("127.0.0.1", 1000, Duration(50)), deadline, intr);  // 50 s if left alone
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  CHECK(steady_clock::now() >= deadline);
  CHECK(r->sent >= 1);
  CHECK(r->sent < 1000);
  CHECK(steady_clock::now() - deadline < std::chrono::seconds(30));
}

TEST_CASE("sys.ping: without root it falls back to a ping socket, or says what it needs") {
  ThrowawayNetns ns;
  loopback_up();
  // Ping sockets are allowed to the groups in this namespace's range.
  write_proc("/proc/sys/net/ipv4/ping_group_range", "65534 65534");
  auto as_nobody = [](bool expect_ok) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
          ::setresuid(65534, 65534, 65534) != 0)
        ::_exit(10);
      sys::IcmpPinger pinger;
      sys::Interrupt intr;
      auto r = pinger.ping(spec_to("127.0.0.1", 2), steady_clock::now() + std::chrono::seconds(30), intr);
      if (expect_ok) ::_exit(r.ok() && r->received == 2 ? 0 : 11);
      ::_exit(!r.ok() && r.error().message.find("CAP_NET_RAW") != std::string::npos ? 0 : 12);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
  };
  CHECK(as_nobody(true) == 0);
  write_proc("/proc/sys/net/ipv4/ping_group_range", "1 0");  // nobody may
  CHECK(as_nobody(false) == 0);
}

TEST_CASE("sys.ping: the ping step for real") {
  ThrowawayNetns ns;
  loopback_up();
  RealHarness h;
  auto r = h.run(R"(
name: ping-real
steps:
  - name: ok
    ping: {to: 127.0.0.1, count: 2, interval: 20ms, from: lo}
    expect: {received: 2, loss_pct: 0, rtt_avg_ms: ">= 0"}
  - name: nowhere
    ping: {to: 192.0.2.1, count: 1}
    expect: fail
)");
  for (const auto& s : r.steps) CHECK_MESSAGE(s.status == StepStatus::Passed, s.name, ": ", s.message);
  CHECK(r.exit_code == 0);
  REQUIRE(r.steps.size() == 2);
  CHECK(r.steps[1].message.find("Network is unreachable") != std::string::npos);
  CHECK(r.cleanup.undos.empty());
}
