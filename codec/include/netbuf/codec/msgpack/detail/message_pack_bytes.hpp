#pragma once
// Raw byte access of the MessagePack reader's and writer's inline paths: big-endian stores into
// room the writer has reserved, its type byte, the copy of short strings that also tells whether
// they were ASCII, and the reader's ASCII check of short strings. Internal.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace netbuf::detail {
// Big-endian stores into memory the caller has reserved (memcpy: no alignment requirement).
inline void store16(std::byte* p, std::uint16_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap16(v);
  std::memcpy(p, &v, 2);
}
inline void store32(std::byte* p, std::uint32_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
inline void store64(std::byte* p, std::uint64_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
constexpr std::byte wireByte(unsigned v) noexcept { return static_cast<std::byte>(v); }
/// memcpy that accepts n == 0 with a null source (string_view{} and empty spans).
inline void copyBytes(std::byte* dst, const void* src, std::size_t n) noexcept {
  if (n != 0) std::memcpy(dst, src, n);
}
/// Copies n < 32 bytes without a call into libc (overlapping fixed-size copies, each a plain load
/// and store, never touching a byte outside [src, src + n) or [dst, dst + n)) and returns whether
/// they were all ASCII (valid UTF-8 with no further check): one pass of loads for both jobs. The
/// bytes are copied either way.
inline bool copySmallAscii(std::byte* dst, const char* src, std::size_t n) noexcept {
  if (n >= 8) {
    std::uint64_t a, c, e = 0, f = 0;
    if (n >= 16) {
      std::memcpy(&e, src + 8, 8);
      std::memcpy(&f, src + n - 16, 8);
      std::memcpy(dst + 8, &e, 8);
      std::memcpy(dst + n - 16, &f, 8);
    }
    std::memcpy(&a, src, 8);
    std::memcpy(&c, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &c, 8);
    return ((a | c | e | f) & 0x8080808080808080ULL) == 0;
  }
  if (n >= 4) {
    std::uint32_t a, c;
    std::memcpy(&a, src, 4);
    std::memcpy(&c, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &c, 4);
    return ((a | c) & 0x80808080U) == 0;
  }
  if (n == 0) return true;
  const auto x = static_cast<unsigned char>(src[0]);
  const auto y = static_cast<unsigned char>(src[n / 2]);
  const auto z = static_cast<unsigned char>(src[n - 1]);  // covers every byte of n <= 3
  dst[0] = static_cast<std::byte>(x);
  dst[n / 2] = static_cast<std::byte>(y);
  dst[n - 1] = static_cast<std::byte>(z);
  return (x | y | z) < 0x80;
}

/// True when the n <= 16 bytes at p are all ASCII (two overlapping word loads, no loop).
inline bool isShortAscii(const std::byte* p, std::size_t n) noexcept {
  if (n >= 8) {
    std::uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + n - 8, 8);
    return ((a | b) & 0x8080808080808080ULL) == 0;
  }
  if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    return ((a | b) & 0x80808080U) == 0;
  }
  unsigned acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc |= std::to_integer<unsigned>(p[i]);
  return acc < 0x80;
}
}  // namespace netbuf::detail
