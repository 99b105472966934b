// The lab VM's wires: interfaces that join two lab VMs (vm::WireNic). The
// qemu command line without booting; and "vm.wire: two lab VMs ping each
// other over a wire", which boots two VMs at once (registered in
// tests/CMakeLists.txt with the label vm, one VM test at a time).

#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support/privileged.h"
#include "vm/boot_protocol.h"
#include "vm/kernel/cache.h"
#include "vm/lab_vm.h"

using namespace rxerun;

namespace {

std::vector<std::string> args_after(const std::vector<std::string>& cmd, const std::string& flag) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < cmd.size(); ++i)
    if (cmd[i] == flag) out.push_back(cmd[i + 1]);
  return out;
}

}  // namespace

TEST_CASE("vm.wire: each wire is a virtio-net device on a datagram socket pair") {
  vm::LabRun run;
  run.kernel.bzimage = "/cache/vmlinuz";
  run.kernel.vmlinux = "/nonexistent/vmlinux";
  run.share = "/tmp/rxerun-vm.a";
  run.wires = {{"52:54:00:0a:00:01", "/tmp/rxerun-vm.a/wire0", "/tmp/rxerun-vm.b/wire0"},
               {"52:54:00:0a:00:02", "/tmp/rxerun-vm.a/wire1", "/tmp/rxerun-vm.c/wire0"}};
  const auto cmd = vm::qemu_command(run, false, 1);
  CHECK(args_after(cmd, "-netdev") ==
        std::vector<std::string>{"dgram,id=wire0,local.type=unix,local.path=/tmp/rxerun-vm.a/wire0,remote.type=unix,"
                                 "remote.path=/tmp/rxerun-vm.b/wire0",
                                 "dgram,id=wire1,local.type=unix,local.path=/tmp/rxerun-vm.a/wire1,remote.type=unix,"
                                 "remote.path=/tmp/rxerun-vm.c/wire0"});
  // Each NIC boots with its stand-in address; the guest gives it the lab's
  // (tests/vm/test_snapshot.cpp has the rest).
  const auto devices = args_after(cmd, "-device");
  CHECK(std::count(devices.begin(), devices.end(), "virtio-net-device,netdev=wire0,mac=" + vm::wire_boot_mac(0)) == 1);
  CHECK(std::count(devices.begin(), devices.end(), "virtio-net-device,netdev=wire1,mac=" + vm::wire_boot_mac(1)) == 1);

  run.wires[1].remote = "/tmp/rxerun vm/wire0";
  auto refused = vm::run_lab(run);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "the lab VM cannot use a path with a space or a comma: /tmp/rxerun vm/wire0");
}

// Two VMs of the newest prepared kernel, booted at once, joined by one wire:
// each finds its end by the MAC address, takes an address and pings the
// other until three replies came (the other may still be booting; what it
// sent before is lost, as on a cable whose far end is unplugged).
TEST_CASE("vm.wire: two lab VMs ping each other over a wire" * doctest::skip()) {
  const auto prepared = vm::prepared_kernels(vm::search_dirs());
  if (prepared.empty()) testing::skip_test("no lab kernel is prepared (rxerun vm setup)");
  auto share_a = vm::ShareDir::create();
  auto share_b = vm::ShareDir::create();
  REQUIRE(share_a);
  REQUIRE(share_b);
  struct End {
    std::string mac, address, peer;
    const vm::ShareDir* share;
    const vm::ShareDir* other;
  };
  const End ends[2] = {{"52:54:00:77:00:01", "10.77.0.1", "10.77.0.2", &*share_a, &*share_b},
                       {"52:54:00:77:00:02", "10.77.0.2", "10.77.0.1", &*share_b, &*share_a}};
  std::string outputs[2];
  Result<vm::LabRunResult> results[2] = {make_error("not run"), make_error("not run")};
  auto boot = [&](int i) {
    const End& e = ends[i];
    vm::LabRun run;
    run.kernel = prepared.front();
    run.exe = RXERUN_BINARY;
    run.share = e.share->path();
    run.wires = {{e.mac, e.share->path() / "wire0", e.other->path() / "wire0"}};
    run.run_timeout = std::chrono::seconds(240);
    const std::string script =
        "modprobe virtio_net || exit 10\n"
        "dev=\n"
        "for d in /sys/class/net/*; do [ \"$(cat $d/address)\" = " +
        e.mac +
        " ] && dev=${d##*/}; done\n"
        "[ -n \"$dev\" ] || { echo 'no interface with MAC " +
        e.mac +
        "'; exit 11; }\n"
        "echo \"wire end: $dev\"\n"
        "ip address add " +
        e.address +
        "/24 dev $dev && ip link set $dev up || exit 12\n"
        // Three replies, however long the other end takes to boot (ping
        // gives up once its count of errors is reached, and an unanswered
        // ARP is one: so again, for up to two minutes); then stay up a
        // while, so that the other end gets its three too.
        "n=0; until ping -c 3 -i 0.5 -w 5 " +
        e.peer +
        "; do n=$((n + 1)); [ $n -lt 24 ] || exit 13; done\n"
        "sleep 10\n";
    run.request = {.program = "/bin/sh", .args = {"-c", script}, .cwd = "/", .term = "dumb"};
    run.output = [&outputs, i](std::string_view s) { outputs[i] += s; };
    results[i] = vm::run_lab(run);
  };
  std::thread a(boot, 0), b(boot, 1);
  a.join();
  b.join();
  for (int i = 0; i < 2; ++i) {
    CAPTURE(i);
    MESSAGE(outputs[i]);
    REQUIRE_MESSAGE(results[i], results[i].error().message);
    CHECK(results[i]->outcome == vm::LabOutcome::Finished);
    CHECK(results[i]->guest.exit_code == 0);
    // Three replies or more: replies to pings sent while the other end
    // was still starting may all come at once.
    CHECK(std::regex_search(outputs[i], std::regex(", ([3-9]|[1-9][0-9]+) received")));
  }
}
