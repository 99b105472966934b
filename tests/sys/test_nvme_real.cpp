// RealNvme on this host, without root or an NVMe stack: the options line,
// and what the target's and host's lists say when nvmet and nvme-fabrics
// are not there. The rest (configfs, the connect) runs in the
// lab VM: tests/vm/nvme.sh.

#include <doctest/doctest.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "sys/nvme_real.h"

using namespace rxerun;

TEST_CASE("nvme real: the options line, and the lists where there is no NVMe stack") {
  CHECK(sys::fabrics_options_line({.transport = "rdma",
                                   .traddr = "10.10.0.1",
                                   .trsvcid = "4420",
                                   .nqn = "nqn.x",
                                   .hostnqn = "nqn.h",
                                   .hostid = "f22fd21c-5195-4355-b320-e7010652b8ac",
                                   .host_traddr = "10.10.0.2"}) ==
        "nqn=nqn.x,transport=rdma,traddr=10.10.0.1,trsvcid=4420,hostnqn=nqn.h,hostid=f22fd21c-5195-4355-b320-"
        "e7010652b8ac,host_traddr=10.10.0.2");
  CHECK(sys::fabrics_options_line({.transport = "rdma", .traddr = "fd00::1", .trsvcid = "4420", .nqn = "nqn.x"}) ==
        "nqn=nqn.x,transport=rdma,traddr=fd00::1,trsvcid=4420");
  sys::RealNvme nvme;
  if (std::filesystem::exists("/sys/kernel/config/nvmet") || std::filesystem::exists("/dev/nvme-fabrics")) {
    MESSAGE("this host has an NVMe-oF stack: the lists are whatever it holds");
    return;
  }
  auto subs = nvme.subsystems();
  REQUIRE(subs);
  CHECK(subs->empty());
  auto ports = nvme.ports();
  REQUIRE(ports);
  CHECK(ports->empty());
  std::vector<std::string> lines;
  auto c = nvme.connect({.transport = "rdma", .traddr = "10.10.0.1", .trsvcid = "4420", .nqn = "nqn.x"}, &lines);
  REQUIRE_FALSE(c);
  CHECK(c.error().code == ENOENT);
  CHECK(c.error().message.find("/dev/nvme-fabrics") != std::string::npos);
}
