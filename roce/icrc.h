#pragma once
// RoCEv2's invariant CRC (IBA annex A17.3.3, as rxe computes it in
// drivers/infiniband/sw/rxe/rxe_icrc.c): CRC-32 (reflected 0xEDB88320, init
// and final xor all ones) over
//   8 bytes of 0xFF                 (stand-in for the masked LRH)
//   the IP header, with the fields a router may change set to all ones:
//     IPv4: TOS (DSCP+ECN), TTL, header checksum
//     IPv6: traffic class, flow label, hop limit
//   the UDP header, checksum set to 0xFFFF
//   the BTH, byte 4 (FECN, BECN, resv6a: rxe's "resv8a") set to 0xFF
//   everything after the BTH up to the ICRC (extension headers, payload, pad).
// The ICRC is the last 4 bytes of the UDP payload, little-endian.

#include <cstdint>
#include <span>

namespace rxerun::roce {

// CRC-32 state after `bytes`, starting from `state`; no final xor. Start
// from 0xFFFFFFFF and xor the end result with 0xFFFFFFFF for the usual CRC-32.
std::uint32_t crc32_update(std::uint32_t state, std::span<const std::uint8_t> bytes);

// The ICRC (final xor applied) of a packet, given its IP header (the whole
// header: IHL*4 bytes for IPv4, 40 for IPv6), its UDP header (8 bytes), and
// the transport part from the first BTH byte up to, not including, the ICRC.
// `ip_version` is 4 or 6. The inputs are not changed: masking is on copies.
std::uint32_t compute_icrc(int ip_version, std::span<const std::uint8_t> ip_header,
                           std::span<const std::uint8_t> udp_header, std::span<const std::uint8_t> transport);

}  // namespace rxerun::roce
