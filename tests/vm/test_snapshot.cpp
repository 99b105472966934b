// The lab VM's snapshot store without booting: what names a snapshot (its
// key changes with every input and with nothing else), the stale ones of a
// shape, the maker's lock, the listing and removal `vm status` and `vm
// setup --remove-snapshots` use, and the go line /init reads.

#include <doctest/doctest.h>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "vm/boot_protocol.h"
#include "vm/lab_vm.h"
#include "vm/snapshot.h"

using namespace rxerun;
namespace fs = std::filesystem;

namespace {

struct Cache {
  fs::path dir;
  vm::PreparedKernel kernel;
  Cache() {
    char templ[] = "/tmp/rxerun-snapshot-test.XXXXXX";
    dir = ::mkdtemp(templ);
    kernel.label = "7.3";
    kernel.dir = dir / "kernels" / "7.3";
    fs::create_directories(kernel.dir);
    kernel.vmlinux = kernel.dir / "vmlinux";
    kernel.bzimage = kernel.dir / "vmlinuz";
    kernel.initramfs = kernel.dir / "initramfs.cpio.gz";
    for (const auto& f : {kernel.vmlinux, kernel.bzimage, kernel.initramfs}) std::ofstream(f) << "x";
  }
  ~Cache() { fs::remove_all(dir); }
  vm::SnapshotSlot slot(const std::vector<std::string>& machine = {"qemu-system-x86_64", "-m", "1024"},
                        bool kvm = false, bool control = false) const {
    return vm::snapshot_slot(kernel, machine, kvm, control);
  }
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("vm.snapshot: the key is the same for the same inputs and changes with each") {
  Cache c;
  const auto base = c.slot();
  CHECK(base.key.size() == 16);
  CHECK(base.shape == "tcg");
  CHECK(base.path() == c.kernel.dir / "snapshots" / ("tcg-" + base.key + ".snap"));
  CHECK(c.slot().key == base.key);
  CHECK(c.slot({"qemu-system-x86_64", "-m", "2048"}).key != base.key);  // the machine
  CHECK(c.slot({}, true).shape == "kvm");
  CHECK(c.slot({"qemu-system-x86_64", "-m", "1024"}, false, true).shape == "tcg-control");
  CHECK(vm::snapshot_slot(c.kernel, {"qemu-system-x86_64"}, false, true, 2).shape == "tcg-control-2wire");
  // Each file it is made from: a rewrite changes its size, time or inode.
  for (const auto& f : {c.kernel.vmlinux, c.kernel.bzimage, c.kernel.initramfs}) {
    const auto before = c.slot().key;
    fs::remove(f);
    std::ofstream(f) << "xy";
    CHECK_MESSAGE(c.slot().key != before, f);
  }
}

// The guest runs a copy of the binary and the libraries it started with; a
// library opened later (a plugin, a verbs provider) is none of that.
TEST_CASE("vm.snapshot: a library opened after the start does not change the key") {
  Cache c;
  const auto before = c.slot().key;
  void* lib = ::dlopen("libutil.so.1", RTLD_NOW);  // not linked into the tests
  REQUIRE(lib != nullptr);
  CHECK(c.slot().key == before);
  ::dlclose(lib);
}

TEST_CASE("vm.snapshot: the stale snapshots are those of the same shape and another key") {
  Cache c;
  const auto slot = c.slot();
  const fs::path snaps = c.kernel.dir / "snapshots";
  write(slot.path(), "mine");
  write(snaps / "tcg-0123456789abcdef.snap", "old");
  write(snaps / "kvm-0123456789abcdef.snap", "another shape");
  write(snaps / "tcg-control-0123456789abcdef.snap", "another shape");
  write(snaps / "tcg-0123456789abcdef.4242.tmp", "half written");
  const auto stale = slot.stale();
  REQUIRE(stale.size() == 1);
  CHECK(stale.front().filename() == "tcg-0123456789abcdef.snap");
  CHECK(slot.temporary().filename() == "tcg-" + slot.key + "." + std::to_string(::getpid()) + ".tmp");
}

TEST_CASE("vm.snapshot: one maker at a time, and taking the lock removes a killed maker's half-written file") {
  Cache c;
  const auto slot = c.slot();
  write(c.kernel.dir / "snapshots" / "tcg-0123456789abcdef.4242.tmp", "half written");
  write(c.kernel.dir / "snapshots" / "kvm-0123456789abcdef.4242.tmp", "another shape's maker");
  write(c.kernel.dir / "snapshots" / "tcg-control-0123456789abcdef.4242.tmp", "a longer shape's maker");
  std::string why;
  auto first = vm::SnapshotLock::try_take(slot, &why);
  REQUIRE(first.has_value());
  CHECK(why.empty());
  CHECK_FALSE(fs::exists(c.kernel.dir / "snapshots" / "tcg-0123456789abcdef.4242.tmp"));
  CHECK(fs::exists(c.kernel.dir / "snapshots" / "kvm-0123456789abcdef.4242.tmp"));
  CHECK(fs::exists(c.kernel.dir / "snapshots" / "tcg-control-0123456789abcdef.4242.tmp"));
  CHECK_FALSE(vm::SnapshotLock::try_take(slot, &why).has_value());  // held: another start boots without
  CHECK(why.empty());
  first.reset();
  CHECK(vm::SnapshotLock::try_take(slot, &why).has_value());
}

TEST_CASE("vm.snapshot: listing and removing every kernel's snapshots") {
  Cache c;
  vm::PreparedKernel other = c.kernel;
  other.label = "6.1";
  other.dir = c.dir / "kernels" / "6.1";
  write(c.kernel.dir / "snapshots" / "tcg-0123456789abcdef.snap", std::string(1000, 'x'));
  write(other.dir / "snapshots" / "tcg-fedcba9876543210.snap", std::string(10, 'x'));
  write(other.dir / "snapshots" / "tcg.lock", "");
  const auto listed = vm::list_snapshots({c.kernel, other});
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].kernel == "7.3");
  CHECK(listed[0].bytes == 1000);
  CHECK(listed[1].kernel == "6.1");
  auto removed = vm::remove_snapshots({c.kernel, other});
  REQUIRE(removed);
  CHECK(*removed == 2);
  CHECK(vm::list_snapshots({c.kernel, other}).empty());
  CHECK(fs::exists(other.dir / "snapshots" / "tcg.lock"));  // only snapshots go
}

TEST_CASE("vm.snapshot: the guest waits for the go line only with a current initramfs and without --cold-boot") {
  vm::LabRun run;
  run.kernel.release = "7.3.4+deb13-amd64";
  run.kernel.bzimage = "/cache/vmlinuz";
  run.kernel.initramfs = "/cache/initramfs.cpio.gz";
  run.kernel.modules = "/cache/modules";
  run.exe = "/usr/bin/rxerun";
  run.share = "/tmp/share";
  auto append = [&] {
    const auto cmd = vm::qemu_command(run, false, 0.0);
    const auto it = std::find(cmd.begin(), cmd.end(), "-append");
    return it == cmd.end() ? std::string() : *(it + 1);
  };
  CHECK(append().find("rxerun.go=console") != std::string::npos);
  CHECK(vm::uses_go_line(run));
  run.cold_boot = true;
  CHECK(append().find("rxerun.go") == std::string::npos);
  CHECK_FALSE(vm::uses_go_line(run));
  run.cold_boot = false;
  run.kernel.initramfs_current = false;
  CHECK(append().find("rxerun.go") == std::string::npos);
  CHECK_FALSE(vm::uses_go_line(run));
}

TEST_CASE("vm.snapshot: wire NICs boot with stand-in MAC addresses only with a current initramfs") {
  vm::LabRun run;
  run.kernel.bzimage = "/cache/vmlinuz";
  run.kernel.initramfs = "/cache/initramfs.cpio.gz";
  run.share = "/tmp/share";
  run.wires = {{.mac = "52:54:00:0a:00:01", .local = "/tmp/a/wire0", .remote = "/tmp/b/wire0"},
               {.mac = "52:54:00:0a:01:01", .local = "/tmp/a/wire1", .remote = "/tmp/b/wire1"}};
  auto nics = [&] {
    std::vector<std::string> out;
    for (const auto& arg : vm::qemu_command(run, false, 0.0))
      if (arg.starts_with("virtio-net-device,")) out.push_back(arg.substr(arg.find(",mac=") + 5));
    return out;
  };
  CHECK(nics() == std::vector<std::string>{vm::wire_boot_mac(0), vm::wire_boot_mac(1)});
  run.kernel.initramfs_current = false;
  CHECK(nics() == std::vector<std::string>{"52:54:00:0a:00:01", "52:54:00:0a:01:01"});
  // Unicast, locally administered, one per NIC.
  CHECK(vm::wire_boot_mac(0) == "02:72:78:00:00:00");
  CHECK(vm::wire_boot_mac(300) == "02:72:78:00:01:2c");
  // The request carries them to the guest and back.
  vm::GuestRequest req{.program = "", .args = {"__agent"}, .cwd = "/", .term = "dumb"};
  req.wire_macs = {{vm::wire_boot_mac(0), "52:54:00:0a:00:01"}};
  CHECK(vm::GuestRequest::from_json(req.to_json()).wire_macs == req.wire_macs);
  CHECK(vm::GuestRequest::from_json(nlohmann::json{{"args", nlohmann::json::array()}}).wire_macs.empty());
}

TEST_CASE("vm.snapshot: the go line and the words /init looks for") {
  const std::string line = vm::go_line({.release = "7.3.4+deb13-amd64",
                                        .modules = "/cache/modules",
                                        .exe = "/usr/bin/rxerun",
                                        .host_time_ns = 1796552016312595279,
                                        .seed_hex = std::string(64, 'a')});
  CHECK(line == "rxerun-go 7.3.4+deb13-amd64 /cache/modules /usr/bin/rxerun 1796552016312595279 " +
                    std::string(64, 'a') + "\n");
  const auto back = vm::parse_go_line(line);
  REQUIRE(back.has_value());
  CHECK(back->release == "7.3.4+deb13-amd64");
  CHECK(back->modules == "/cache/modules");
  CHECK(back->exe == "/usr/bin/rxerun");
  CHECK(back->host_time_ns == 1796552016312595279);
  CHECK(back->seed_hex == std::string(64, 'a'));
  // Anything else on the console is not one.
  CHECK_FALSE(vm::parse_go_line("rxerun-init: waiting for the host\n"));
  CHECK_FALSE(vm::parse_go_line("rxerun-go 7.3 /m /e 12x " + std::string(64, 'a')));  // a bad time
  CHECK_FALSE(vm::parse_go_line("rxerun-go 7.3 /m /e 12 " + std::string(63, 'a')));   // a short seed
  CHECK_FALSE(vm::parse_go_line("rxerun-go 7.3 /m /e 12 " + std::string(64, 'g')));   // not hex
  CHECK_FALSE(vm::parse_go_line("rxerun-og 7.3 /m /e 12 " + std::string(64, 'a')));   // another tag
  const std::string_view init = vm::stage1_init_script();
  for (std::string_view words : {std::string_view(vm::kEnvGo), std::string_view("rxerun.go=console"),
                                 std::string_view("ld-linux-x86-64.so.2 --list"), std::string_view("__vm-guest")})
    CHECK_MESSAGE(init.find(words) != std::string_view::npos, words);
}
