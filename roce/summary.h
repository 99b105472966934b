#pragma once
// What a capture held, counted over its decoded frames: the facts of a
// `capture` step and the summary `rxerun decode` prints. Knows nothing of
// pcap files or scenarios; feed it what roce::decode() returned, frame by
// frame, in capture order.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "roce/packet.h"

namespace rxerun::roce {

// Whether a packet of this opcode is a request of an RC or UC flow, whose
// PSNs Summary follows for gaps and repeats (responses and ACKs are not).
bool is_rc_or_uc_request(std::uint8_t opcode);

class Summary {
 public:
  // One decoded RoCEv2 packet; `wire_length` is the frame's length on the
  // wire (pcap's len, not the captured caplen).
  void add(const Packet& packet, std::size_t wire_length);
  // A frame that is other traffic (decode() said NotRoce).
  void add_other() { ++other_; }
  // A frame decode() could not read (truncated, malformed).
  void add_malformed() { ++malformed_; }
  // One frame as decode() returned it: one of the three above.
  void add(const Result<Decoded>& decoded, std::size_t wire_length);

  std::uint64_t packets() const { return packets_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t other() const { return other_; }
  std::uint64_t malformed() const { return malformed_; }
  std::uint64_t icrc_good() const { return icrc_good_; }
  std::uint64_t icrc_bad() const { return icrc_bad_; }
  std::uint64_t acks() const { return acks_; }
  std::uint64_t naks() const { return naks_; }
  std::uint64_t rnr_naks() const { return rnr_naks_; }
  std::uint64_t psn_gaps() const { return psn_gaps_; }
  std::uint64_t psn_repeats() const { return psn_repeats_; }
  // Packets per opcode name (roce::opcode_name: "RC_RDMA_WRITE_ONLY").
  const std::map<std::string, std::uint64_t>& opcodes() const { return opcodes_; }
  // Destination QP numbers seen.
  const std::set<std::uint32_t>& qps() const { return qps_; }

  // The facts, keys as the capture step documents them:
  //   packets, bytes, other, malformed, icrc_good, icrc_bad, acks, naks,
  //   rnr_naks, psn_gaps, psn_repeats, opcodes {NAME: count}, qps [numbers].
  nlohmann::json facts() const;

 private:
  struct Flow {
    std::uint32_t next_psn = 0;
    bool known = false;  // next_psn is what the next request must carry
  };
  std::uint64_t packets_ = 0, bytes_ = 0, other_ = 0, malformed_ = 0;
  std::uint64_t icrc_good_ = 0, icrc_bad_ = 0;
  std::uint64_t acks_ = 0, naks_ = 0, rnr_naks_ = 0;
  std::uint64_t psn_gaps_ = 0, psn_repeats_ = 0;
  std::map<std::string, std::uint64_t> opcodes_;
  std::set<std::uint32_t> qps_;
  // Request flows of RC and UC, by destination address and QP.
  std::map<std::pair<std::string, std::uint32_t>, Flow> flows_;
};

}  // namespace rxerun::roce
