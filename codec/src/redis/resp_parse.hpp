#pragma once
// Byte-level helpers shared by the RESP decoders (internal to codec/src/redis/).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace netbuf::detail::resp {

/// Redis's string2ll (util.c): the whole of [s, s + len) must be a decimal integer that fits a
/// long long: an optional '-', then "0" alone or a digit 1-9 followed by digits; no '+', no
/// leading zeros, no "-0", no spaces, fewer than 21 characters. Returns false otherwise.
inline bool parseLongLong(const char* s, std::size_t len, std::int64_t& out) noexcept {
  if (len == 0 || len >= 21) return false;
  if (len == 1 && s[0] == '0') {
    out = 0;
    return true;
  }
  std::size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == len) return false;
  if (s[i] < '1' || s[i] > '9') return false;
  std::uint64_t v = static_cast<std::uint64_t>(s[i++] - '0');
  for (; i < len; ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - static_cast<unsigned>('0');
    if (d > 9) return false;
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (negative) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) return false;
    out = static_cast<std::int64_t>(0 - v);
  } else {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    out = static_cast<std::int64_t>(v);
  }
  return true;
}

/// The fast path of a length line "<digits>\r": reads at most 18 digits from p (below n bytes)
/// when they are "0" or start with 1-9 and are followed by '\r' and one more byte. Returns the
/// index of that '\r', or 0 when the line is not of that form (the caller then takes the slow
/// path, which decides what it is). The value never overflows (18 digits).
inline std::size_t fastLength(const char* p, std::size_t n, std::uint64_t& value) noexcept {
  std::size_t i = 0;
  std::uint64_t v = 0;
  const std::size_t end = n < 19 ? n : 19;
  for (; i < end; ++i) {
    const unsigned d = static_cast<unsigned char>(p[i]) - static_cast<unsigned>('0');
    if (d > 9) break;
    v = v * 10 + d;
  }
  if (i == 0 || i >= 19 || i + 1 >= n || p[i] != '\r') return 0;
  if (p[0] == '0' && i != 1) return 0;  // leading zero: the slow path rejects it
  value = v;
  return i;
}

inline const char* findByte(const char* p, std::size_t n, char c) noexcept {
  return n == 0 ? nullptr : static_cast<const char*>(std::memchr(p, c, n));
}

}  // namespace netbuf::detail::resp
