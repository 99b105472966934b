// nvme_connect: the host side on the fake fabrics: connect, wait for the
// block device, cleanup deletes only the controller the run made (by
// instance, NQN, transport and address), a refused connect is `fail` with
// the errno and the kernel's lines, a live controller is adopted and left,
// and bad input is refused at FILE:LINE:COL.

#include <doctest/doctest.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/runner.h"
#include "fakes/harness.h"
#include "steps/common/nvme_fabrics.h"

using namespace rxerun;
using fakes::service_log;
using fakes::step_named;
using Strings = std::vector<std::string>;

namespace {

const std::string kConnectNqn = "nqn.2026-01.io.rxerun:lab";

const std::string kLab =
    "steps:\n"
    "  - name: target\n"
    "    nvmet: {nqn: " +
    kConnectNqn +
    ", namespace: {null_blk: {size: 64MiB}}, port: {address: 10.10.0.1}}\n"
    "  - name: host\n"
    "    nvme_connect: {address: 10.10.0.1, nqn: " +
    kConnectNqn + "}\n";

// The first diagnostic, without the newline that ends each.
}  // namespace

TEST_CASE("nvme_connect: connects, waits for the namespace's block device, and cleanup disconnects first") {
  fakes::Harness h;
  h.fake.nvme.devices_after = 3;  // the kernel scans the namespaces after it answered
  auto r = h.run_keep(kLab);
  REQUIRE(r.exit_code == 0);
  const auto& s = step_named(r, "host");
  CHECK(s.facts.at("controller") == "nvme0");
  CHECK(s.facts.at("device") == "/dev/nvme0n1");
  CHECK(s.facts.at("devices") == nlohmann::json::array({"/dev/nvme0n1"}));
  CHECK(s.facts.at("instance") == 0);
  CHECK(s.facts.at("cntlid") == 1);
  CHECK(s.facts.at("changed") == true);
  CHECK(h.fake.clock.waits == std::vector<Duration>(3, Duration{50}));
  CHECK(h.fake.modules.live.count("nvme_rdma"));
  CHECK(std::ranges::count(service_log(h.fake, "nvme"),
                           "connect to NVMe subsystem " + kConnectNqn + " over rdma at 10.10.0.1:4420") == 1);

  h.fake.kernel.actions.clear();
  auto c = h.cleanup();
  CHECK(c.clean());
  REQUIRE(c.undos.size() >= 2);
  CHECK(c.undos[0].summary == "disconnect the NVMe controller of " + kConnectNqn + " at rdma 10.10.0.1 service 4420");
  CHECK(service_log(h.fake, {"storage", "nvme"}).front() ==
        "disconnect NVMe controller nvme0");  // before the target comes apart
  CHECK(h.fake.nvme.ctrls.empty());
  CHECK_FALSE(h.fake.modules.live.count("nvme_rdma"));
  CHECK(h.cleanup().undos.empty());
}

TEST_CASE("nvme_connect: a port nobody listens on is `fail`, with the errno and the kernel's lines") {
  fakes::Harness h;
  h.fake.nvme.kernel_log = {"[   34.041508] nvme nvme1: Connect rejected: status 8 (invalid service ID).",
                            "[   34.041856] nvme nvme1: rdma connection establishment failed (-104)"};
  auto r = h.run(kLab + "  - name: nobody\n    nvme_connect: {address: 10.10.0.1, service: 4421, nqn: " + kConnectNqn +
                 "}\n    expect: fail\n");
  CHECK(r.exit_code == 0);
  const auto& s = step_named(r, "nobody");
  CHECK(s.outcome == Outcome::Fail);
  CHECK(s.facts.at("errno") == "ECONNRESET");
  CHECK(s.facts.at("error") == "Connection reset by peer");
  CHECK(contains(s.message, "the kernel refused the connect to " + kConnectNqn +
                                " at rdma 10.10.0.1 service 4421: Connection reset by peer (ECONNRESET)"));
  const std::string hints = join(s.hints, "\n");
  CHECK(contains(hints, "kernel: [   34.041508] nvme nvme1: Connect rejected: status 8 (invalid service ID)."));
  CHECK(contains(hints, "rdma connection establishment failed (-104)"));
  CHECK(r.cleanup.clean());
  CHECK(h.fake.nvme.ctrls.empty());
}

TEST_CASE("nvme_connect: a host the target does not allow is refused") {
  fakes::Harness h;
  auto r = h.run(
      "steps:\n"
      "  - nvmet: {nqn: " +
      kConnectNqn +
      ", namespace: {null_blk: {size: 64MiB}}, port: {address: 10.10.0.1}, hosts: [nqn.host:a]}\n"
      "  - name: b\n"
      "    nvme_connect: {address: 10.10.0.1, nqn: " +
      kConnectNqn +
      ", hostnqn: nqn.host:b}\n"
      "    expect: fail\n"
      "  - name: a\n"
      "    nvme_connect: {address: 10.10.0.1, nqn: " +
      kConnectNqn + ", hostnqn: nqn.host:a, host_address: 10.10.0.2}\n");
  CHECK(r.exit_code == 0);
  CHECK(step_named(r, "b").facts.at("errno") == "EIO");
  CHECK(step_named(r, "a").facts.at("device") == "/dev/nvme0n1");
  const std::string options =
      "nqn=" + kConnectNqn +
      ",transport=rdma,traddr=10.10.0.1,trsvcid=4420,hostnqn=nqn.host:a,hostid=" + steps::host_id_for("nqn.host:a") +
      ",host_traddr=10.10.0.2";
  CHECK(std::ranges::count_if(h.fake.kernel.commands("nvme"), [&](const std::string& c) {
          return contains(c, options) && c.ends_with(" > /dev/nvme-fabrics");
        }) == 1);
  CHECK(r.cleanup.clean());
}

TEST_CASE("nvme_connect: a live controller for the subsystem is adopted and left in place") {
  fakes::Harness h;
  auto r = h.run(kLab + "  - name: again\n    nvme_connect: {address: 10.10.0.1, nqn: " + kConnectNqn + "}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(step_named(r, "again").facts.at("changed") == false);
  CHECK(step_named(r, "again").facts.at("controller") == "nvme0");
  CHECK(std::ranges::count_if(service_log(h.fake, "nvme"),
                              [](const std::string& e) { return e.starts_with("connect "); }) == 1);
  CHECK(r.cleanup.clean());
}

TEST_CASE("nvme_connect: cleanup leaves another controller under the recorded instance alone") {
  fakes::Harness h;
  auto r = h.run_keep(kLab);
  REQUIRE(r.exit_code == 0);
  // Someone disconnects it, and instance 0 goes to another subsystem.
  auto& ctrls = h.fake.nvme.ctrls;
  ctrls.at(0).subsysnqn = "nqn.someone.else";
  auto c = h.cleanup();
  CHECK_FALSE(c.clean());
  CHECK(contains(c.undos[0].error, "is another one than this run connected"));
  CHECK(ctrls.count(0));
}

TEST_CASE("nvme_connect: a namespace that never shows up is a timeout with the kernel's lines") {
  fakes::Harness h;
  h.fake.nvme.devices_after = 1'000'000;
  h.fake.nvme.kernel_log = {"[   24.301399] nvme nvme0: invalid LBA data size 0, skipping namespace"};
  auto r = h.run(kLab + "    timeout: 2s\n");
  CHECK(r.exit_code == 1);
  const auto& s = step_named(r, "host");
  CHECK(s.outcome == Outcome::Timeout);
  CHECK(contains(s.message, "controller nvme0 is live but no namespace block device showed up"));
  CHECK(contains(join(s.hints, "\n"), "invalid LBA data size 0"));
  CHECK(r.cleanup.clean());
  CHECK(h.fake.nvme.ctrls.empty());
}

TEST_CASE("nvme_connect: bad input is refused at FILE:LINE:COL") {
  fakes::Harness h;
  CHECK(h.first_diagnostic("steps:\n  - nvme_connect: {address: 10.10.0.1, nqn: 'a,b'}\n") ==
        "test.yaml:2:45: 'nqn' is not a valid NQN: contains ',' or '=', which the fabrics options line cannot carry");
  CHECK(h.first_diagnostic("steps:\n  - nvme_connect: {address: nowhere, nqn: x}\n") ==
        "test.yaml:2:29: 'address' must be an IPv4 or IPv6 address, got 'nowhere'");
  CHECK(h.first_diagnostic("steps:\n  - nvme_connect: {address: 10.10.0.1, nqn: x, service: 0}\n") ==
        "test.yaml:2:57: 'service' must be >= 1, got 0");
  CHECK(contains(h.diagnostics("steps:\n  - nvme_connect: {address: 10.10.0.1}\n"),
                 "missing required parameter 'nqn' for 'nvme_connect'"));
}

TEST_CASE("nvme_connect: plan shows the write to /dev/nvme-fabrics and the disconnect") {
  fakes::Harness h;
  auto p = h.plan_run(kLab);
  std::vector<std::string> shells;
  for (const auto& a : p.actions) shells.push_back(a.shell);
  const std::string all = join(shells, "\n");
  CHECK(contains(all, "echo nqn=" + kConnectNqn + ",transport=rdma,traddr=10.10.0.1,trsvcid=4420 > /dev/nvme-fabrics"));
  CHECK(contains(all, "echo 1 > /sys/class/nvme/nvme0/delete_controller"));
}

TEST_CASE("nvme_connect: a host NQN gets a host ID of its own, the same every time") {
  const std::string id = steps::host_id_for("nqn.2026-01.io.rxerun:host-a");
  CHECK(steps::is_uuid(id));
  CHECK(id == steps::host_id_for("nqn.2026-01.io.rxerun:host-a"));
  CHECK(id != steps::host_id_for("nqn.2026-01.io.rxerun:host-b"));
  CHECK(steps::host_id_for("nqn.2014-08.org.nvmexpress:uuid:f22fd21c-5195-4355-b320-e7010652b8ac") ==
        "f22fd21c-5195-4355-b320-e7010652b8ac");
  CHECK_FALSE(steps::is_uuid("f22fd21c-5195-4355-b320-e7010652b8a"));
  CHECK_FALSE(steps::is_uuid("f22fd21c+5195-4355-b320-e7010652b8ac"));
  fakes::Harness h;
  CHECK(contains(h.diagnostics("steps:\n  - nvme_connect: {address: 10.10.0.1, nqn: x, hostid: nope}\n"),
                 "'hostid' must be a UUID"));
}
