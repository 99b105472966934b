#pragma once
// The IBA transport opcode table: what each BTH opcode is called and which
// extension headers follow the BTH. The header sets are the kernel's
// (drivers/infiniband/sw/rxe/rxe_opcode.c, rxe_opcode[]), the wire order is
// IBA's: RDETH, DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
//
// Opcode = transport (top 3 bits: RC 0x00, UC 0x20, RD 0x40, UD 0x60,
// CNP 0x80, XRC 0xA0) | operation (low 5 bits).

#include <cstdint>
#include <optional>
#include <string>

namespace rxerun::roce {

// Extension headers, as bits of a set.
enum ExtHeader : unsigned {
  kRdeth = 1u << 0,         // 4 B: EE context (RD only)
  kDeth = 1u << 1,          // 8 B: Q_Key, source QP
  kReth = 1u << 2,          // 16 B: VA, R_Key, DMA length
  kAtomicEth = 1u << 3,     // 28 B: VA, R_Key, swap/add, compare
  kAeth = 1u << 4,          // 4 B: syndrome, MSN
  kAtomicAckEth = 1u << 5,  // 8 B: original remote data
  kImmDt = 1u << 6,         // 4 B: immediate data
  kIeth = 1u << 7,          // 4 B: R_Key to invalidate
  kCnpReserved = 1u << 8,   // 16 B: the reserved bytes after a CNP's BTH (RoCEv2 annex A17)
};

// Header size in bytes of one ExtHeader bit.
std::size_t ext_header_size(ExtHeader h);

// The set of extension headers `opcode` carries; nullopt for an opcode the
// table does not hold (reserved, manufacturer-specific, XRC, FLUSH and
// ATOMIC_WRITE: their layout is not decoded).
std::optional<unsigned> opcode_headers(std::uint8_t opcode);

// The naming scheme: opcode_name is the stable, upper-case form, transport
// and operation joined by '_' ("RC_RDMA_WRITE_ONLY", "UD_SEND_ONLY", "CNP"),
// i.e. the kernel's IB_OPCODE_* names without the prefix. Unknown opcodes are
// "UNKNOWN_0xNN" (lower-case hex, two digits). Meant for facts and matching.
std::string opcode_name(std::uint8_t opcode);
// The transport alone: "RC", "UC", "RD", "UD", "CNP", "XRC", or "" for the
// reserved 0xC0/0xE0 ranges.
std::string transport_name(std::uint8_t opcode);
// The operation alone: "RDMA_WRITE_ONLY"; "CNP" for 0x81; "" when unknown.
std::string operation_name(std::uint8_t opcode);
// A title-cased form for people, close to Wireshark's: "RC RDMA Write Only",
// "UD Send Only With Immediate", "CNP"; unknown opcodes as in opcode_name.
std::string opcode_display_name(std::uint8_t opcode);

}  // namespace rxerun::roce
