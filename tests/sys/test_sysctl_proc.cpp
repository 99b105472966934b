// ProcSysctl and the sysctl step on /proc/sys, as root, inside a throwaway
// network namespace (net.* keys are per namespace); `sysctl -n` is the
// independent observer.

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "support/privileged.h"
#include "support/real_harness.h"
#include "support/shell.h"
#include "sys/sysctl_proc.h"

using namespace rxerun;
using rxerun::testing::command_output;
using rxerun::testing::RealHarness;
using rxerun::testing::step_named;
using rxerun::testing::ThrowawayNetns;

namespace {

std::string observed(const std::string& key) {
  return command_output("sysctl -n " + key);
}

void make_veth() {
  REQUIRE(std::system("ip link add vA type veth peer name vB") == 0);
}

}  // namespace

TEST_CASE("sys.sysctl_proc: sysctl_path maps dotted keys and takes slashed ones as given") {
  CHECK(sys::sysctl_path("net.ipv4.conf.vB.rp_filter") == "/proc/sys/net/ipv4/conf/vB/rp_filter");
  CHECK(sys::sysctl_path("net/ipv4/conf/eth0.100/rp_filter") == "/proc/sys/net/ipv4/conf/eth0.100/rp_filter");
  CHECK(sys::sysctl_path("/net/ipv4/ip_forward") == "/proc/sys/net/ipv4/ip_forward");
  CHECK(sys::sysctl_path("kernel.hostname") == "/proc/sys/kernel/hostname");
}

TEST_CASE("sys.sysctl_proc: read trims and write sets the value") {
  ThrowawayNetns ns;
  make_veth();
  sys::ProcSysctl sysctl;
  auto v = sysctl.read("net.ipv4.conf.vB.rp_filter");
  REQUIRE_MESSAGE(v, v.error().message);
  CHECK(*v == observed("net.ipv4.conf.vB.rp_filter"));
  const std::string other = *v == "2" ? "1" : "2";
  REQUIRE(sysctl.write("net.ipv4.conf.vB.rp_filter", other));
  CHECK(observed("net.ipv4.conf.vB.rp_filter") == other);
  REQUIRE(sysctl.write("net/ipv4/conf/vB/rp_filter", *v));
  CHECK(observed("net.ipv4.conf.vB.rp_filter") == *v);

  // Several fields: tabs inside are kept, the newline is trimmed.
  auto ports = sysctl.read("net.ipv4.ip_local_port_range");
  REQUIRE(ports);
  CHECK(ports->find('\t') != std::string::npos);
  CHECK(ports->back() != '\n');
}

TEST_CASE("sys.sysctl_proc: errors say what went wrong and name the key") {
  ThrowawayNetns ns;
  sys::ProcSysctl sysctl;
  auto missing = sysctl.read("net.ipv4.conf.nosuch0.rp_filter");
  REQUIRE(!missing);
  CHECK(missing.error().code == ENOENT);
  CHECK(missing.error().message.find("no sysctl net.ipv4.conf.nosuch0.rp_filter") == 0);

  auto bad = sysctl.write("net.ipv4.conf.lo.rp_filter", "lots");
  REQUIRE(!bad);
  CHECK(bad.error().code == EINVAL);
  CHECK(bad.error().message.find("refused 'lots' for sysctl net.ipv4.conf.lo.rp_filter") != std::string::npos);

  auto read_only = sysctl.write("net.ipv4.conf.all.mc_forwarding", "1");
  REQUIRE(!read_only);
  CHECK(read_only.error().code == EACCES);
  CHECK(read_only.error().message.find("cannot write sysctl net.ipv4.conf.all.mc_forwarding") == 0);

  auto dir = sysctl.read("net.ipv4.conf");
  REQUIRE(!dir);
  CHECK(dir.error().message.find("is a group of sysctls") != std::string::npos);
}

TEST_CASE("sys.sysctl_proc: the sysctl step sets rp_filter and accept_local, and cleanup restores them") {
  ThrowawayNetns ns;
  make_veth();
  REQUIRE(std::system("sysctl -qw net.ipv4.conf.vB.rp_filter=2") == 0);  // a found value that is not the default
  const std::string rp = observed("net.ipv4.conf.vB.rp_filter");
  const std::string al = observed("net.ipv4.conf.vB.accept_local");
  REQUIRE(rp == "2");
  REQUIRE(al == "0");

  RealHarness rr;
  auto r = rr.run_keep(
      "steps:\n"
      "  - {name: rp, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: 0}}\n"
      "  - {name: al, sysctl: {key: net.ipv4.conf.vB.accept_local, value: 1}}\n"
      "  - {name: again, sysctl: {key: net.ipv4.conf.vB.rp_filter, value: '0'}}\n");
  CHECK_MESSAGE(r.exit_code == 0, step_named(r, "rp").message);
  CHECK(step_named(r, "rp").facts.at("before") == "2");
  CHECK(step_named(r, "rp").facts.at("after") == "0");
  CHECK(step_named(r, "al").facts.at("after") == "1");
  CHECK(step_named(r, "again").facts.at("changed") == false);
  CHECK(observed("net.ipv4.conf.vB.rp_filter") == "0");
  CHECK(observed("net.ipv4.conf.vB.accept_local") == "1");
  CHECK(rr.journal.pending().size() == 2);

  auto c = rr.cleanup();
  CHECK(c.clean());
  CHECK(observed("net.ipv4.conf.vB.rp_filter") == rp);  // no residue
  CHECK(observed("net.ipv4.conf.vB.accept_local") == al);
  CHECK(rr.cleanup().undos.empty());
}

TEST_CASE("sys.sysctl_proc: the sysctl step refuses keys outside net.") {
  ThrowawayNetns ns;
  const std::string hostname = observed("kernel.hostname");
  RealHarness rr;
  // A key from an earlier step's output is refused when the step runs (one
  // as written is the loader's: tests/steps/test_sysctl.cpp).
  auto r = rr.run(
      "steps:\n  - {name: k, exec: {argv: [echo, kernel.hostname]}}\n"
      "  - {name: s, sysctl: {key: '{{steps.k.stdout}}', value: rxerun-was-here}}\n");
  CHECK(r.exit_code == 3);
  CHECK(step_named(r, "s").message.find("only keys under net. can be set") != std::string::npos);
  CHECK(observed("kernel.hostname") == hostname);
  CHECK(rr.journal.pending().empty());
}

TEST_CASE("sys.sysctl_proc: undo after the interface is gone succeeds") {
  ThrowawayNetns ns;
  make_veth();
  RealHarness rr;
  auto r = rr.run_keep("steps:\n  - {name: s, sysctl: {key: net.ipv4.conf.vB.accept_local, value: 1}}\n");
  REQUIRE(r.exit_code == 0);
  REQUIRE(std::system("ip link del vA") == 0);
  CHECK(rr.cleanup().clean());
  CHECK(rr.journal.pending().empty());
}
