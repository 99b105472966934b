#include "roce/opcodes.h"

#include <array>
#include <cctype>
#include <cstdio>

namespace rxerun::roce {

namespace {

constexpr std::uint8_t kCnpOpcode = 0x81;

enum Transport : std::uint8_t { kRc = 0, kUc = 1, kRd = 2, kUd = 3, kCnp = 4, kXrc = 5 };

struct Operation {
  const char* name;  // nullptr: reserved
  unsigned headers;  // for RC/UC/UD; RD adds RDETH (and DETH on requests) below
};

// Indexed by the low 5 bits. 21 is RD's RESYNC, 24..31 are FLUSH,
// ATOMIC_WRITE and reserved: none are decoded.
constexpr std::array<Operation, 32> kOperations = {{
    {"SEND_FIRST", 0},
    {"SEND_MIDDLE", 0},
    {"SEND_LAST", 0},
    {"SEND_LAST_WITH_IMMEDIATE", kImmDt},
    {"SEND_ONLY", 0},
    {"SEND_ONLY_WITH_IMMEDIATE", kImmDt},
    {"RDMA_WRITE_FIRST", kReth},
    {"RDMA_WRITE_MIDDLE", 0},
    {"RDMA_WRITE_LAST", 0},
    {"RDMA_WRITE_LAST_WITH_IMMEDIATE", kImmDt},
    {"RDMA_WRITE_ONLY", kReth},
    {"RDMA_WRITE_ONLY_WITH_IMMEDIATE", kReth | kImmDt},
    {"RDMA_READ_REQUEST", kReth},
    {"RDMA_READ_RESPONSE_FIRST", kAeth},
    {"RDMA_READ_RESPONSE_MIDDLE", 0},
    {"RDMA_READ_RESPONSE_LAST", kAeth},
    {"RDMA_READ_RESPONSE_ONLY", kAeth},
    {"ACKNOWLEDGE", kAeth},
    {"ATOMIC_ACKNOWLEDGE", kAeth | kAtomicAckEth},
    {"COMPARE_SWAP", kAtomicEth},
    {"FETCH_ADD", kAtomicEth},
    {nullptr, 0},
    {"SEND_LAST_WITH_INVALIDATE", kIeth},
    {"SEND_ONLY_WITH_INVALIDATE", kIeth},
}};

bool is_response(unsigned op) {
  return op >= 13 && op <= 18;
}

// Whether `transport` defines operation `op` (IBA table 38).
bool defined(unsigned transport, unsigned op) {
  if (op >= kOperations.size() || !kOperations[op].name) return false;
  switch (transport) {
    case kRc:
    case kXrc: return true;
    case kUc: return op <= 11;
    case kRd: return op <= 20;
    case kUd: return op == 4 || op == 5;
    default: return false;
  }
}

std::string unknown(std::uint8_t opcode) {
  char text[16];
  std::snprintf(text, sizeof text, "UNKNOWN_0x%02x", opcode);
  return text;
}

}  // namespace

std::size_t ext_header_size(ExtHeader h) {
  switch (h) {
    case kRdeth: return 4;
    case kDeth: return 8;
    case kReth: return 16;
    case kAtomicEth: return 28;
    case kAeth: return 4;
    case kAtomicAckEth: return 8;
    case kImmDt: return 4;
    case kIeth: return 4;
    case kCnpReserved: return 16;
  }
  return 0;
}

std::optional<unsigned> opcode_headers(std::uint8_t opcode) {
  if (opcode == kCnpOpcode) return kCnpReserved;
  const unsigned transport = opcode >> 5, op = opcode & 0x1f;
  if (transport == kXrc || !defined(transport, op)) return std::nullopt;
  unsigned headers = kOperations[op].headers;
  if (transport == kUd) headers |= kDeth;
  if (transport == kRd) headers |= kRdeth | (is_response(op) ? 0u : kDeth);
  return headers;
}

std::string transport_name(std::uint8_t opcode) {
  static constexpr std::array<const char*, 8> kNames = {"RC", "UC", "RD", "UD", "CNP", "XRC", "", ""};
  return kNames[opcode >> 5];
}

std::string operation_name(std::uint8_t opcode) {
  if (opcode == kCnpOpcode) return "CNP";
  const unsigned transport = opcode >> 5, op = opcode & 0x1f;
  if (!defined(transport, op)) return "";
  return kOperations[op].name;
}

std::string opcode_name(std::uint8_t opcode) {
  if (opcode == kCnpOpcode) return "CNP";
  const auto op = operation_name(opcode);
  if (op.empty()) return unknown(opcode);
  return transport_name(opcode) + "_" + op;
}

std::string opcode_display_name(std::uint8_t opcode) {
  if (opcode == kCnpOpcode) return "CNP";
  const auto op = operation_name(opcode);
  if (op.empty()) return unknown(opcode);
  std::string out = transport_name(opcode);
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    if (word != "RDMA")
      for (std::size_t i = 1; i < word.size(); ++i) word[i] = static_cast<char>(std::tolower(word[i]));
    out += " " + word;
    word.clear();
  };
  for (char c : op) {
    if (c == '_')
      flush();
    else
      word += c;
  }
  flush();
  return out;
}

}  // namespace rxerun::roce
