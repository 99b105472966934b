// LibNft and the block step on the real nftables, as root, inside a throwaway
// network namespace (its ruleset is empty and its own); `nft` is the
// independent observer.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "support/privileged.h"
#include "support/real_harness.h"
#include "support/shell.h"
#include "sys/nft_lib.h"

using namespace rxerun;
using rxerun::testing::command_output;
using rxerun::testing::loopback_up;
using rxerun::testing::RealHarness;
using rxerun::testing::step_named;
using rxerun::testing::ThrowawayNetns;

namespace {

void send_udp(const char* addr, int port, int count, std::size_t payload) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  REQUIRE(::inet_pton(AF_INET, addr, &to.sin_addr) == 1);
  std::string data(payload, 'x');
  for (int i = 0; i < count; ++i)
    REQUIRE(::sendto(fd, data.data(), data.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) ==
            static_cast<ssize_t>(data.size()));
  ::close(fd);
}

// The tables of the current namespace, as `nft list tables` prints them.
std::string nft_tables() {
  return command_output("nft list tables");
}

}  // namespace

TEST_CASE("sys.nft: add, list and delete in a table of our own, handles echoed") {
  ThrowawayNetns ns;
  sys::LibNft nft;
  auto table = nft.run("add table inet rxerun-t1");
  REQUIRE_MESSAGE(table.ok(), table.error().message);
  REQUIRE(table->contains("nftables"));
  CHECK((*table)["nftables"][0]["add"]["table"]["name"] == "rxerun-t1");

  REQUIRE(nft.run("add chain inet rxerun-t1 input { type filter hook input priority 0 ; policy accept ; }").ok());
  auto rule = nft.run("add rule inet rxerun-t1 input udp dport 4791 counter drop comment \"rxerun step x\"");
  REQUIRE_MESSAGE(rule.ok(), rule.error().message);
  const auto& added = (*rule)["nftables"][0]["add"]["rule"];
  CHECK(added["comment"] == "rxerun step x");
  CHECK(added["handle"].get<long long>() > 0);

  auto listed = nft.run("list table inet rxerun-t1");
  REQUIRE(listed.ok());
  bool found = false;
  for (const auto& item : (*listed)["nftables"])
    if (item.contains("rule") && item["rule"]["handle"] == added["handle"]) found = true;
  CHECK(found);
  CHECK(nft_tables().find("table inet rxerun-t1") != std::string::npos);

  REQUIRE(nft.run("delete table inet rxerun-t1").ok());
  CHECK(nft_tables().find("rxerun-t1") == std::string::npos);
}

TEST_CASE("sys.nft: errors carry libnftables' text and the errno it names") {
  ThrowawayNetns ns;
  sys::LibNft nft;
  auto missing = nft.run("list table inet rxerun-nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ENOENT);
  CHECK(missing.error().message.find("No such file or directory") != std::string::npos);
  CHECK(missing.error().message.find("list table inet rxerun-nope") != std::string::npos);
  CHECK(missing.error().message.back() != '\n');  // trimmed

  auto syntax = nft.run("add rule inet rxerun-nope input frobnicate");
  REQUIRE_FALSE(syntax.ok());
  CHECK(syntax.error().message.find("Error") != std::string::npos);
}

TEST_CASE("sys.nft: without CAP_NET_ADMIN the error says it needs root") {
  ThrowawayNetns ns;
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // nobody, with no capability left
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
      ::_exit(10);
    sys::LibNft nft;
    auto r = nft.run("add table inet rxerun-perm");
    if (r.ok()) ::_exit(11);
    if (r.error().code != EPERM) ::_exit(12);
    if (r.error().message.find("needs root (CAP_NET_ADMIN)") != 0) ::_exit(13);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(nft_tables().find("rxerun-perm") == std::string::npos);
}

TEST_CASE("sys.nft: a rule's counter moves with matching traffic on lo") {
  ThrowawayNetns ns;
  loopback_up();
  sys::LibNft nft;
  REQUIRE(nft.run("add table inet rxerun-t2").ok());
  REQUIRE(nft.run("add chain inet rxerun-t2 input { type filter hook input priority 0 ; policy accept ; }").ok());
  REQUIRE(nft.run("add rule inet rxerun-t2 input udp dport 47910 counter drop comment \"rxerun step c\"").ok());
  send_udp("127.0.0.1", 47910, 3, 100);
  send_udp("127.0.0.1", 47911, 2, 100);  // another port: not counted

  auto listed = nft.run("list table inet rxerun-t2");
  REQUIRE(listed.ok());
  long long packets = -1, bytes = -1;
  for (const auto& item : (*listed)["nftables"]) {
    if (!item.contains("rule")) continue;
    for (const auto& e : item["rule"]["expr"])
      if (e.contains("counter")) {
        packets = e["counter"]["packets"];
        bytes = e["counter"]["bytes"];
      }
  }
  CHECK(packets == 3);
  CHECK(bytes == 3 * (20 + 8 + 100));
  REQUIRE(nft.run("delete table inet rxerun-t2").ok());
}

TEST_CASE("sys.nft: the block step for real blocks ping, the revert proves it, nothing is left") {
  ThrowawayNetns ns;
  loopback_up();
  RealHarness rr;
  auto r = rr.run(R"(
name: nft-real
steps:
  - name: before
    ping: {to: 127.0.0.1, count: 2, interval: 20ms}
  - name: blk
    block: {proto: icmp}
  - name: blk6
    block: {proto: icmpv6, dev: lo}
  - name: udp
    block: {proto: udp, port: 4791, hook: output, action: reject}
  - name: blocked
    ping: {to: 127.0.0.1, count: 2, interval: 20ms}
    expect: fail
  - name: lift
    revert: blk
    expect: {packets: "> 0", bytes: "> 0"}
  - name: after
    ping: {to: 127.0.0.1, count: 2, interval: 20ms}
)");
  for (const auto& s : r.steps) CHECK_MESSAGE(s.status == StepStatus::Passed, s.name, ": ", s.message);
  CHECK(r.exit_code == 0);
  CHECK(step_named(r, "blocked").facts["received"] == 0);
  CHECK(step_named(r, "lift").facts["packets"].get<long long>() >= 2);
  CHECK(step_named(r, "udp").facts.contains("warning"));
  CHECK(step_named(r, "blk").facts["handle"].get<long long>() > 0);
  CHECK(r.cleanup.clean());
  CHECK(nft_tables().empty());
}

TEST_CASE("sys.nft: the block step's rules show up in nft and a kept run is cleaned up later") {
  ThrowawayNetns ns;
  loopback_up();
  RealHarness rr;
  auto r = rr.run_keep(R"(
name: nft-keep
steps:
  - name: a
    block: {proto: udp, port: 4791}
  - name: b
    block: {proto: tcp, port: 22, hook: forward, dev: vB, action: reject}
)");
  REQUIRE(r.exit_code == 0);
  const std::string ruleset = command_output("nft list table inet rxerun-nft-keep");
  CHECK(ruleset.find("udp dport 4791 counter packets 0 bytes 0 drop comment \"rxerun step a\"") != std::string::npos);
  CHECK(ruleset.find("iifname \"vB\" tcp dport 22 counter packets 0 bytes 0 reject comment \"rxerun step b\"") !=
        std::string::npos);
  CHECK(ruleset.find("hook forward") != std::string::npos);

  auto c = rr.cleanup("nft-keep");
  CHECK(c.clean());
  CHECK(c.undos.size() == 2);
  CHECK(nft_tables().empty());
  // Twice: nothing to do.
  CHECK(rr.cleanup("nft-keep").undos.empty());
}

TEST_CASE("sys.nft: preclean removes a crashed run's table and leaves the host's") {
  ThrowawayNetns ns;
  REQUIRE(std::system("nft add table inet rxerun-nft-pre && nft add table inet filter && "
                      "nft add chain inet filter input '{ type filter hook input priority 0 ; }' && "
                      "nft add rule inet filter input tcp dport 22 accept") == 0);
  RealHarness rr;
  auto r = rr.run("name: nft-pre\nsteps:\n  - name: a\n    block: {proto: udp, port: 4791}\n");
  CHECK(r.exit_code == 0);
  REQUIRE(r.preclean.undos.size() == 1);
  CHECK(r.preclean.undos[0].summary == "nftables table inet rxerun-nft-pre");
  CHECK(nft_tables() == "table inet filter");
  CHECK(command_output("nft list table inet filter").find("tcp dport 22 accept") != std::string::npos);
}
