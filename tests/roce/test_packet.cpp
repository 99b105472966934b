// The RoCEv2 decoder (roce/packet.h) on frames built here, byte by byte. The
// builder computes each ICRC with its own bitwise CRC-32 and its own masking
// (docs/kernel-notes.md, "ICRC", cross-checked with the kernel's rxe_icrc.c), not the
// library's table, so a wrong mask or table in roce/icrc.cpp shows up here.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "roce/icrc.h"
#include "roce/opcodes.h"
#include "roce/packet.h"

using namespace rxerun;
using namespace rxerun::roce;

namespace {

using Bytes = std::vector<std::uint8_t>;

void put(Bytes& out, std::uint64_t value, int n) {
  for (int i = n - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

// Straightforward bitwise CRC-32 (reflected 0xEDB88320, init and final xor all ones).
std::uint32_t reference_crc32(const Bytes& bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (const auto b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
  }
  return ~crc;
}

struct Spec {
  int ip_version = 4;
  std::vector<std::pair<std::uint16_t, std::uint16_t>> tags;  // TPID, TCI; outermost first
  std::uint8_t ip_proto = 17;
  std::uint8_t tos = 0x02;  // ECT(0), as rxe sends by default
  std::uint8_t ttl = 64;
  std::uint32_t flow_label = 0x12345;
  std::uint8_t ipv4_options = 0;  // 4-byte words of IPv4 options
  std::uint16_t dst_port = 4791;
  std::uint8_t opcode = 0x0a;
  bool solicited = false;
  bool ack_req = true;
  std::uint8_t byte4 = 0;  // FECN, BECN, resv6a
  std::uint32_t dest_qp = 0x000011;
  std::uint32_t psn = 0x98c736;
  Bytes ext;      // extension headers, already encoded
  Bytes payload;  // pad is added to a multiple of 4
};

struct Built {
  Bytes frame;
  std::size_t ip_offset = 0;
  std::uint32_t icrc = 0;
};

Built build(const Spec& s) {
  const std::uint8_t pad = static_cast<std::uint8_t>((4 - s.payload.size() % 4) % 4);
  Bytes transport;
  transport.push_back(s.opcode);
  transport.push_back(static_cast<std::uint8_t>((s.solicited ? 0x80 : 0) | (pad << 4)));
  put(transport, 0xffff, 2);  // default P_Key
  transport.push_back(s.byte4);
  put(transport, s.dest_qp, 3);
  transport.push_back(s.ack_req ? 0x80 : 0);
  put(transport, s.psn, 3);
  transport.insert(transport.end(), s.ext.begin(), s.ext.end());
  transport.insert(transport.end(), s.payload.begin(), s.payload.end());
  transport.insert(transport.end(), pad, 0);

  const std::uint16_t udp_length = static_cast<std::uint16_t>(8 + transport.size() + 4);
  Bytes udp;
  put(udp, 0xc000, 2);
  put(udp, s.dst_port, 2);
  put(udp, udp_length, 2);
  put(udp, 0, 2);  // rxe leaves the checksum 0

  Bytes ip;
  if (s.ip_version == 4) {
    const std::size_t header = 20 + 4u * s.ipv4_options;
    ip.push_back(static_cast<std::uint8_t>(0x40 | (header / 4)));
    ip.push_back(s.tos);
    put(ip, header + udp_length, 2);
    put(ip, 0x1234, 2);
    put(ip, 0x4000, 2);  // DF
    ip.push_back(s.ttl);
    ip.push_back(s.ip_proto);
    put(ip, 0, 2);
    put(ip, 0x0a550001, 4);
    put(ip, 0x0a550002, 4);
    for (int i = 0; i < s.ipv4_options; ++i) put(ip, 0x01010101, 4);  // NOPs
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < ip.size(); i += 2) sum += (ip[i] << 8) | ip[i + 1];
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    ip[10] = static_cast<std::uint8_t>(~sum >> 8);
    ip[11] = static_cast<std::uint8_t>(~sum);
  } else {
    put(ip, (6u << 28) | (std::uint32_t{s.tos} << 20) | s.flow_label, 4);
    put(ip, udp_length, 2);
    ip.push_back(s.ip_proto);
    ip.push_back(s.ttl);
    put(ip, 0xfd000000, 4), put(ip, 0, 4), put(ip, 0, 4), put(ip, 1, 4);
    put(ip, 0xfd000000, 4), put(ip, 0, 4), put(ip, 0, 4), put(ip, 2, 4);
  }

  // The ICRC's input, masked as docs/kernel-notes.md says.
  Bytes icrc_input(8, 0xff);
  Bytes masked_ip = ip;
  if (s.ip_version == 4) {
    masked_ip[1] = 0xff, masked_ip[8] = 0xff, masked_ip[10] = 0xff, masked_ip[11] = 0xff;
  } else {
    masked_ip[0] = 0x6f, masked_ip[1] = masked_ip[2] = masked_ip[3] = 0xff, masked_ip[7] = 0xff;
  }
  icrc_input.insert(icrc_input.end(), masked_ip.begin(), masked_ip.end());
  Bytes masked_udp = udp;
  masked_udp[6] = masked_udp[7] = 0xff;
  icrc_input.insert(icrc_input.end(), masked_udp.begin(), masked_udp.end());
  Bytes masked_transport = transport;
  masked_transport[4] = 0xff;
  icrc_input.insert(icrc_input.end(), masked_transport.begin(), masked_transport.end());
  const std::uint32_t icrc = reference_crc32(icrc_input);

  Built b;
  put(b.frame, 0x020000000002, 6);
  put(b.frame, 0x020000000001, 6);
  for (const auto& [tpid, tci] : s.tags) put(b.frame, tpid, 2), put(b.frame, tci, 2);
  put(b.frame, s.ip_version == 4 ? 0x0800 : 0x86dd, 2);
  b.ip_offset = b.frame.size();
  b.frame.insert(b.frame.end(), ip.begin(), ip.end());
  b.frame.insert(b.frame.end(), udp.begin(), udp.end());
  b.frame.insert(b.frame.end(), transport.begin(), transport.end());
  for (int i = 0; i < 4; ++i) b.frame.push_back(static_cast<std::uint8_t>(icrc >> (8 * i)));  // little-endian
  b.icrc = icrc;
  return b;
}

Bytes reth(std::uint64_t va, std::uint32_t rkey, std::uint32_t length) {
  Bytes out;
  put(out, va, 8), put(out, rkey, 4), put(out, length, 4);
  return out;
}
Bytes aeth(std::uint8_t syndrome, std::uint32_t msn) {
  Bytes out{syndrome};
  put(out, msn, 3);
  return out;
}
Bytes be32(std::uint32_t v) {
  Bytes out;
  put(out, v, 4);
  return out;
}
Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
Bytes payload(std::size_t n) {
  Bytes out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::uint8_t>(i * 7 + 1));
  return out;
}

// The Packet, failing the test case when the frame did not decode to one.
Packet packet_of(const Bytes& frame, int link_type = kLinkEthernet) {
  auto r = decode(frame, link_type);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  REQUIRE_MESSAGE(std::holds_alternative<Packet>(*r), "not RoCE: " << std::get<NotRoce>(*r).reason);
  return std::get<Packet>(*r);
}

std::string error_of(const Bytes& frame, int link_type = kLinkEthernet) {
  auto r = decode(frame, link_type);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

std::string not_roce_reason(const Bytes& frame) {
  auto r = decode(frame);
  REQUIRE(r.ok());
  REQUIRE(std::holds_alternative<NotRoce>(*r));
  return std::get<NotRoce>(*r).reason;
}

Spec write_only() {
  Spec s;
  s.opcode = 0x0a;
  s.ext = reth(0x0000556a84180000, 0x0004ca, 1024);
  s.payload = payload(1024);
  return s;
}

}  // namespace

TEST_CASE("roce: the CRC-32 is the standard one and starts where the kernel's ICRC seed says") {
  const Bytes check = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  CHECK(reference_crc32(check) == 0xCBF43926u);
  CHECK(~crc32_update(0xFFFFFFFFu, check) == 0xCBF43926u);
  // rxe_icrc.c seeds its CRC with 0xdebb20e3: "a CRC with a seed of 0xffffffff
  // and 8 bytes of 0xff representing a masked LRH".
  const Bytes lrh(8, 0xff);
  CHECK(crc32_update(0xFFFFFFFFu, lrh) == 0xdebb20e3u);
}

TEST_CASE("roce: crc32_update's fast paths (8 bytes at a time, PCLMUL from 64) equal the bitwise CRC") {
  // Every length up to 600 bytes, at four alignments, in two pieces: what a
  // table slip or a wrong folding constant would break first.
  Bytes data(600 + 3);
  std::uint32_t seed = 12345;
  for (auto& b : data) b = static_cast<std::uint8_t>((seed = seed * 1103515245u + 12345u) >> 16);
  int mismatches = 0;
  for (std::size_t length = 0; length <= 600; ++length) {
    for (std::size_t offset = 0; offset < 4; ++offset) {
      const Bytes part(data.begin() + offset, data.begin() + offset + length);
      const std::size_t cut = length / 3;
      const std::uint32_t state =
          crc32_update(crc32_update(0xFFFFFFFFu, std::span(part).first(cut)), std::span(part).subspan(cut));
      if (~state != reference_crc32(part)) ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("roce: RC RDMA WRITE ONLY over IPv4 with RETH, payload and a good ICRC") {
  const auto built = build(write_only());
  const auto p = packet_of(built.frame);
  CHECK(p.link_dst == "02:00:00:00:00:02");
  CHECK(p.link_src == "02:00:00:00:00:01");
  CHECK(p.vlan_ids.empty());
  CHECK(p.ip_version == 4);
  CHECK(p.ip_src == "10.85.0.1");
  CHECK(p.ip_dst == "10.85.0.2");
  CHECK(p.ecn == 2);
  CHECK(p.dscp == 0);
  CHECK(p.ttl == 64);
  CHECK(p.src_port == 0xc000);
  CHECK(p.dst_port == 4791);
  CHECK(p.bth.opcode == 0x0a);
  CHECK(opcode_name(p.bth.opcode) == "RC_RDMA_WRITE_ONLY");
  CHECK(p.bth.pkey == 0xffff);
  CHECK(p.bth.dest_qp == 0x11);
  CHECK(p.bth.psn == 0x98c736);
  CHECK(p.bth.ack_req);
  CHECK_FALSE(p.bth.solicited);
  CHECK(p.bth.pad == 0);
  CHECK(p.opcode_known);
  REQUIRE(p.reth);
  CHECK(p.reth->va == 0x0000556a84180000u);
  CHECK(p.reth->rkey == 0x0004ca);
  CHECK(p.reth->dma_length == 1024);
  CHECK_FALSE(p.aeth);
  CHECK_FALSE(p.deth);
  CHECK_FALSE(p.imm);
  CHECK(p.payload_length == 1024);
  CHECK(p.icrc_stored == built.icrc);
  CHECK(p.icrc_computed == built.icrc);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: ACKNOWLEDGE with an ACK, an RNR NAK and NAKs") {
  Spec s;
  s.opcode = 0x11;
  s.ack_req = false;

  s.ext = aeth(0x1f, 0x000123);  // ACK, credit code 31 (no flow control)
  auto p = packet_of(build(s).frame);
  CHECK(opcode_name(p.bth.opcode) == "RC_ACKNOWLEDGE");
  REQUIRE(p.aeth);
  CHECK(p.aeth->kind == AethKind::ack);
  CHECK(aeth_kind_name(p.aeth->kind) == "ACK");
  CHECK(p.aeth->value == 31);
  CHECK(p.aeth->msn == 0x123);
  CHECK(p.payload_length == 0);
  CHECK(p.icrc_ok);

  s.ext = aeth(0x20 | 0x0e, 7);  // RNR NAK, timer code 14
  p = packet_of(build(s).frame);
  REQUIRE(p.aeth);
  CHECK(p.aeth->kind == AethKind::rnr_nak);
  CHECK(aeth_kind_name(p.aeth->kind) == "RNR NAK");
  CHECK(p.aeth->value == 14);
  CHECK(p.aeth->msn == 7);
  CHECK(p.icrc_ok);

  s.ext = aeth(0x60, 9);  // NAK: PSN sequence error
  p = packet_of(build(s).frame);
  REQUIRE(p.aeth);
  CHECK(p.aeth->kind == AethKind::nak);
  CHECK(p.aeth->nak == NakCode::psn_sequence_error);
  CHECK(nak_code_name(p.aeth->nak) == "PSN sequence error");
  CHECK(p.icrc_ok);

  s.ext = aeth(0x62, 9);  // NAK: remote access error
  p = packet_of(build(s).frame);
  CHECK(p.aeth->nak == NakCode::remote_access_error);
  s.ext = aeth(0x63, 9);
  CHECK(packet_of(build(s).frame).aeth->nak == NakCode::remote_operational_error);
  s.ext = aeth(0x61, 9);
  CHECK(packet_of(build(s).frame).aeth->nak == NakCode::invalid_request);
  s.ext = aeth(0x64, 9);
  CHECK(packet_of(build(s).frame).aeth->nak == NakCode::invalid_rd_request);
  s.ext = aeth(0x65, 9);
  CHECK(packet_of(build(s).frame).aeth->nak == NakCode::reserved);
}

TEST_CASE("roce: SEND ONLY WITH IMMEDIATE, with pad") {
  Spec s;
  s.opcode = 0x05;
  s.solicited = true;
  s.ext = be32(0xdeadbeef);
  s.payload = payload(6);  // 2 bytes of pad
  const auto built = build(s);
  const auto p = packet_of(built.frame);
  CHECK(opcode_name(p.bth.opcode) == "RC_SEND_ONLY_WITH_IMMEDIATE");
  CHECK(p.bth.solicited);
  CHECK(p.bth.pad == 2);
  REQUIRE(p.imm);
  CHECK(*p.imm == 0xdeadbeef);
  CHECK_FALSE(p.reth);
  CHECK(p.payload_length == 6);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: RDMA READ REQUEST and READ RESPONSEs") {
  Spec s;
  s.opcode = 0x0c;
  s.ext = reth(0x7f0000001000, 0x1234, 4096);
  auto p = packet_of(build(s).frame);
  CHECK(opcode_name(p.bth.opcode) == "RC_RDMA_READ_REQUEST");
  REQUIRE(p.reth);
  CHECK(p.reth->dma_length == 4096);
  CHECK(p.payload_length == 0);
  CHECK(p.icrc_ok);

  s.opcode = 0x0d;  // READ RESPONSE FIRST: AETH and payload
  s.ext = aeth(0x1f, 3);
  s.payload = payload(1024);
  p = packet_of(build(s).frame);
  CHECK(opcode_name(p.bth.opcode) == "RC_RDMA_READ_RESPONSE_FIRST");
  REQUIRE(p.aeth);
  CHECK(p.aeth->msn == 3);
  CHECK(p.payload_length == 1024);
  CHECK(p.icrc_ok);

  s.opcode = 0x0e;  // READ RESPONSE MIDDLE: no AETH
  s.ext.clear();
  p = packet_of(build(s).frame);
  CHECK_FALSE(p.aeth);
  CHECK(p.payload_length == 1024);
  CHECK(p.icrc_ok);

  s.opcode = 0x10;  // READ RESPONSE ONLY
  s.ext = aeth(0x1f, 4);
  s.payload = payload(13);
  p = packet_of(build(s).frame);
  CHECK(opcode_name(p.bth.opcode) == "RC_RDMA_READ_RESPONSE_ONLY");
  REQUIRE(p.aeth);
  CHECK(p.payload_length == 13);
  CHECK(p.bth.pad == 3);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: UD SEND ONLY with DETH (a CM message to QP1)") {
  Spec s;
  s.opcode = 0x64;
  s.dest_qp = 1;
  Bytes deth;
  put(deth, 0x80010000, 4);  // the GSI's well-known Q_Key
  put(deth, 1, 4);           // reserved byte, then source QP 1
  s.ext = deth;
  s.payload = payload(256);  // a MAD
  const auto p = packet_of(build(s).frame);
  CHECK(opcode_name(p.bth.opcode) == "UD_SEND_ONLY");
  CHECK(p.bth.dest_qp == 1);
  REQUIRE(p.deth);
  CHECK(p.deth->qkey == 0x80010000u);
  CHECK(p.deth->src_qp == 1);
  CHECK(p.payload_length == 256);
  CHECK(p.icrc_ok);

  s.opcode = 0x65;  // with immediate: DETH, then ImmDt
  s.ext = cat(deth, be32(0x01020304));
  const auto q = packet_of(build(s).frame);
  REQUIRE(q.deth);
  REQUIRE(q.imm);
  CHECK(*q.imm == 0x01020304);
  CHECK(q.payload_length == 256);
  CHECK(q.icrc_ok);
}

TEST_CASE("roce: COMPARE SWAP and ATOMIC ACKNOWLEDGE") {
  Spec s;
  s.opcode = 0x13;
  Bytes eth;
  put(eth, 0x7f0000002000, 8), put(eth, 0xabcd, 4), put(eth, 0x1111222233334444, 8), put(eth, 0x5555666677778888, 8);
  s.ext = eth;
  auto p = packet_of(build(s).frame);
  CHECK(opcode_name(p.bth.opcode) == "RC_COMPARE_SWAP");
  REQUIRE(p.atomic_eth);
  CHECK(p.atomic_eth->va == 0x7f0000002000u);
  CHECK(p.atomic_eth->rkey == 0xabcd);
  CHECK(p.atomic_eth->swap_add == 0x1111222233334444u);
  CHECK(p.atomic_eth->compare == 0x5555666677778888u);
  CHECK(p.payload_length == 0);
  CHECK(p.icrc_ok);

  s.opcode = 0x12;  // AETH, then AtomicAckETH
  s.ext = aeth(0x1f, 5);
  put(s.ext, 0x0123456789abcdef, 8);
  p = packet_of(build(s).frame);
  CHECK(opcode_name(p.bth.opcode) == "RC_ATOMIC_ACKNOWLEDGE");
  REQUIRE(p.aeth);
  CHECK(p.aeth->msn == 5);
  REQUIRE(p.atomic_ack_eth);
  CHECK(p.atomic_ack_eth->orig_data == 0x0123456789abcdefu);
  CHECK(p.payload_length == 0);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: CNP") {
  Spec s;
  s.opcode = 0x81;
  s.ack_req = false;
  s.psn = 0;
  s.byte4 = 0x40;  // BECN
  s.ext = Bytes(16, 0);
  const auto p = packet_of(build(s).frame);
  CHECK(opcode_name(p.bth.opcode) == "CNP");
  CHECK(p.bth.becn);
  CHECK_FALSE(p.bth.fecn);
  CHECK(p.payload_length == 0);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: 802.1ad and 802.1Q tags") {
  auto s = write_only();
  s.tags = {{0x88a8, 100}, {0x8100, 0x2000 | 42}};  // priority 1 on the inner tag
  const auto p = packet_of(build(s).frame);
  REQUIRE(p.vlan_ids.size() == 2);
  CHECK(p.vlan_ids[0] == 100);
  CHECK(p.vlan_ids[1] == 42);
  CHECK(p.payload_length == 1024);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: IPv6") {
  auto s = write_only();
  s.ip_version = 6;
  s.tos = 0x68 | 0x3;  // DSCP 26, CE
  s.ttl = 255;
  const auto built = build(s);
  const auto p = packet_of(built.frame);
  CHECK(p.ip_version == 6);
  CHECK(p.ip_src == "fd00::1");
  CHECK(p.ip_dst == "fd00::2");
  CHECK(p.dscp == 26);
  CHECK(p.ecn == 3);
  CHECK(p.ttl == 255);
  CHECK(p.payload_length == 1024);
  CHECK(p.icrc_computed == built.icrc);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: IPv4 options are part of the IP header, and of the ICRC") {
  auto s = write_only();
  s.ipv4_options = 2;
  const auto p = packet_of(build(s).frame);
  CHECK(p.payload_length == 1024);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: the ICRC masks exactly the variant fields") {
  const auto built = build(write_only());
  const std::size_t ip = built.ip_offset;
  const std::size_t udp = ip + 20, bth = udp + 8;
  auto changed = [&](std::size_t at, std::uint8_t flip) {
    auto frame = built.frame;
    frame[at] ^= flip;
    return packet_of(frame);
  };
  // Variant fields: a router or a congested switch may change them.
  CHECK(changed(ip + 1, 0x01).icrc_ok);   // TOS: ECN from ECT(0) to CE
  CHECK(changed(ip + 8, 0x3f).icrc_ok);   // TTL
  CHECK(changed(ip + 10, 0x5a).icrc_ok);  // IP checksum
  CHECK(changed(udp + 6, 0x12).icrc_ok);  // UDP checksum
  const auto fecn = changed(bth + 4, 0x80);
  CHECK(fecn.icrc_ok);
  CHECK(fecn.bth.fecn);
  // Invariant fields.
  CHECK_FALSE(changed(ip + 12, 0x01).icrc_ok);                  // source address
  CHECK_FALSE(changed(udp + 0, 0x01).icrc_ok);                  // source port
  CHECK_FALSE(changed(bth + 11, 0x01).icrc_ok);                 // PSN
  CHECK_FALSE(changed(bth + 12, 0x01).icrc_ok);                 // RETH
  CHECK_FALSE(changed(built.frame.size() - 10, 0x01).icrc_ok);  // payload
  // The ICRC itself.
  auto frame = built.frame;
  frame.back() ^= 0x01;
  const auto p = packet_of(frame);
  CHECK_FALSE(p.icrc_ok);
  CHECK(p.icrc_computed == built.icrc);
  CHECK(p.icrc_stored == (built.icrc ^ 0x01000000u));
}

TEST_CASE("roce: Ethernet padding after a short packet is not payload") {
  Spec s;
  s.opcode = 0x11;
  s.ext = aeth(0x1f, 1);
  auto frame = build(s).frame;
  frame.insert(frame.end(), 6, 0);  // a NIC padding to 68 bytes, say
  const auto p = packet_of(frame);
  CHECK(p.payload_length == 0);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: other traffic is not RoCE, and not an error") {
  auto s = write_only();
  s.dst_port = 53;
  CHECK(not_roce_reason(build(s).frame) == "UDP to port 53");
  s.dst_port = 4791;
  s.ip_proto = 6;
  CHECK(not_roce_reason(build(s).frame) == "IP protocol 6");
  s.ip_version = 6;
  s.ip_proto = 0;  // hop-by-hop options first
  CHECK(not_roce_reason(build(s).frame) == "IPv6 next header 0 (extension headers are not followed)");

  Bytes arp;
  put(arp, 0xffffffffffff, 6), put(arp, 0x020000000001, 6), put(arp, 0x0806, 2);
  arp.insert(arp.end(), 28, 0);
  CHECK(not_roce_reason(arp) == "ethertype 0x0806");
}

TEST_CASE("roce: a RDMA WRITE cut at every byte is never a packet") {
  const auto built = build(write_only());
  const auto& frame = built.frame;
  for (std::size_t n = 0; n < frame.size(); ++n) {
    CAPTURE(n);
    const Bytes cut(frame.begin(), frame.begin() + n);  // exactly n bytes: a sanitizer catches an overrun
    const auto r = decode(cut.data(), cut.size());
    if (r.ok()) {
      CHECK(std::holds_alternative<NotRoce>(*r));  // never a Packet, so never icrc_ok
      continue;
    }
    CHECK(r.error().message.rfind("truncated ", 0) == 0);
  }
  const std::size_t bth = built.ip_offset + 28;
  CHECK(error_of(Bytes(frame.begin(), frame.begin() + 10)) == "truncated Ethernet header: 10 of 14 bytes");
  CHECK(error_of(Bytes(frame.begin(), frame.begin() + 30)) == "truncated IPv4 header: 16 of 20 bytes");
  CHECK(error_of(Bytes(frame.begin(), frame.begin() + bth - 3)) == "truncated UDP header: 5 of 8 bytes");
  CHECK(error_of(Bytes(frame.begin(), frame.begin() + bth + 7)) == "truncated BTH: 7 of 12 bytes");
  CHECK(error_of(Bytes(frame.begin(), frame.begin() + bth + 15)) == "truncated RETH: 3 of 16 bytes");
  CHECK(error_of(Bytes(frame.begin(), frame.begin() + bth + 28 + 100)) ==
        "truncated payload and ICRC: 100 of 1028 bytes");
}

TEST_CASE("roce: malformed headers and IPv4 fragments are errors that say why") {
  const auto built = build(write_only());
  const std::size_t ip = built.ip_offset, udp = ip + 20;

  auto frame = built.frame;
  frame[ip] = 0x44;  // IHL 4
  CHECK(error_of(frame) == "malformed IPv4 header: IHL 4");

  frame = built.frame;
  frame[udp + 4] = 0, frame[udp + 5] = 4;
  CHECK(error_of(frame) == "malformed UDP header: length 4");

  frame = built.frame;
  frame[udp + 4] = 0xff;  // longer than the IP packet
  CHECK(error_of(frame).find("exceeds the IP payload") != std::string::npos);

  frame = built.frame;
  frame[ip + 6] = 0x20;  // more fragments
  CHECK(error_of(frame) == "IPv4 fragment (id 0x1234, offset 0, more fragments): not decodable");
  frame[ip + 6] = 0x00, frame[ip + 7] = 0x10;
  CHECK(error_of(frame) == "IPv4 fragment (id 0x1234, offset 128): not decodable");

  Spec s;  // an ACK claiming 3 bytes of pad: 4 bytes after the AETH cannot hold pad and ICRC
  s.opcode = 0x11;
  s.ext = aeth(0, 0);
  frame = build(s).frame;
  frame[ip + 28 + 1] |= 0x30;
  CHECK(error_of(frame) == "malformed RC_ACKNOWLEDGE: 4 bytes after the headers, fewer than pad 3 + ICRC 4");

  CHECK(error_of(built.frame, 999) == "unsupported link type 999");
}

TEST_CASE("roce: an opcode without a known layout still decodes its BTH and ICRC") {
  Spec s;
  s.opcode = 0xa4;  // XRC SEND ONLY: XRCETH is not decoded
  s.payload = payload(20);
  const auto p = packet_of(build(s).frame);
  CHECK_FALSE(p.opcode_known);
  CHECK(opcode_name(p.bth.opcode) == "XRC_SEND_ONLY");
  CHECK(p.payload_length == 20);
  CHECK(p.icrc_ok);
}

TEST_CASE("roce: Linux cooked (v1, v2) and raw IP captures") {
  const auto built = build(write_only());
  const Bytes ip(built.frame.begin() + built.ip_offset, built.frame.end());

  Bytes sll;
  put(sll, 0, 2), put(sll, 1, 2), put(sll, 6, 2), put(sll, 0x020000000001, 6), put(sll, 0, 2), put(sll, 0x0800, 2);
  auto p = packet_of(cat(sll, ip), kLinkLinuxSll);
  CHECK(p.link_src == "02:00:00:00:00:01");
  CHECK(p.payload_length == 1024);
  CHECK(p.icrc_ok);

  Bytes sll2;
  put(sll2, 0x0800, 2), put(sll2, 0, 2), put(sll2, 3, 4), put(sll2, 1, 2), sll2.push_back(0), sll2.push_back(6);
  put(sll2, 0x020000000001, 6), put(sll2, 0, 2);
  p = packet_of(cat(sll2, ip), kLinkLinuxSll2);
  CHECK(p.link_src == "02:00:00:00:00:01");
  CHECK(p.icrc_ok);

  p = packet_of(ip, kLinkRaw);
  CHECK(p.link_src.empty());
  CHECK(p.ip_dst == "10.85.0.2");
  CHECK(p.icrc_ok);
  CHECK(packet_of(ip, kLinkRawBsd).icrc_ok);
}
