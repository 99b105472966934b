// ping: the step's judgement and facts, against FakePinger and virtual time.

#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>

#include "fakes/harness.h"

using namespace rxerun;
using fakes::step_named;

TEST_CASE("ping: every reply back passes, with the facts ping(8) prints") {
  fakes::Harness h;
  auto r = h.run("steps:\n  - name: p\n    ping: {to: 10.10.0.1}\n");
  CHECK(r.exit_code == 0);
  const auto& s = step_named(r, "p");
  CHECK(s.status == StepStatus::Passed);
  CHECK(s.facts["sent"] == 3);
  CHECK(s.facts["received"] == 3);
  CHECK(s.facts["loss_pct"] == 0);
  CHECK(s.facts["changed"] == false);
  CHECK(s.facts["rtt_min_ms"] == 0.05);
  CHECK(s.facts["rtt_avg_ms"] == 0.07);
  CHECK(s.facts["rtt_max_ms"] == 0.1);
  REQUIRE(h.fake.pinger.calls.size() == 1);
  const auto& spec = h.fake.pinger.calls[0];
  CHECK(spec.to == "10.10.0.1");
  CHECK(spec.count == 3);
  CHECK(spec.interval == Duration(200));
  CHECK(spec.from_dev.empty());
  CHECK(spec.from_addr.empty());
  // It changes nothing: nothing to undo.
  CHECK(r.cleanup.undos.empty());
  CHECK(h.journal.pending().empty());
}

TEST_CASE("ping: some replies back still pass, with the loss") {
  fakes::Harness h;
  h.fake.pinger.replies = 2;
  auto r = h.run(
      "steps:\n  - name: p\n    ping: {to: 'fd00::1', count: 3, interval: 10ms}\n    expect: {loss_pct: '> 30'}\n");
  CHECK(r.exit_code == 0);
  CHECK(step_named(r, "p").facts["loss_pct"] == 33.3);
  CHECK(h.fake.pinger.calls[0].interval == Duration(10));
}

TEST_CASE("ping: no reply fails, without round-trip facts") {
  fakes::Harness h;
  h.fake.pinger.replies = 0;
  auto r = h.run("steps:\n  - name: p\n    ping: {to: 10.10.0.1, count: 2}\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "p");
  CHECK(s.status == StepStatus::Failed);
  CHECK(s.outcome == Outcome::Fail);
  CHECK(s.message == "no reply from 10.10.0.1 (2 echo requests sent)");
  CHECK(s.facts["received"] == 0);
  CHECK(s.facts["loss_pct"] == 100);
  CHECK_FALSE(s.facts.contains("rtt_avg_ms"));
  CHECK_FALSE(s.hints.empty());
}

TEST_CASE("ping: an expected failure passes") {
  fakes::Harness h;
  h.fake.pinger.replies = 0;
  auto r = h.run("steps:\n  - name: p\n    ping: {to: 10.10.0.1}\n    expect: fail\n");
  CHECK(r.exit_code == 0);
  CHECK(step_named(r, "p").status == StepStatus::Passed);
}

TEST_CASE("ping: requests the kernel refused are failures that say why") {
  fakes::Harness h;
  h.fake.pinger.send_error = std::strerror(EPERM);
  auto r = h.run("steps:\n  - name: p\n    ping: {to: 10.10.0.1, count: 2}\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "p");
  CHECK(s.message.find("could not be sent: " + std::string(std::strerror(EPERM))) != std::string::npos);
  REQUIRE(s.hints.size() == 1);
  CHECK(s.hints[0].find("output hook") != std::string::npos);

  fakes::Harness h2;
  h2.fake.pinger.send_error = std::strerror(ENETUNREACH);
  auto r2 = h2.run("steps:\n  - name: p\n    ping: {to: 10.10.0.1}\n");
  REQUIRE(step_named(r2, "p").hints.size() == 1);
  CHECK(step_named(r2, "p").hints[0].find("no route to 10.10.0.1") != std::string::npos);
}

TEST_CASE("ping: from names an interface or a source address") {
  fakes::Harness h;
  auto r = h.run(R"(
steps:
  - ping: {to: 10.10.0.1, from: vB}
  - ping: {to: 10.10.0.1, from: 10.10.0.2}
  - ping: {to: 'fd00::1', from: 'fd00::2'}
)");
  CHECK(r.exit_code == 0);
  REQUIRE(h.fake.pinger.calls.size() == 3);
  CHECK(h.fake.pinger.calls[0].from_dev == "vB");
  CHECK(h.fake.pinger.calls[0].from_addr.empty());
  CHECK(h.fake.pinger.calls[1].from_addr == "10.10.0.2");
  CHECK(h.fake.pinger.calls[1].from_dev.empty());
  CHECK(h.fake.pinger.calls[2].from_addr == "fd00::2");
}

TEST_CASE("ping: a from that is neither an address nor an interface is an error naming the place") {
  fakes::Harness h;
  auto r = h.run("steps:\n  - ping: {to: 10.10.0.1, from: 'not an interface/'}\n");
  CHECK(r.exit_code == 3);
  CHECK(r.steps[0].message.find("test.yaml:2:") == 0);
  CHECK(r.steps[0].message.find("neither an address nor an interface") != std::string::npos);
  CHECK(h.fake.pinger.calls.empty());
}

TEST_CASE("ping: bad values are caught before anything runs") {
  fakes::Harness h;
  CHECK(h.diagnostics("steps:\n  - ping: {to: not-an-address}\n").find("to") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - ping: {to: 10.0.0.1, count: 0}\n").find("count") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - ping: {count: 2}\n").find("to") != std::string::npos);
  CHECK(h.diagnostics("steps:\n  - ping: {to: 10.0.0.1, wait: 1s}\n").find("wait") != std::string::npos);
  auto r = h.run("steps:\n  - ping: {to: 10.10.0.1, interval: 0ms}\n");
  CHECK(r.exit_code == 3);
  CHECK(r.steps[0].message.find("interval must be at least 1ms") != std::string::npos);
}

TEST_CASE("ping: a pinger that cannot run makes the step an error") {
  fakes::Harness h;
  h.fake.kernel.fail("ping", EPERM, "", 1, 0,
                     "ping needs root (CAP_NET_RAW), or a group of this user in net.ipv4.ping_group_range");
  auto r = h.run("steps:\n  - ping: {to: 10.10.0.1}\n    expect: fail\n");
  CHECK(r.exit_code == 3);
  CHECK(r.steps[0].status == StepStatus::Error);
  CHECK(r.steps[0].message.find("CAP_NET_RAW") != std::string::npos);
}

TEST_CASE("ping: the step's timeout cuts a long ping short and says what to raise") {
  fakes::Harness h;
  h.fake.pinger.takes = Duration(20'000);  // 100 requests, 200ms apart
  auto r = h.run("steps:\n  - name: p\n    ping: {to: 10.10.0.1, count: 100}\n");
  const auto& s = step_named(r, "p");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(s.facts["sent"].get<int>() < 100);
  CHECK(s.message.find("raise `timeout`") != std::string::npos);
  CHECK(r.exit_code == 1);

  // With a timeout that fits it passes.
  fakes::Harness h2;
  h2.fake.pinger.takes = Duration(20'000);
  auto r2 = h2.run("steps:\n  - name: p\n    ping: {to: 10.10.0.1, count: 100}\n    timeout: 30s\n");
  CHECK(r2.exit_code == 0);
  CHECK(step_named(r2, "p").facts["sent"] == 100);
}
