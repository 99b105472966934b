#pragma once
// Decoding one captured RoCEv2 frame: link layer (Ethernet with 802.1Q/802.1ad
// tags, Linux cooked v1/v2, raw IP), IPv4 or IPv6, UDP to port 4791, the BTH
// and the extension headers its opcode implies (roce/opcodes.h), the payload
// length and the ICRC (roce/icrc.h). Knows nothing of scenarios or pcap files:
// the caller hands in the bytes pcap captured and the file's link type.
//
// Three outcomes: a Packet; NotRoce (some other traffic, not an error); or an
// Error saying what is wrong, naming what was short when the capture ends
// early ("truncated BTH: 7 of 12 bytes"). Nothing is read past `length`.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/result.h"

namespace rxerun::roce {

// pcap link types (LINKTYPE_* / DLT_*) decode() understands.
inline constexpr int kLinkEthernet = 1;     // DLT_EN10MB
inline constexpr int kLinkRaw = 101;        // LINKTYPE_RAW: the packet starts with the IP header
inline constexpr int kLinkRawBsd = 12;      // DLT_RAW on most systems, same meaning
inline constexpr int kLinkLinuxSll = 113;   // "any" device captures, cooked v1
inline constexpr int kLinkLinuxSll2 = 276;  // cooked v2

inline constexpr std::uint16_t kRoceV2Port = 4791;

// Whether decode() reads frames of this link type (the kLink* above).
bool decodable_link_type(int link_type);

// Base Transport Header, 12 bytes.
struct Bth {
  std::uint8_t opcode = 0;
  bool solicited = false;  // SE
  bool mig_req = false;    // M
  std::uint8_t pad = 0;    // PadCnt: bytes after the payload, before the ICRC
  std::uint8_t tver = 0;   // transport header version, 0
  std::uint16_t pkey = 0;
  bool fecn = false;          // byte 4, bit 7 (RoCEv2: ECN-marked on the way)
  bool becn = false;          // byte 4, bit 6
  std::uint32_t dest_qp = 0;  // 24 bit
  bool ack_req = false;       // A
  std::uint32_t psn = 0;      // 24 bit
};

struct Reth {
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t dma_length = 0;
};

// What an AETH's syndrome says (IBA 9.7.5.2.1). Bits 6-5 select the kind;
// the low 5 bits are the credit count (ACK), the timer (RNR NAK) or the code (NAK).
enum class AethKind { ack, rnr_nak, nak, reserved };
enum class NakCode {
  psn_sequence_error = 0,
  invalid_request = 1,
  remote_access_error = 2,
  remote_operational_error = 3,
  invalid_rd_request = 4,
  reserved = 255,  // codes 5..31
};

struct Aeth {
  std::uint8_t syndrome = 0;
  std::uint32_t msn = 0;  // 24 bit
  AethKind kind = AethKind::ack;
  std::uint8_t value = 0;           // syndrome & 0x1f: credits, RNR timer or NAK code
  NakCode nak = NakCode::reserved;  // meaningful when kind == nak
};

struct Deth {
  std::uint32_t qkey = 0;
  std::uint32_t src_qp = 0;  // 24 bit
};

struct AtomicEth {
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint64_t swap_add = 0;  // swap value (COMPARE_SWAP) or addend (FETCH_ADD)
  std::uint64_t compare = 0;
};

struct AtomicAckEth {
  std::uint64_t orig_data = 0;
};

struct Packet {
  // Link layer: MAC addresses "02:00:0a:55:00:01"; for Linux cooked captures
  // the source address only; both "" for raw IP.
  std::string link_src;
  std::string link_dst;
  std::vector<std::uint16_t> vlan_ids;  // outermost first; 802.1Q and 802.1ad tags

  int ip_version = 0;  // 4 or 6
  std::string ip_src;  // inet_ntop's form
  std::string ip_dst;
  std::uint8_t dscp = 0;
  std::uint8_t ecn = 0;  // 3 = congestion experienced
  std::uint8_t ttl = 0;  // hop limit for IPv6

  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  std::uint16_t udp_length = 0;  // UDP header + payload

  Bth bth;
  // Whether the opcode table knows this opcode's headers. When it does not,
  // no extension header is read and payload_length counts them in.
  bool opcode_known = true;
  std::optional<std::uint32_t> rdeth_ee_context;  // RD only
  std::optional<Deth> deth;
  std::optional<Reth> reth;
  std::optional<AtomicEth> atomic_eth;
  std::optional<Aeth> aeth;
  std::optional<AtomicAckEth> atomic_ack_eth;
  std::optional<std::uint32_t> imm;   // ImmDt, as on the wire (big-endian value)
  std::optional<std::uint32_t> ieth;  // IETH: the R_Key to invalidate

  std::size_t payload_length = 0;  // UDP payload - BTH - extension headers - pad - ICRC
  std::uint32_t icrc_stored = 0;   // the last 4 bytes, little-endian
  std::uint32_t icrc_computed = 0;
  bool icrc_ok = false;
};

// Traffic that is not RoCEv2: ARP, TCP, UDP to another port, IPv6 with an
// extension header first. `reason` says which ("UDP to port 53").
struct NotRoce {
  std::string reason;
};

using Decoded = std::variant<Packet, NotRoce>;

// Decodes `length` captured bytes at `data` of link type `link_type`.
// Errors: "truncated <header>: N of M bytes", "malformed <header>: ...",
// "IPv4 fragment ...: not decodable" (fragments are not reassembled), and
// "unsupported link type N".
Result<Decoded> decode(const std::uint8_t* data, std::size_t length, int link_type = kLinkEthernet);
inline Result<Decoded> decode(std::span<const std::uint8_t> frame, int link_type = kLinkEthernet) {
  return decode(frame.data(), frame.size(), link_type);
}

// "ACK", "RNR NAK", "NAK", "reserved"; and the NAK codes' names:
// "PSN sequence error", "invalid request", "remote access error",
// "remote operational error", "invalid RD request", "reserved".
std::string aeth_kind_name(AethKind kind);
std::string nak_code_name(NakCode code);

}  // namespace rxerun::roce
