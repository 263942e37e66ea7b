#pragma once
// Decimal to double for the JSON lexer (json_lex.hpp): the correctly rounded double nearest
// w x 10^q for a significand w of at most 19 digits, without a string scan or big arithmetic in
// the common cases. Private, not installed.
//
// Two exact paths, tried in order:
//   - Clinger's: w <= 2^53 and |q| <= 22, so that w and 10^|q| are both exact doubles and one
//     IEEE multiplication or division rounds once, correctly (x86-64 evaluates doubles in SSE2
//     registers, never with excess precision);
//   - Eisel-Lemire's: w, normalised, times a 128-bit approximation of 5^q (json_pow5_table.hpp),
//     whose top bits give the double's significand and exponent directly; its error analysis
//     says when the truncated product cannot decide the rounding, and then it gives up.
// Either way the result is bit for bit what strtod / std::from_chars give (exact ties between two
// doubles round to even). false means "not decided here": the number is the caller's to convert
// with std::from_chars (a product the 128 bits cannot settle, which the analysis allows only for
// q outside [-27, 55], or a result that is subnormal, zero, or beyond the double range).
#include <cstdint>
#include <cstring>

#include "json_pow5_table.hpp"

namespace netbuf::detail {

__extension__ using Uint128 = unsigned __int128;  // (__extension__: g++ and clang's, not ISO's)

inline bool decimalToDouble(std::uint64_t w, std::int64_t q, double& out) noexcept {
  static constexpr double kExactPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                           1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (w == 0) return false;
  if (w <= (std::uint64_t{1} << 53) && q >= -22 && q <= 22) {
    const auto d = static_cast<double>(w);
    out = q < 0 ? d / kExactPow10[-q] : d * kExactPow10[q];
    return true;
  }
  if (q < kPow5TableMin || q > kPow5TableMax) return false;
  const int lz = __builtin_clzll(w);
  w <<= lz;
  const auto index = static_cast<std::size_t>(2 * (q - kPow5TableMin));
  const Uint128 first = static_cast<Uint128>(w) * kPow5Table[index];
  auto hi = static_cast<std::uint64_t>(first >> 64);
  auto lo = static_cast<std::uint64_t>(first);
  // The 9 bits below the 55 that matter (53 of significand, one to round, one for the product's
  // top bit) all ones: the truncation may have hidden a carry; the table's low word settles it.
  if ((hi & 0x1FF) == 0x1FF) {
    const Uint128 second = static_cast<Uint128>(w) * kPow5Table[index + 1];
    const auto secondHi = static_cast<std::uint64_t>(second >> 64);
    lo += secondHi;
    if (secondHi > lo) ++hi;
  }
  // Still undecided outside the exponents where the table is exact enough: give up.
  if (lo == ~std::uint64_t{0} && (q < -27 || q > 55)) return false;
  const std::uint64_t upper = hi >> 63;
  std::uint64_t mantissa = hi >> (upper + 9);
  // floor(q * log2(10)) is (q * 217706) >> 16 over the table's range.
  std::int64_t power2 = ((q * 217706) >> 16) + 63 + static_cast<std::int64_t>(upper) - lz + 1023;
  if (power2 <= 0) return false;  // subnormal or zero
  // Exactly halfway between two doubles (possible only where 5^q is exact in 64 bits): round to
  // even instead of up.
  if (lo <= 1 && q >= -4 && q <= 23 && (mantissa & 3) == 1 && (mantissa << (upper + 9)) == hi) {
    mantissa &= ~std::uint64_t{1};
  }
  mantissa += mantissa & 1;
  mantissa >>= 1;
  if (mantissa >= (std::uint64_t{2} << 52)) {
    mantissa = std::uint64_t{1} << 52;
    ++power2;
  }
  mantissa &= ~(std::uint64_t{1} << 52);
  if (power2 >= 0x7FF) return false;  // beyond the double range
  const std::uint64_t bits = mantissa | static_cast<std::uint64_t>(power2) << 52;
  std::memcpy(&out, &bits, sizeof out);
  return true;
}

}  // namespace netbuf::detail
