#include "roce/icrc.h"

#include <algorithm>
#include <array>
#include <vector>

namespace rxerun::roce {

namespace {

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr auto kTable = make_table();

}  // namespace

std::uint32_t crc32_update(std::uint32_t state, std::span<const std::uint8_t> bytes) {
  for (const std::uint8_t b : bytes) state = kTable[(state ^ b) & 0xff] ^ (state >> 8);
  return state;
}

std::uint32_t compute_icrc(int ip_version, std::span<const std::uint8_t> ip_header,
                           std::span<const std::uint8_t> udp_header, std::span<const std::uint8_t> transport) {
  static constexpr std::array<std::uint8_t, 8> kMaskedLrh = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  std::uint32_t crc = crc32_update(0xFFFFFFFFu, kMaskedLrh);

  std::vector<std::uint8_t> ip(ip_header.begin(), ip_header.end());
  if (ip_version == 4 && ip.size() >= 20) {
    ip[1] = 0xff;            // TOS: DSCP and ECN
    ip[8] = 0xff;            // TTL
    ip[10] = ip[11] = 0xff;  // header checksum
  } else if (ip_version == 6 && ip.size() >= 40) {
    ip[0] |= 0x0f;                 // traffic class, high nibble (version stays)
    ip[1] = ip[2] = ip[3] = 0xff;  // traffic class, low nibble, and flow label
    ip[7] = 0xff;                  // hop limit
  }
  crc = crc32_update(crc, ip);

  std::array<std::uint8_t, 8> udp{};
  for (std::size_t i = 0; i < udp.size() && i < udp_header.size(); ++i) udp[i] = udp_header[i];
  udp[6] = udp[7] = 0xff;  // checksum
  crc = crc32_update(crc, std::span(udp.data(), std::min(udp.size(), udp_header.size())));

  if (transport.size() < 5) return ~crc32_update(crc, transport);
  std::array<std::uint8_t, 5> bth_head{};
  for (std::size_t i = 0; i < bth_head.size(); ++i) bth_head[i] = transport[i];
  bth_head[4] = 0xff;  // FECN, BECN, resv6a
  crc = crc32_update(crc, bth_head);
  return ~crc32_update(crc, transport.subspan(5));
}

}  // namespace rxerun::roce
