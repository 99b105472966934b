// The shared models of sysctls and root qdiscs (sys/model/sysctl.h,
// sys/model/qdisc.h), which `rxerun plan` and the tests' fakes both keep
// their state in.

#include <doctest/doctest.h>

#include <cerrno>

#include "sys/model/qdisc.h"
#include "sys/model/sysctl.h"

using namespace rxerun;

TEST_CASE("sys.model.sysctl: a key names its /proc/sys file, whichever separator, and a write makes no file") {
  sys::SysctlModel m;
  m.add_key("net.ipv4.conf.vB.rp_filter", "1");
  REQUIRE(m.store("net/ipv4/conf/vB/rp_filter", "0"));
  CHECK(*m.value_of("net.ipv4.conf.vB.rp_filter") == "0");
  CHECK(m.values.size() == 1);
  CHECK(m.store("net.ipv4.conf.vC.rp_filter", "0").error().code == ENOENT);
  CHECK(m.value_of("net.ipv4.conf.vC.rp_filter").error().code == ENOENT);

  // A dot inside an interface's name is no separator in the slashed form.
  m.add_key("net/ipv4/conf/eth0.100/rp_filter", "2");
  CHECK_FALSE(m.find("net.ipv4.conf.eth0.100.rp_filter"));
  CHECK(*m.value_of("net/ipv4/conf/eth0.100/rp_filter") == "2");
}

TEST_CASE("sys.model.qdisc: netem replaces the kernel's default root, not one somebody added") {
  sys::QdiscModel m;
  REQUIRE(m.attach_netem("vA", {.loss_pct = 30}));
  CHECK(m.root_of("vA") == "netem");
  CHECK(m.attach_netem("vA", {}).error().code == EEXIST);
  CHECK(m.specs.at("vA").loss_pct == 30);

  m.root["vB"] = "noqueue";  // as a host shows its default
  CHECK(m.attach_netem("vB", {}));
  m.root["vC"] = "htb";
  CHECK(m.attach_netem("vC", {}).error().code == EEXIST);

  // The default cannot be deleted; a netem can, and the default is back.
  CHECK(m.detach_root("vD").error().code == ENOENT);
  REQUIRE(m.detach_root("vA"));
  CHECK_FALSE(m.root_of("vA"));
  CHECK(m.detach_root("vA").error().code == ENOENT);
}
