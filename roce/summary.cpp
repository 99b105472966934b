#include "roce/summary.h"

#include "roce/opcodes.h"

namespace rxerun::roce {
namespace {

constexpr std::uint32_t kPsnMask = 0xffffff;

}  // namespace

// RC operations 0x0d..0x12 are responses (RDMA READ response, ACKNOWLEDGE,
// ATOMIC ACKNOWLEDGE): their PSNs follow the requests they answer, and ACKs
// may be coalesced, so they take no part in the gap count.
bool is_rc_or_uc_request(std::uint8_t opcode) {
  const std::uint8_t transport = opcode & 0xe0;
  const std::uint8_t operation = opcode & 0x1f;
  if (transport == 0x00) return operation <= 0x0c || operation == 0x13 || operation == 0x14;
  if (transport == 0x20) return operation <= 0x0b;
  return false;
}

void Summary::add(const Packet& packet, std::size_t wire_length) {
  ++packets_;
  bytes_ += wire_length;
  ++(packet.icrc_ok ? icrc_good_ : icrc_bad_);
  ++opcodes_[opcode_name(packet.bth.opcode)];
  qps_.insert(packet.bth.dest_qp);

  if (packet.aeth) {
    switch (packet.aeth->kind) {
      case AethKind::ack:
        if ((packet.bth.opcode & 0x1f) == 0x11) ++acks_;
        break;
      case AethKind::nak: ++naks_; break;
      case AethKind::rnr_nak: ++rnr_naks_; break;
      case AethKind::reserved: break;
    }
  }

  if (!is_rc_or_uc_request(packet.bth.opcode)) return;
  Flow& flow = flows_[{packet.ip_dst, packet.bth.dest_qp}];
  const std::uint32_t psn = packet.bth.psn & kPsnMask;
  if (flow.known && psn != flow.next_psn) {
    // Ahead of the expected PSN (within half the 24-bit space): packets were
    // lost before the capture point; behind it: a retransmission.
    const std::uint32_t ahead = (psn - flow.next_psn) & kPsnMask;
    ++(ahead < (kPsnMask + 1) / 2 ? psn_gaps_ : psn_repeats_);
  }
  flow.next_psn = (psn + 1) & kPsnMask;
  // An RDMA READ request's responses take as many PSNs as they have packets,
  // which depends on the path MTU: the next request's PSN is not known.
  flow.known = (packet.bth.opcode & 0x1f) != 0x0c || (packet.bth.opcode & 0xe0) != 0x00;
}

void Summary::add(const Result<Decoded>& decoded, std::size_t wire_length) {
  if (!decoded) {
    add_malformed();
  } else if (const auto* packet = std::get_if<Packet>(&*decoded)) {
    add(*packet, wire_length);
  } else {
    add_other();
  }
}

nlohmann::json Summary::facts() const {
  nlohmann::json opcodes = nlohmann::json::object();
  for (const auto& [name, count] : opcodes_) opcodes[name] = count;
  nlohmann::json qps = nlohmann::json::array();
  for (std::uint32_t qp : qps_) qps.push_back(qp);
  return {
      {"packets", packets_},
      {"bytes", bytes_},
      {"other", other_},
      {"malformed", malformed_},
      {"icrc_good", icrc_good_},
      {"icrc_bad", icrc_bad_},
      {"acks", acks_},
      {"naks", naks_},
      {"rnr_naks", rnr_naks_},
      {"psn_gaps", psn_gaps_},
      {"psn_repeats", psn_repeats_},
      {"opcodes", opcodes},
      {"qps", qps},
  };
}

}  // namespace rxerun::roce
