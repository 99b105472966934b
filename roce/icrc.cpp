#include "roce/icrc.h"

#include <algorithm>
#include <array>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rxerun::roce {

namespace {

// Slicing-by-8 (Intel's, as in zlib and Linux's lib/crc32.c): table k
// holds the CRC of a byte followed by k zero bytes, so eight bytes take
// eight independent look-ups instead of a chain of eight. The ICRC was the
// largest part of `rxerun decode`'s time (bench/decode.sh); from 64 bytes
// on, x86-64 with PCLMULQDQ takes the faster path below.
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  return t;
}

constexpr auto kTables = make_tables();

// The same CRC with carry-less multiplication (Intel, "Fast CRC Computation
// for Generic Polynomials Using PCLMULQDQ Instruction", 2009): four 128-bit
// lanes folded 64 bytes at a time, then folded into one and reduced (Barrett).
// Takes and returns the state like crc32_update; `n` >= 64, a multiple of 16.
// The constants are the paper's for the bit-reflected polynomial 0xEDB88320.
#if defined(__x86_64__)
#define RXERUN_CLMUL __attribute__((target("pclmul,sse4.1")))

// x's high half times k's high, low half times k's low, plus the next 16 bytes.
RXERUN_CLMUL inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x11), _mm_clmulepi64_si128(x, k, 0x00)), next);
}

RXERUN_CLMUL inline __m128i load128(const std::uint8_t* at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
}

RXERUN_CLMUL std::uint32_t crc32_clmul(std::uint32_t state, const std::uint8_t* p, std::size_t n) {
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);

  __m128i x1 = _mm_xor_si128(load128(p), _mm_cvtsi32_si128(static_cast<int>(state)));
  __m128i x2 = load128(p + 16), x3 = load128(p + 32), x4 = load128(p + 48);
  p += 64;
  n -= 64;
  for (; n >= 64; p += 64, n -= 64) {
    x1 = fold(x1, k1k2, load128(p));
    x2 = fold(x2, k1k2, load128(p + 16));
    x3 = fold(x3, k1k2, load128(p + 32));
    x4 = fold(x4, k1k2, load128(p + 48));
  }
  x1 = fold(x1, k3k4, x2);
  x1 = fold(x1, k3k4, x3);
  x1 = fold(x1, k3k4, x4);
  for (; n >= 16; p += 16, n -= 16) x1 = fold(x1, k3k4, load128(p));

  // 128 bits to 64, then Barrett reduction to 32.
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k3k4, 0x10));
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), k5k0, 0x00), _mm_srli_si128(x1, 4));
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, low32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), poly, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(x1, t), 1));
}

const bool kHaveClmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif

}  // namespace

std::uint32_t crc32_update(std::uint32_t state, std::span<const std::uint8_t> bytes) {
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
#if defined(__x86_64__)
  if (n >= 64 && kHaveClmul) {
    const std::size_t whole = n & ~std::size_t{15};
    state = crc32_clmul(state, p, whole);
    p += whole;
    n -= whole;
  }
#endif
  const auto& t = kTables;
  for (; n >= 8; p += 8, n -= 8) {
    // Little-endian words, byte by byte: no alignment or endianness assumed.
    const std::uint32_t lo = state ^ (p[0] | p[1] << 8 | p[2] << 16 | static_cast<std::uint32_t>(p[3]) << 24);
    const std::uint32_t hi = p[4] | p[5] << 8 | p[6] << 16 | static_cast<std::uint32_t>(p[7]) << 24;
    state = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
            t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; n > 0; ++p, --n) state = t[0][(state ^ *p) & 0xff] ^ (state >> 8);
  return state;
}

std::uint32_t compute_icrc(int ip_version, std::span<const std::uint8_t> ip_header,
                           std::span<const std::uint8_t> udp_header, std::span<const std::uint8_t> transport) {
  static constexpr std::array<std::uint8_t, 8> kMaskedLrh = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  std::uint32_t crc = crc32_update(0xFFFFFFFFu, kMaskedLrh);

  // The variant fields all lie in the first 12 bytes: those are masked on a
  // copy, the rest (addresses, IPv4 options) is read where it is.
  std::array<std::uint8_t, 12> head{};
  const std::size_t head_size = std::min(head.size(), ip_header.size());
  std::copy_n(ip_header.begin(), head_size, head.begin());
  if (ip_version == 4 && ip_header.size() >= 20) {
    head[1] = 0xff;              // TOS: DSCP and ECN
    head[8] = 0xff;              // TTL
    head[10] = head[11] = 0xff;  // header checksum
  } else if (ip_version == 6 && ip_header.size() >= 40) {
    head[0] |= 0x0f;                     // traffic class, high nibble (version stays)
    head[1] = head[2] = head[3] = 0xff;  // traffic class, low nibble, and flow label
    head[7] = 0xff;                      // hop limit
  }
  crc = crc32_update(crc, std::span(head.data(), head_size));
  crc = crc32_update(crc, ip_header.subspan(head_size));

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
