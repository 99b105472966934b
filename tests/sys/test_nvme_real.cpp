// RealNvme on this host, without root or an NVMe stack: the backing files
// (created sparse with their size, never over an existing file, identified
// by device and inode, removed), the file system a path is on, the options
// line, and what the target's and host's lists say when nvmet and
// nvme-fabrics are not there. The rest (configfs, the connect) runs in the
// lab VM: tests/vm/nvme.sh.

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "sys/nvme_real.h"

using namespace rxerun;

TEST_CASE("nvme real: a backing file is created sparse, never over another, and known by device and inode") {
  const auto dir = std::filesystem::temp_directory_path() / ("rxerun-nvme-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "lab.img").string();
  sys::RealNvme nvme;
  auto none = nvme.file_id(path);
  REQUIRE(none);
  CHECK_FALSE(none->has_value());

  auto made = nvme.create_file(path, 64u << 20);
  REQUIRE(made);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(made->ino == st.st_ino);
  CHECK(made->dev == st.st_dev);
  CHECK(st.st_size == 64 << 20);
  CHECK(st.st_blocks * 512 < st.st_size);  // sparse

  auto again = nvme.create_file(path, 1024);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == EEXIST);
  auto found = nvme.file_id(path);
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK((*found)->ino == made->ino);
  CHECK((*found)->size == 64u << 20);

  auto fs = nvme.file_system((dir / "not-yet" / "x.img").string());  // its directory's
  REQUIRE(fs);
  CHECK(nvme.remove_file(path));
  CHECK_FALSE(nvme.file_id(path)->has_value());
  CHECK(nvme.remove_file(path).error().code == ENOENT);
  std::filesystem::remove_all(dir);
}

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
