// libFuzzer target: roce::decode() must turn any bytes of any link type it
// supports into a Packet, NotRoce or an Error, never read past the frame,
// crash or hang; and Summary must count whatever it returns.
//
// Input: the first byte picks the link type (below), the rest is the frame.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <variant>

#include "roce/icrc.h"
#include "roce/packet.h"
#include "roce/summary.h"

using namespace rxerun;

namespace {

// CRC-32 one bit at a time, the plain way: crc32_update's fast paths
// (slicing-by-8, PCLMUL from 64 bytes) must agree with it on every input.
std::uint32_t crc32_bytewise(std::uint32_t state, const std::uint8_t* p, std::size_t n) {
  for (; n > 0; --n, ++p) {
    state ^= *p;
    for (int k = 0; k < 8; ++k) state = (state & 1) ? 0xEDB88320u ^ (state >> 1) : state >> 1;
  }
  return state;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static constexpr std::array<int, 6> kLinkTypes = {roce::kLinkEthernet, roce::kLinkRaw,       roce::kLinkRawBsd,
                                                    roce::kLinkLinuxSll, roce::kLinkLinuxSll2, 147 /* unsupported */};
  if (size < 1) return 0;
  const int link_type = kLinkTypes[data[0] % kLinkTypes.size()];
  const std::uint8_t* frame = data + 1;
  const std::size_t length = size - 1;

  const std::size_t skew = length > 0 ? std::min<std::size_t>(frame[0] % 4, length) : 0;
  if (roce::crc32_update(0xFFFFFFFFu, {frame + skew, length - skew}) !=
      crc32_bytewise(0xFFFFFFFFu, frame + skew, length - skew))
    __builtin_trap();

  auto r = roce::decode(frame, length, link_type);
  roce::Summary summary;
  summary.add(r, length);
  if (!r) {
    if (r.error().message.empty()) __builtin_trap();  // every error says what is wrong
  } else if (const auto* p = std::get_if<roce::Packet>(&*r)) {
    // What the packet claims lies inside what was captured.
    if (p->payload_length > length) __builtin_trap();
    if (p->ip_version != 4 && p->ip_version != 6) __builtin_trap();
    if (p->bth.dest_qp > 0xffffff || p->bth.psn > 0xffffff) __builtin_trap();
    if (p->icrc_ok != (p->icrc_stored == p->icrc_computed)) __builtin_trap();
    summary.add(*p, length);  // a repeat, for the PSN accounting
  }
  (void)summary.facts().dump();
  return 0;
}
