// The lab VM's host side without booting: the qemu command line, the
// request/result the share carries, and the kernel-message filter.

#include <doctest/doctest.h>

#include <algorithm>

#include "sys/kernel_log.h"
#include "vm/guest.h"
#include "vm/lab_vm.h"

using namespace rxerun;

namespace {

vm::LabRun lab_run() {
  vm::LabRun run;
  run.kernel.label = "7.3";
  run.kernel.release = "7.3.4+deb13-amd64";
  run.kernel.vmlinux = "/nonexistent/vmlinux";  // missing: the bzImage is used
  run.kernel.bzimage = "/cache/kernels/7.3/vmlinuz";
  run.kernel.initramfs = "/cache/kernels/7.3/initramfs.cpio.gz";
  run.kernel.modules = "/cache/kernels/7.3/root/usr/lib/modules/7.3.4+deb13-amd64";
  run.exe = "/usr/bin/rxerun";
  run.share = "/tmp/rxerun-vm.1.abc";
  return run;
}

std::string after(const std::vector<std::string>& cmd, const std::string& flag, int nth = 1) {
  int seen = 0;
  for (std::size_t i = 0; i + 1 < cmd.size(); ++i)
    if (cmd[i] == flag && ++seen == nth) return cmd[i + 1];
  return "";
}

bool has(const std::vector<std::string>& cmd, const std::string& s) {
  return std::find(cmd.begin(), cmd.end(), s) != cmd.end();
}

}  // namespace

TEST_CASE("vm.lab: software emulation gets the TSC rate, KVM the host CPU") {
  auto tcg = vm::qemu_command(lab_run(), false, 2096007.4);
  CHECK(after(tcg, "-accel").starts_with("tcg,thread="));
  CHECK(after(tcg, "-cpu") == "max");
  CHECK(after(tcg, "-append").find(" tsc_early_khz=2096007 ") != std::string::npos);
  auto kvm = vm::qemu_command(lab_run(), true, 0);
  CHECK(after(kvm, "-accel") == "kvm");
  CHECK(after(kvm, "-cpu") == "host");
  CHECK(after(kvm, "-append").find("tsc_early_khz") == std::string::npos);
}

TEST_CASE("vm.lab: the guest gets no network device and a read-only host root") {
  auto cmd = vm::qemu_command(lab_run(), false, 1);
  CHECK(has(cmd, "-nodefaults"));
  for (const auto& a : cmd) {
    CHECK(a.find("-net") != 0);
    CHECK(a.find("virtio-net") == std::string::npos);
  }
  CHECK(after(cmd, "-fsdev", 1) == "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap");
  CHECK(after(cmd, "-fsdev", 2) == "local,id=share,path=/tmp/rxerun-vm.1.abc,security_model=none,multidevs=remap");
  CHECK(after(cmd, "-machine").starts_with("microvm,"));
  CHECK(after(cmd, "-kernel") == "/cache/kernels/7.3/vmlinuz");
  const std::string append = after(cmd, "-append");
  CHECK(append.find("rxerun.release=7.3.4+deb13-amd64") != std::string::npos);
  CHECK(append.find("rxerun.modules=/cache/kernels/7.3/root/usr/lib/modules/7.3.4+deb13-amd64") != std::string::npos);
  CHECK(append.find("rxerun.exe=/usr/bin/rxerun") != std::string::npos);
}

TEST_CASE("vm.lab: a path with a space is refused before qemu starts") {
  auto run = lab_run();
  run.exe = "/home/me/my builds/rxerun";
  auto r = vm::run_lab(run);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "the lab VM cannot use a path with a space or a comma: /home/me/my builds/rxerun");
}

TEST_CASE("vm.lab: request and result survive the share") {
  vm::GuestRequest req{.args = {"run", "/x/lab.yaml", "--host"}, .cwd = "/x", .term = "xterm"};
  auto back = vm::GuestRequest::from_json(req.to_json());
  CHECK(back.args == req.args);
  CHECK(back.cwd == "/x");
  CHECK(back.term == "xterm");
  vm::GuestResult res{.exit_code = 1,
                      .ended = "exit 1",
                      .uptime_at_start = 3.5,
                      .uptime_at_end = 9.25,
                      .dmesg = {"[    4.000000] rdma_rxe: loaded"}};
  auto r2 = vm::GuestResult::from_json(res.to_json());
  CHECK(r2.exit_code == 1);
  CHECK(r2.uptime_at_end == 9.25);
  CHECK(r2.dmesg == res.dmesg);
}

TEST_CASE("vm.lab: the RDMA stack's kernel messages, and no others") {
  CHECK(sys::is_rdma_kernel_message("rdma_rxe: loaded"));
  CHECK(sys::is_rdma_kernel_message("infiniband rxe0: set active"));
  CHECK(sys::is_rdma_kernel_message("rdma_rxe: rxe_newlink: failed to add vB"));
  CHECK(sys::is_rdma_kernel_message("ib_core: some message"));
  CHECK_FALSE(sys::is_rdma_kernel_message("virtio_net: probe"));
  CHECK_FALSE(sys::is_rdma_kernel_message("PCI: Fatal: No config space access function found"));
}
