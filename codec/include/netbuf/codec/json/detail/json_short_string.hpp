#pragma once
// The short-string fast path shared by JsonWriter, JsonStreamWriter and Document's plain-ASCII
// hint: the table of bytes JSON copies as they are, and the word-at-a-time check and copy of
// strings under 16 bytes. Internal.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <netbuf/codec/json/detail/json_inline.hpp>
#include <string_view>

namespace netbuf::detail {

// Short-string helpers shared by the writer and JsonStreamWriter's inline fast paths.

/// kPlainByte[c]: byte c is copied as is in every mode (ASCII, not '"', '\\' or a control).
struct PlainByteTable {
  bool v[256];
  constexpr PlainByteTable() : v() {
    for (int c = 0x20; c < 0x80; ++c) v[c] = c != '"' && c != '\\';
  }
};
inline constexpr PlainByteTable kPlainByte{};

/// The first at most n bytes of s, cut at a UTF-8 character boundary (for quoting text in
/// messages without leaving half a character).
inline std::string_view utf8Prefix(std::string_view s, std::size_t n) noexcept {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

// SWAR over a word U (4 or 8 bytes): nonzero when a byte of x needs more than a copy ('"', '\\',
// < 0x20 or >= 0x80). Exact as a boolean (the borrow false positives only occur above a byte that
// is itself flagged).
template <class U>
NETBUF_JSON_INLINE U specialBytes(U x) noexcept {
  constexpr U ones = static_cast<U>(~U{0}) / 0xFF;  // 0x01 in every byte
  const U q = x ^ (ones * '"');
  const U b = x ^ (ones * '\\');
  return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) | x) & (ones * 0x80);
}

/// Whether every byte of [p, p + n) is in 0x20..0x7F and none is '"' or '\\' (the condition of
/// Value::isPlainAscii()): the JSON writer's own byte tests, eight bytes at a time.
inline bool plainAsciiText(const char* p, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x;
    std::memcpy(&x, p + i, 8);
    if (specialBytes(x) != 0) return false;
  }
  for (; i < n; ++i) {
    if (!kPlainByte.v[static_cast<unsigned char>(p[i])]) return false;
  }
  return true;
}

/// copyPlainShort for sizeof(U) <= n <= 2 * sizeof(U): two overlapping word loads and stores.
template <class U>
NETBUF_JSON_INLINE bool copyTwoWords(const char* r, std::size_t n, char* w) noexcept {
  U a, b;
  std::memcpy(&a, r, sizeof(U));
  std::memcpy(&b, r + n - sizeof(U), sizeof(U));
  if ((specialBytes(a) | specialBytes(b)) != 0) return false;
  std::memcpy(w, &a, sizeof(U));
  std::memcpy(w + n - sizeof(U), &b, sizeof(U));
  return true;
}

/// Copies [r, r + n), n < 16, to w when no byte needs escaping (overlapping word loads); returns
/// false (nothing meaningful written) otherwise.
NETBUF_JSON_INLINE bool copyPlainShort(const char* r, std::size_t n, char* w) noexcept {
  if (n >= 8) return copyTwoWords<std::uint64_t>(r, n, w);
  if (n >= 4) return copyTwoWords<std::uint32_t>(r, n, w);
  if (n == 0) return true;
  const char c0 = r[0];
  const char c1 = r[n >> 1];
  const char c2 = r[n - 1];
  if (!(kPlainByte.v[static_cast<unsigned char>(c0)] &
        kPlainByte.v[static_cast<unsigned char>(c1)] &
        kPlainByte.v[static_cast<unsigned char>(c2)]))
    return false;
  w[0] = c0;
  w[n >> 1] = c1;
  w[n - 1] = c2;
  return true;
}

/// The short-string fast path of every writer: at w, sep (none when 0), the quoted s and, for a
/// key, ':', when s is under 16 bytes that need no escaping. Returns the bytes written, or 0 when
/// s needs the general path (nothing meaningful written then). w has room for s.size() + 4 bytes
/// (with the default copy; json_writer.cpp's 16-byte copy needs 20).
template <bool (*Copy)(const char*, std::size_t, char*) noexcept = copyPlainShort>
NETBUF_JSON_INLINE std::size_t writeShortString(char* w, char sep, std::string_view s,
                                                bool isKey) noexcept {
  const std::size_t n = s.size();
  const std::size_t k = sep != 0 ? 1 : 0;
  if (n >= 16 || !Copy(s.data(), n, w + k + 1)) return 0;
  w[0] = sep;  // overwritten by the quote when there is no separator
  w[k] = '"';
  w[k + n + 1] = '"';
  w[k + n + 2] = ':';  // inside the room; past the end (overwritten later) unless a key
  return k + n + 2 + (isKey ? 1 : 0);
}

}  // namespace netbuf::detail
