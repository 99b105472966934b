// PcapCaptures on a real packet socket, as root, inside a throwaway network
// namespace: RoCEv2-shaped UDP datagrams sent to 127.0.0.1:4791 are
// captured, decoded and counted, and the file reads back with libpcap.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/privileged.h"
#include "sys/capture_pcap.h"

using namespace rxerun;
using rxerun::testing::loopback_up;
using rxerun::testing::ThrowawayNetns;

namespace {

// A UDP payload as rxe sends it: BTH (opcode, PSN), the extension headers
// the opcode carries (none for SEND ONLY, AETH for ACKNOWLEDGE), a 4-byte
// payload and an ICRC of zeros (wrong on purpose: the kernel chose the IP
// header's ID, which the ICRC covers).
std::vector<std::uint8_t> roce_payload(std::uint8_t opcode, std::uint32_t psn) {
  std::vector<std::uint8_t> p = {opcode,
                                 0x00,
                                 0xff,
                                 0xff,
                                 0x00,
                                 0x00,
                                 0x00,
                                 0x11,
                                 0x80,
                                 static_cast<std::uint8_t>(psn >> 16),
                                 static_cast<std::uint8_t>(psn >> 8),
                                 static_cast<std::uint8_t>(psn)};
  if (opcode == 0x11) p.insert(p.end(), {0x1f, 0x00, 0x00, 0x01});  // AETH: ACK, MSN 1
  if (opcode == 0x04) p.insert(p.end(), {'d', 'a', 't', 'a'});
  p.insert(p.end(), 4, 0);  // ICRC
  return p;
}

void send_udp(std::uint16_t port, const std::vector<std::uint8_t>& payload) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::sendto(fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
          static_cast<ssize_t>(payload.size()));
  ::close(fd);
}

std::string temp_file(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()) + ".pcap"))
      .string();
}

int frames_in(const std::string& file) {
  char errbuf[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(file.c_str(), errbuf);
  REQUIRE_MESSAGE(p, errbuf);
  int n = 0;
  pcap_pkthdr* header;
  const u_char* data;
  while (pcap_next_ex(p, &header, &data) == 1) ++n;
  pcap_close(p);
  return n;
}

}  // namespace

TEST_CASE("sys.capture_pcap: captures, decodes and writes what crossed, also just before the stop") {
  ThrowawayNetns netns;
  loopback_up();
  const std::string file = temp_file("rxt-capture");
  sys::PcapCaptures captures;
  REQUIRE(captures.start({.id = "t/cap", .dev = "lo", .filter = "udp", .snaplen = 262144, .file = file}));

  send_udp(4791, roce_payload(0x04, 7));  // RC SEND ONLY
  send_udp(4791, roce_payload(0x04, 9));  // PSN 8 is missing: a gap
  send_udp(4791, roce_payload(0x11, 9));  // RC ACKNOWLEDGE
  send_udp(53, {1, 2, 3, 4});             // other traffic the filter lets through
  send_udp(4791, {0x04, 0x00});           // too short for a BTH
  auto facts = captures.stop("t/cap");    // at once: what the kernel holds must still be read

  REQUIRE(facts);
  CHECK((*facts)["frames"] == 5);
  CHECK((*facts)["packets"] == 3);
  CHECK((*facts)["other"] == 1);
  CHECK((*facts)["malformed"] == 1);
  CHECK((*facts)["opcodes"]["RC_SEND_ONLY"] == 2);
  CHECK((*facts)["opcodes"]["RC_ACKNOWLEDGE"] == 1);
  CHECK((*facts)["acks"] == 1);
  CHECK((*facts)["psn_gaps"] == 1);
  CHECK((*facts)["icrc_bad"] == 3);
  CHECK((*facts)["icrc_good"] == 0);
  CHECK((*facts)["dropped"] == 0);
  CHECK((*facts)["file"] == file);
  CHECK(frames_in(file) == 5);
  std::filesystem::remove(file);

  // Stopped means gone: a second stop finds nothing.
  auto again = captures.stop("t/cap");
  REQUIRE_FALSE(again);
  CHECK(again.error().code == ENOENT);
}

TEST_CASE("sys.capture_pcap: the default filter keeps only UDP 4791") {
  ThrowawayNetns netns;
  loopback_up();
  const std::string file = temp_file("rxt-capture-default");
  sys::PcapCaptures captures;
  REQUIRE(captures.start({.id = "t/default", .dev = "lo", .file = file}));
  send_udp(53, {1, 2, 3, 4});
  send_udp(4791, roce_payload(0x04, 1));
  auto facts = captures.stop("t/default");
  REQUIRE(facts);
  CHECK((*facts)["frames"] == 1);
  CHECK((*facts)["packets"] == 1);
  std::filesystem::remove(file);
}

TEST_CASE("sys.capture_pcap: a missing interface, a bad filter and an unwritable file are errors") {
  ThrowawayNetns netns;
  loopback_up();
  sys::PcapCaptures captures;
  const std::string file = temp_file("rxt-capture-errors");

  auto no_dev = captures.start({.id = "t/a", .dev = "rxt-nope0", .file = file});
  REQUIRE_FALSE(no_dev);
  CHECK(no_dev.error().code == ENODEV);

  auto bad_filter = captures.start({.id = "t/b", .dev = "lo", .filter = "udp prot 4791", .file = file});
  REQUIRE_FALSE(bad_filter);
  CHECK(bad_filter.error().code == EINVAL);
  CHECK(bad_filter.error().message.find("udp prot 4791") != std::string::npos);

  auto no_dir = captures.start({.id = "t/c", .dev = "lo", .file = "/nonexistent-rxt/x.pcap"});
  REQUIRE_FALSE(no_dir);
  CHECK(no_dir.error().message.find("/nonexistent-rxt/x.pcap") != std::string::npos);

  // Nothing of the failed starts is left running or written.
  CHECK_FALSE(captures.stop("t/b"));
  CHECK_FALSE(std::filesystem::exists(file));
}
