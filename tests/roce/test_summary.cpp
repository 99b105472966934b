// roce::Summary: the counts a capture step reports, on packets built here.

#include <doctest/doctest.h>

#include <cstdint>

#include "roce/summary.h"

using namespace rxerun::roce;

namespace {

Packet packet(std::uint8_t opcode, std::uint32_t psn, std::uint32_t qp = 0x11, const char* dst = "10.0.0.2") {
  Packet p;
  p.bth.opcode = opcode;
  p.bth.psn = psn;
  p.bth.dest_qp = qp;
  p.ip_dst = dst;
  p.icrc_ok = true;
  return p;
}

Packet ack(std::uint8_t syndrome, std::uint32_t psn) {
  Packet p = packet(0x11, psn, 0x12, "10.0.0.1");
  Aeth a;
  a.syndrome = syndrome;
  a.kind = syndrome >> 5 == 0   ? AethKind::ack
           : syndrome >> 5 == 1 ? AethKind::rnr_nak
           : syndrome >> 5 == 3 ? AethKind::nak
                                : AethKind::reserved;
  p.aeth = a;
  return p;
}

}  // namespace

TEST_CASE("roce.summary: counts opcodes, bytes, QPs and ICRC results") {
  Summary s;
  s.add(packet(0x06, 100), 1100);  // RC RDMA WRITE FIRST
  s.add(packet(0x07, 101), 1100);
  s.add(packet(0x08, 102), 600);
  Packet bad = packet(0x0a, 103);
  bad.icrc_ok = false;
  s.add(bad, 90);
  s.add(ack(0x1f, 103), 62);
  s.add_other();
  s.add_malformed();

  CHECK(s.packets() == 5);
  CHECK(s.bytes() == 1100 + 1100 + 600 + 90 + 62);
  CHECK(s.icrc_good() == 4);
  CHECK(s.icrc_bad() == 1);
  CHECK(s.other() == 1);
  CHECK(s.malformed() == 1);
  CHECK(s.acks() == 1);
  CHECK(s.psn_gaps() == 0);
  CHECK(s.psn_repeats() == 0);
  CHECK(s.opcodes().at("RC_RDMA_WRITE_FIRST") == 1);
  CHECK(s.opcodes().at("RC_ACKNOWLEDGE") == 1);
  CHECK(s.qps() == std::set<std::uint32_t>{0x11, 0x12});

  const auto facts = s.facts();
  CHECK(facts["packets"] == 5);
  CHECK(facts["opcodes"]["RC_RDMA_WRITE_ONLY"] == 1);
  CHECK(facts["qps"] == nlohmann::json::array({0x11, 0x12}));
}

TEST_CASE("roce.summary: NAKs and RNR NAKs by the AETH syndrome") {
  Summary s;
  s.add(ack(0x60, 5), 62);  // NAK, PSN sequence error
  s.add(ack(0x62, 6), 62);  // NAK, remote access error
  s.add(ack(0x2e, 7), 62);  // RNR NAK
  s.add(ack(0x1f, 8), 62);  // ACK
  CHECK(s.naks() == 2);
  CHECK(s.rnr_naks() == 1);
  CHECK(s.acks() == 1);
}

TEST_CASE("roce.summary: PSN gaps and repeats per destination QP, across the 24-bit wrap") {
  Summary s;
  s.add(packet(0x0a, 0xfffffe), 90);
  s.add(packet(0x0a, 0xffffff), 90);
  s.add(packet(0x0a, 0x000000), 90);  // wraps: no gap
  CHECK(s.psn_gaps() == 0);
  s.add(packet(0x0a, 0x000003), 90);  // 1 and 2 lost before the capture point
  CHECK(s.psn_gaps() == 1);
  s.add(packet(0x0a, 0x000001), 90);  // go-back-N: a retransmission
  CHECK(s.psn_repeats() == 1);
  s.add(packet(0x0a, 0x000002), 90);
  // Another QP and another destination are flows of their own.
  s.add(packet(0x0a, 500, 0x22), 90);
  s.add(packet(0x0a, 9000, 0x11, "10.0.0.9"), 90);
  CHECK(s.psn_gaps() == 1);
  CHECK(s.psn_repeats() == 1);
  // Responses take no part: ACK PSNs jump when ACKs are coalesced.
  s.add(ack(0x1f, 2), 62);
  s.add(ack(0x1f, 40), 62);
  CHECK(s.psn_gaps() == 1);
}

TEST_CASE("roce.summary: after an RDMA READ request the next PSN is not known") {
  Summary s;
  s.add(packet(0x0c, 10), 90);  // RC RDMA READ REQUEST: its responses take PSNs 10..13
  s.add(packet(0x0a, 14), 90);
  CHECK(s.psn_gaps() == 0);
  s.add(packet(0x0a, 16), 90);
  CHECK(s.psn_gaps() == 1);
}

TEST_CASE("roce.summary: a frame as decode() returned it counts as a packet, other traffic or malformed") {
  Summary s;
  s.add(rxerun::Result<Decoded>(Decoded(packet(0x0a, 1))), 90);
  s.add(rxerun::Result<Decoded>(Decoded(NotRoce{"UDP to port 53"})), 70);
  s.add(rxerun::Result<Decoded>(rxerun::make_error("truncated BTH: 7 of 12 bytes")), 49);
  CHECK(s.packets() == 1);
  CHECK(s.bytes() == 90);
  CHECK(s.other() == 1);
  CHECK(s.malformed() == 1);
}
