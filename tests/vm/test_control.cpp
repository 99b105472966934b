// The control channel between the host and a node's agent (vm/control.h),
// over a real socket pair and a real unix socket; and the qemu arguments
// that give a lab VM its control port.

#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "vm/control.h"
#include "vm/lab_vm.h"

using namespace rxerun;

namespace {

std::pair<vm::ControlChannel, UniqueFd> channel_and_peer() {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  return {vm::ControlChannel(UniqueFd(fds[0])), UniqueFd(fds[1])};
}

void write_all(int fd, const std::string& bytes) {
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

}  // namespace

TEST_CASE("vm.control: messages are whole lines, however the bytes arrive") {
  auto [channel, peer] = channel_and_peer();
  // Two messages in three writes: a line split in the middle, then the rest
  // and a whole second one at once.
  std::thread writer([fd = peer.get()] {
    write_all(fd, "{\"step\": \"add");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    write_all(fd, "ress-1\", \"facts\": {}}\n\n{\"finish\": true}\n");
  });
  auto first = channel.receive();
  REQUIRE(first);
  REQUIRE(first->message);
  CHECK((*first->message)["step"] == "address-1");
  auto second = channel.receive();
  REQUIRE(second);
  REQUIRE(second->message);
  CHECK((*second->message)["finish"] == true);
  writer.join();

  REQUIRE(channel.send({{"step_report", {{"name", "address-1"}}}}));
  char buf[256];
  const ssize_t n = ::read(peer.get(), buf, sizeof buf);
  REQUIRE(n > 0);
  CHECK(std::string(buf, static_cast<std::size_t>(n)) == "{\"step_report\":{\"name\":\"address-1\"}}\n");
}

TEST_CASE("vm.control: the other end gone, a line that is no JSON object, a stop") {
  SUBCASE("closed") {
    auto [channel, peer] = channel_and_peer();
    peer.reset();
    auto got = channel.receive();
    REQUIRE(got);
    CHECK(got->closed);
    CHECK_FALSE(got->message);
    // Writing to it is an error, not a SIGPIPE that ends rxerun.
    CHECK_FALSE(channel.send({{"finish", true}}));
  }
  SUBCASE("not an object") {
    auto [channel, peer] = channel_and_peer();
    write_all(peer.get(), "[1, 2]\n");
    auto got = channel.receive();
    REQUIRE_FALSE(got);
    CHECK(got.error().message == "the control channel carried a line that is not a JSON object: [1, 2]");
  }
  SUBCASE("stopped") {
    auto [channel, peer] = channel_and_peer();
    int stop[2];
    REQUIRE(::pipe(stop) == 0);
    UniqueFd stop_read(stop[0]), stop_write(stop[1]);
    write_all(stop_write.get(), "x");
    auto got = channel.receive(stop_read.get());
    REQUIRE(got);
    CHECK(got->stopped);
  }
}

TEST_CASE("vm.control: the host connects once qemu's socket is there") {
  const std::string dir = "/tmp/rxerun-control-test." + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/control";
  SUBCASE("nothing listens: an error after the timeout") {
    auto none = vm::connect_control(path, std::chrono::milliseconds(100));
    REQUIRE_FALSE(none);
    CHECK(none.error().message == "cannot connect to the lab VM's control socket " + path);
  }
  SUBCASE("the socket appears later") {
    UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    std::thread later([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
      REQUIRE(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
      REQUIRE(::listen(listener.get(), 1) == 0);
    });
    auto channel = vm::connect_control(path, std::chrono::seconds(5));
    later.join();
    REQUIRE(channel);
    UniqueFd accepted(::accept(listener.get(), nullptr, nullptr));
    REQUIRE(accepted.valid());
    write_all(accepted.get(), "{\"hello\": {\"node\": \"a\"}}\n");
    auto got = channel->receive();
    REQUIRE(got);
    REQUIRE(got->message);
    CHECK((*got->message)["hello"]["node"] == "a");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("vm.control: a lab VM with a control socket has a virtio-serial port of that name") {
  vm::LabRun run;
  run.kernel.bzimage = "/cache/vmlinuz";
  run.share = "/tmp/rxerun-vm.a";
  run.control = "/tmp/rxerun-vm.a/control";
  const auto cmd = vm::qemu_command(run, false, 1);
  auto after = [&](const std::string& value) {
    auto it = std::find(cmd.begin(), cmd.end(), value);
    return it == cmd.end() || it == cmd.begin() ? std::string() : *(it - 1);
  };
  CHECK(after("virtio-serial-device") == "-device");
  CHECK(after("socket,id=control,path=/tmp/rxerun-vm.a/control,server=on,wait=off") == "-chardev");
  CHECK(after("virtserialport,chardev=control,name=org.rxerun.agent") == "-device");
  run.control.clear();
  const auto without = vm::qemu_command(run, false, 1);
  CHECK(std::find(without.begin(), without.end(), "virtio-serial-device") == without.end());
}
