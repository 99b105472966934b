#include "roce/packet.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "roce/icrc.h"
#include "roce/opcodes.h"

namespace rxerun::roce {

namespace {

using Bytes = std::span<const std::uint8_t>;

constexpr std::uint16_t kEtherIpv4 = 0x0800;
constexpr std::uint16_t kEtherIpv6 = 0x86dd;
constexpr std::uint16_t kEtherVlan = 0x8100;  // 802.1Q
constexpr std::uint16_t kEtherQinQ = 0x88a8;  // 802.1ad service tag
constexpr std::uint8_t kIpProtoUdp = 17;
constexpr std::size_t kBthSize = 12;
constexpr std::size_t kIcrcSize = 4;

// Big-endian value of `n` bytes at `at`. Callers check the length first
// (need()); bytes past the end read as nothing, so a slip cannot overrun.
std::uint64_t be(Bytes s, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n && at + i < s.size(); ++i) v = (v << 8) | s[at + i];
  return v;
}
std::uint16_t be16(Bytes s, std::size_t at) {
  return static_cast<std::uint16_t>(be(s, at, 2));
}
std::uint32_t be24(Bytes s, std::size_t at) {
  return static_cast<std::uint32_t>(be(s, at, 3));
}
std::uint32_t be32(Bytes s, std::size_t at) {
  return static_cast<std::uint32_t>(be(s, at, 4));
}
std::uint64_t be64(Bytes s, std::size_t at) {
  return be(s, at, 8);
}

Error truncated(const std::string& what, std::size_t have, std::size_t want) {
  return make_error("truncated " + what + ": " + std::to_string(have) + " of " + std::to_string(want) + " bytes");
}

// An error when `s` holds fewer than `n` bytes.
std::optional<Error> need(Bytes s, std::size_t n, const std::string& what) {
  if (s.size() < n) return truncated(what, s.size(), n);
  return std::nullopt;
}

std::string hex16(unsigned v) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%04x", v & 0xffff);
  return text;
}

// "02:00:0a:55:00:01". Every frame has two: no snprintf, one allocation.
std::string link_address(Bytes s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(s.empty() ? 0 : s.size() * 3 - 1, ':');
  for (std::size_t i = 0; i < s.size(); ++i) {
    out[3 * i] = kHex[s[i] >> 4];
    out[3 * i + 1] = kHex[s[i] & 0x0f];
  }
  return out;
}

std::string ip_text(int family, Bytes address) {
  if (family == AF_INET && address.size() == 4) {
    // Dotted decimal by hand: glibc's inet_ntop formats IPv4 with sprintf,
    // and every frame has two addresses.
    char text[16];
    char* at = text;
    for (std::size_t i = 0; i < 4; ++i) {
      const unsigned v = address[i];
      if (v >= 100) *at++ = static_cast<char>('0' + v / 100);
      if (v >= 10) *at++ = static_cast<char>('0' + v / 10 % 10);
      *at++ = static_cast<char>('0' + v % 10);
      if (i < 3) *at++ = '.';
    }
    return std::string(text, at);
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (!::inet_ntop(family, address.data(), text, sizeof text)) return "";
  return text;
}

const char* ext_header_name(ExtHeader h) {
  switch (h) {
    case kRdeth: return "RDETH";
    case kDeth: return "DETH";
    case kReth: return "RETH";
    case kAtomicEth: return "AtomicETH";
    case kAeth: return "AETH";
    case kAtomicAckEth: return "AtomicAckETH";
    case kImmDt: return "ImmDt";
    case kIeth: return "IETH";
    case kCnpReserved: return "CNP reserved bytes";
  }
  return "?";
}

// IBA wire order of the extension headers.
constexpr std::array<ExtHeader, 9> kWireOrder = {kRdeth,        kDeth,  kReth, kAtomicEth,  kAeth,
                                                 kAtomicAckEth, kImmDt, kIeth, kCnpReserved};

Bth parse_bth(Bytes b) {
  Bth bth;
  bth.opcode = b[0];
  bth.solicited = b[1] & 0x80;
  bth.mig_req = b[1] & 0x40;
  bth.pad = (b[1] >> 4) & 0x3;
  bth.tver = b[1] & 0x0f;
  bth.pkey = be16(b, 2);
  bth.fecn = b[4] & 0x80;
  bth.becn = b[4] & 0x40;
  bth.dest_qp = be24(b, 5);
  bth.ack_req = b[8] & 0x80;
  bth.psn = be24(b, 9);
  return bth;
}

Aeth parse_aeth(Bytes b) {
  Aeth aeth;
  aeth.syndrome = b[0];
  aeth.msn = be24(b, 1);
  aeth.value = aeth.syndrome & 0x1f;
  switch ((aeth.syndrome >> 5) & 0x3) {
    case 0: aeth.kind = AethKind::ack; break;
    case 1: aeth.kind = AethKind::rnr_nak; break;
    case 2: aeth.kind = AethKind::reserved; break;
    case 3: aeth.kind = AethKind::nak; break;
  }
  if (aeth.kind == AethKind::nak && aeth.value <= 4) aeth.nak = static_cast<NakCode>(aeth.value);
  return aeth;
}

// Reads one extension header `h` from `b` (already length-checked) into `p`.
void parse_ext(ExtHeader h, Bytes b, Packet& p) {
  switch (h) {
    case kRdeth: p.rdeth_ee_context = be24(b, 1); break;
    case kDeth: p.deth = Deth{be32(b, 0), be24(b, 5)}; break;
    case kReth: p.reth = Reth{be64(b, 0), be32(b, 8), be32(b, 12)}; break;
    case kAtomicEth: p.atomic_eth = AtomicEth{be64(b, 0), be32(b, 8), be64(b, 12), be64(b, 20)}; break;
    case kAeth: p.aeth = parse_aeth(b); break;
    case kAtomicAckEth: p.atomic_ack_eth = AtomicAckEth{be64(b, 0)}; break;
    case kImmDt: p.imm = be32(b, 0); break;
    case kIeth: p.ieth = be32(b, 0); break;
    case kCnpReserved: break;
  }
}

// The link-layer header: where the network layer starts and its ethertype.
struct Link {
  std::size_t offset = 0;
  std::uint16_t ethertype = 0;
};

Result<Link> parse_link(Bytes frame, int link_type, Packet& p) {
  Link link;
  switch (link_type) {
    case kLinkEthernet:
      if (auto e = need(frame, 14, "Ethernet header")) return *e;
      p.link_dst = link_address(frame.subspan(0, 6));
      p.link_src = link_address(frame.subspan(6, 6));
      link = {14, be16(frame, 12)};
      break;
    case kLinkLinuxSll: {
      if (auto e = need(frame, 16, "Linux cooked header")) return *e;
      const std::size_t alen = std::min<std::size_t>(be16(frame, 4), 8);
      p.link_src = link_address(frame.subspan(6, alen));
      link = {16, be16(frame, 14)};
      break;
    }
    case kLinkLinuxSll2: {
      if (auto e = need(frame, 20, "Linux cooked v2 header")) return *e;
      const std::size_t alen = std::min<std::size_t>(frame[11], 8);
      p.link_src = link_address(frame.subspan(12, alen));
      link = {20, be16(frame, 0)};
      break;
    }
    case kLinkRaw:
    case kLinkRawBsd:
      if (auto e = need(frame, 1, "IP header")) return *e;
      if (frame[0] >> 4 == 4) return Link{0, kEtherIpv4};
      if (frame[0] >> 4 == 6) return Link{0, kEtherIpv6};
      return make_error("malformed raw IP packet: IP version " + std::to_string(frame[0] >> 4));
    default: return make_error("unsupported link type " + std::to_string(link_type));
  }
  while (link.ethertype == kEtherVlan || link.ethertype == kEtherQinQ) {
    if (auto e = need(frame.subspan(link.offset), 4, "VLAN tag")) return *e;
    p.vlan_ids.push_back(be16(frame, link.offset) & 0x0fff);
    link.ethertype = be16(frame, link.offset + 2);
    link.offset += 4;
  }
  return link;
}

}  // namespace

std::string aeth_kind_name(AethKind kind) {
  switch (kind) {
    case AethKind::ack: return "ACK";
    case AethKind::rnr_nak: return "RNR NAK";
    case AethKind::nak: return "NAK";
    case AethKind::reserved: return "reserved";
  }
  return "reserved";
}

std::string nak_code_name(NakCode code) {
  switch (code) {
    case NakCode::psn_sequence_error: return "PSN sequence error";
    case NakCode::invalid_request: return "invalid request";
    case NakCode::remote_access_error: return "remote access error";
    case NakCode::remote_operational_error: return "remote operational error";
    case NakCode::invalid_rd_request: return "invalid RD request";
    case NakCode::reserved: return "reserved";
  }
  return "reserved";
}

Result<Decoded> decode(const std::uint8_t* data, std::size_t length, int link_type) {
  if (!data) length = 0;
  const Bytes frame(data, length);
  Packet p;

  auto link = parse_link(frame, link_type, p);
  if (!link) return link.error();
  if (link->ethertype != kEtherIpv4 && link->ethertype != kEtherIpv6)
    return Decoded{NotRoce{"ethertype " + hex16(link->ethertype)}};

  // The network layer. `ip` ends where the IP length says (dropping Ethernet
  // padding) or where the capture does, whichever is first: a short capture is
  // reported at the first header it cuts.
  Bytes ip = frame.subspan(link->offset);
  std::size_t ip_header_size = 0;
  std::size_t ip_payload_claimed = 0;  // what the IP header says follows it
  if (link->ethertype == kEtherIpv4) {
    if (auto e = need(ip, 20, "IPv4 header")) return *e;
    if (ip[0] >> 4 != 4) return make_error("malformed IPv4 header: version " + std::to_string(ip[0] >> 4));
    ip_header_size = (ip[0] & 0x0f) * 4u;
    if (ip_header_size < 20) return make_error("malformed IPv4 header: IHL " + std::to_string(ip[0] & 0x0f));
    if (auto e = need(ip, ip_header_size, "IPv4 header")) return *e;
    const std::size_t total = be16(ip, 2);
    if (total < ip_header_size)
      return make_error("malformed IPv4 header: total length " + std::to_string(total) + " < header length " +
                        std::to_string(ip_header_size));
    ip = ip.first(std::min(total, ip.size()));
    ip_payload_claimed = total - ip_header_size;
    p.ip_version = 4;
    p.dscp = ip[1] >> 2;
    p.ecn = ip[1] & 0x3;
    p.ttl = ip[8];
    p.ip_src = ip_text(AF_INET, ip.subspan(12, 4));
    p.ip_dst = ip_text(AF_INET, ip.subspan(16, 4));
    if (ip[9] != kIpProtoUdp) return Decoded{NotRoce{"IP protocol " + std::to_string(ip[9])}};
    const std::uint16_t frag = be16(ip, 6);
    if ((frag & 0x2000) || (frag & 0x1fff))
      return make_error("IPv4 fragment (id " + hex16(be16(ip, 4)) + ", offset " + std::to_string((frag & 0x1fff) * 8) +
                        ((frag & 0x2000) ? ", more fragments" : "") + "): not decodable");
  } else {
    if (auto e = need(ip, 40, "IPv6 header")) return *e;
    if (ip[0] >> 4 != 6) return make_error("malformed IPv6 header: version " + std::to_string(ip[0] >> 4));
    ip_header_size = 40;
    ip_payload_claimed = be16(ip, 4);
    ip = ip.first(std::min(ip_header_size + ip_payload_claimed, ip.size()));
    const unsigned traffic_class = ((ip[0] & 0x0f) << 4) | (ip[1] >> 4);
    p.ip_version = 6;
    p.dscp = traffic_class >> 2;
    p.ecn = traffic_class & 0x3;
    p.ttl = ip[7];
    p.ip_src = ip_text(AF_INET6, ip.subspan(8, 16));
    p.ip_dst = ip_text(AF_INET6, ip.subspan(24, 16));
    if (ip[6] != kIpProtoUdp)
      return Decoded{NotRoce{"IPv6 next header " + std::to_string(ip[6]) + " (extension headers are not followed)"}};
  }

  // UDP.
  const Bytes ip_header = ip.first(ip_header_size);
  Bytes udp = ip.subspan(ip_header_size);
  if (auto e = need(udp, 8, "UDP header")) return *e;
  p.src_port = be16(udp, 0);
  p.dst_port = be16(udp, 2);
  p.udp_length = be16(udp, 4);
  if (p.dst_port != kRoceV2Port) return Decoded{NotRoce{"UDP to port " + std::to_string(p.dst_port)}};
  if (p.udp_length < 8) return make_error("malformed UDP header: length " + std::to_string(p.udp_length));
  if (p.udp_length > ip_payload_claimed)
    return make_error("malformed UDP header: length " + std::to_string(p.udp_length) + " exceeds the IP payload's " +
                      std::to_string(ip_payload_claimed));
  const Bytes udp_header = udp.first(8);
  udp = udp.first(std::min<std::size_t>(p.udp_length, udp.size()));
  const Bytes transport = udp.subspan(8);
  const std::size_t transport_claimed = p.udp_length - 8u;

  // BTH and the extension headers its opcode implies.
  if (auto e = need(transport, kBthSize, "BTH")) return *e;
  p.bth = parse_bth(transport);
  std::size_t at = kBthSize;
  const auto headers = opcode_headers(p.bth.opcode);
  p.opcode_known = headers.has_value();
  for (const ExtHeader h : kWireOrder) {
    if (!headers || !(*headers & h)) continue;
    const std::size_t size = ext_header_size(h);
    const Bytes rest = transport.subspan(at);
    if (auto e = need(rest, size, ext_header_name(h))) return *e;
    parse_ext(h, rest.first(size), p);
    at += size;
  }

  // Payload, pad and ICRC: the end is known only once the whole datagram is here.
  if (transport.size() < transport_claimed)
    return truncated("payload and ICRC", transport.size() - at, transport_claimed - at);
  if (transport.size() < at + p.bth.pad + kIcrcSize)
    return make_error("malformed " + opcode_name(p.bth.opcode) + ": " + std::to_string(transport.size() - at) +
                      " bytes after the headers, fewer than pad " + std::to_string(p.bth.pad) + " + ICRC 4");
  p.payload_length = transport.size() - at - p.bth.pad - kIcrcSize;
  const Bytes icrc = transport.last(kIcrcSize);
  p.icrc_stored = icrc[0] | (icrc[1] << 8) | (icrc[2] << 16) | (static_cast<std::uint32_t>(icrc[3]) << 24);
  p.icrc_computed = compute_icrc(p.ip_version, ip_header, udp_header, transport.first(transport.size() - kIcrcSize));
  p.icrc_ok = p.icrc_stored == p.icrc_computed;
  return Decoded{std::move(p)};
}

bool decodable_link_type(int link_type) {
  switch (link_type) {
    case kLinkEthernet:
    case kLinkRaw:
    case kLinkRawBsd:
    case kLinkLinuxSll:
    case kLinkLinuxSll2: return true;
    default: return false;
  }
}

}  // namespace rxerun::roce
