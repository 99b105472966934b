// The parts of the real verbs check that run without an RDMA device: the
// Waiter every wait goes through (deadline, Ctrl-C, the other side's
// failure, a ready fd), and the worker process on a machine whose kernel
// has no RDMA device (this project's own): an Error that says why, and the
// worker reaped. The check itself runs in the lab VM (tests/vm/verbs.sh).

#include <doctest/doctest.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

#include <filesystem>
#include <thread>

#include "sys/interrupt.h"
#include "sys/verbs/real.h"
#include "sys/verbs/resources.h"

using namespace rxerun;
using namespace rxerun::sys;
using SteadyClock = std::chrono::steady_clock;

namespace {

bool has_rdma_device() {
  std::error_code ec;
  return std::filesystem::exists("/sys/class/infiniband", ec) &&
         !std::filesystem::is_empty("/sys/class/infiniband", ec);
}

}  // namespace

TEST_CASE("verbs waiter: a passed deadline ends the wait at once") {
  Interrupt interrupt;
  verbs::Waiter w(SteadyClock::now() - std::chrono::seconds(1), interrupt.fd());
  UniqueFd never(::eventfd(0, EFD_CLOEXEC));
  CHECK(w.wait({never.get()}) == verbs::Wake::Deadline);
}

TEST_CASE("verbs waiter: Ctrl-C ends the wait, before the deadline") {
  Interrupt interrupt;
  verbs::Waiter w(SteadyClock::now() + std::chrono::hours(1), interrupt.fd());
  UniqueFd never(::eventfd(0, EFD_CLOEXEC));
  interrupt.request(SIGINT);
  CHECK(w.wait({never.get()}) == verbs::Wake::Interrupted);
}

TEST_CASE("verbs waiter: the other side's abort ends the wait, a ready fd is named") {
  Interrupt interrupt;
  verbs::Waiter w(SteadyClock::now() + std::chrono::hours(1), interrupt.fd());
  UniqueFd never(::eventfd(0, EFD_CLOEXEC)), ready(::eventfd(1, EFD_CLOEXEC));
  std::size_t which = 99;
  CHECK(w.wait({never.get(), ready.get()}, &which) == verbs::Wake::Ready);
  CHECK(which == 1);
  std::thread other([&] { w.abort(); });
  CHECK(w.wait({never.get()}) == verbs::Wake::Aborted);
  other.join();
  CHECK(w.aborted());
}

TEST_CASE("verbs waiter: a bound sooner than the deadline ends the wait as a deadline") {
  Interrupt interrupt;
  verbs::Waiter w(SteadyClock::now() + std::chrono::hours(1), interrupt.fd());
  UniqueFd never(::eventfd(0, EFD_CLOEXEC));
  CHECK(w.wait({never.get()}, nullptr, SteadyClock::now()) == verbs::Wake::Deadline);
}

TEST_CASE("verbs pattern: every byte checked, the first difference found") {
  std::vector<std::uint8_t> buf(70000);
  verbs::fill_pattern(buf.data(), buf.size(), 5);
  std::size_t first = 0;
  CHECK(verbs::count_mismatches(buf.data(), buf.size(), 5, &first) == 0);
  CHECK(verbs::count_mismatches(buf.data(), buf.size(), 6, &first) > 0);  // another pattern
  buf[65537] ^= 1;
  buf[69999] ^= 0x80;
  CHECK(verbs::count_mismatches(buf.data(), buf.size(), 5, &first) == 2);
  CHECK(first == 65537);
  // Not periodic at 256: a shifted copy does not pass.
  CHECK(verbs::count_mismatches(buf.data() + 256, 1024, 5, &first) > 0);
}

TEST_CASE("verbs real: without an RDMA device the worker reports why, and is reaped") {
  if (has_rdma_device()) {
    std::printf("SKIPPED: this kernel has an RDMA device\n");
    return;
  }
  Interrupt interrupt;
  RealVerbs verbs;
  VerbsRequest self;
  self.mode = VerbsMode::Self;
  self.dev = "rxe0";
  auto r = verbs.run(self, SteadyClock::now() + std::chrono::seconds(30), interrupt);
  REQUIRE_FALSE(r.ok());
  CAPTURE(r.error().message);
  const std::string& m = r.error().message;
  CHECK((m.find("libibverbs") != std::string::npos));
  // The worker is gone: no child of ours is left to reap.
  const pid_t left = ::waitpid(-1, nullptr, WNOHANG);
  const int err = errno;
  CHECK(left == -1);
  CHECK(err == ECHILD);

  VerbsRequest cm;
  cm.server.addr = "10.99.0.1";
  auto c = verbs.run(cm, SteadyClock::now() + std::chrono::seconds(30), interrupt);
  REQUIRE_FALSE(c.ok());  // no rdma_cm device, or no device to bind to
  CAPTURE(c.error().message);
  CHECK_FALSE(c.error().message.empty());
}
