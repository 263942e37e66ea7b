#pragma once
// Internals shared by the JSON parser and writer (not installed): base64 (RFC 4648, standard
// alphabet, '=' padding) for the extended-type mapping, and the SSE2 string scanners.
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace netbuf::detail {

/// Bytes base64Encode writes for n input bytes.
constexpr std::size_t base64EncodedLength(std::size_t n) noexcept { return (n + 2) / 3 * 4; }

/// Writes base64Encode(src) to dst (base64EncodedLength(n) bytes); returns the end.
inline char* base64Encode(const std::byte* src, std::size_t n, char* dst) noexcept {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const std::uint32_t v = (std::to_integer<std::uint32_t>(src[i]) << 16) |
                            (std::to_integer<std::uint32_t>(src[i + 1]) << 8) |
                            std::to_integer<std::uint32_t>(src[i + 2]);
    *dst++ = kAlphabet[v >> 18];
    *dst++ = kAlphabet[(v >> 12) & 63];
    *dst++ = kAlphabet[(v >> 6) & 63];
    *dst++ = kAlphabet[v & 63];
  }
  if (n - i == 1) {
    const std::uint32_t v = std::to_integer<std::uint32_t>(src[i]) << 16;
    *dst++ = kAlphabet[v >> 18];
    *dst++ = kAlphabet[(v >> 12) & 63];
    *dst++ = '=';
    *dst++ = '=';
  } else if (n - i == 2) {
    const std::uint32_t v = (std::to_integer<std::uint32_t>(src[i]) << 16) |
                            (std::to_integer<std::uint32_t>(src[i + 1]) << 8);
    *dst++ = kAlphabet[v >> 18];
    *dst++ = kAlphabet[(v >> 12) & 63];
    *dst++ = kAlphabet[(v >> 6) & 63];
    *dst++ = '=';
  }
  return dst;
}

/// Decodes strict base64 (length a multiple of 4, padding only at the end, zero trailing bits) into
/// dst (at most n / 4 * 3 bytes). Returns the decoded length, or SIZE_MAX when malformed.
inline std::size_t base64Decode(const char* src, std::size_t n, std::byte* dst) noexcept {
  constexpr std::size_t kBad = SIZE_MAX;
  if (n % 4 != 0) return kBad;
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::size_t out = 0;
  for (std::size_t i = 0; i < n; i += 4) {
    const bool last = i + 4 == n;
    const int a = val(src[i]);
    const int b = val(src[i + 1]);
    if (a < 0 || b < 0) return kBad;
    const bool pad2 = last && src[i + 2] == '=' && src[i + 3] == '=';
    const bool pad1 = last && !pad2 && src[i + 3] == '=';
    const int c = pad2 ? 0 : val(src[i + 2]);
    const int d = pad1 || pad2 ? 0 : val(src[i + 3]);
    if (c < 0 || d < 0) return kBad;
    const std::uint32_t v = (std::uint32_t(a) << 18) | (std::uint32_t(b) << 12) |
                            (std::uint32_t(c) << 6) | std::uint32_t(d);
    dst[out++] = std::byte(v >> 16);
    if (pad2) {
      if ((v & 0xFFFF) != 0) return kBad;  // non-canonical trailing bits
      break;
    }
    dst[out++] = std::byte((v >> 8) & 0xFF);
    if (pad1) {
      if ((v & 0xFF) != 0) return kBad;
      break;
    }
    dst[out++] = std::byte(v & 0xFF);
  }
  return out;
}

/// First byte in [p, end) that is '"', '\\' or below 0x20 (end when none). ORs every byte before
/// it into `high` (bit 7 set afterwards means non-ASCII bytes were seen).
inline const char* scanStringBody(const char* p, const char* end, unsigned& high) noexcept {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i ctrlMask = _mm_set1_epi8(static_cast<char>(0xE0));
  const __m128i zero = _mm_setzero_si128();
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmpeq_epi8(_mm_and_si128(v, ctrlMask), zero));
    const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(stop));
    const unsigned h = static_cast<unsigned>(_mm_movemask_epi8(v));
    if (m != 0) {
      const int i = __builtin_ctz(m);
      if ((h & ((1U << i) - 1)) != 0) high |= 0x80;
      return p + i;
    }
    if (h != 0) high |= 0x80;
    p += 16;
  }
#endif
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20) return p;
    high |= c;
  }
  return p;
}

}  // namespace netbuf::detail
