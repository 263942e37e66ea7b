#pragma once
// UTF-8 validation of one 64-byte block with AVX-512 (F, BW, VL, VBMI): the Keiser-Lemire lookup
// method. Shared by the text kernels' AVX-512 tier (buffer/src/utf8_avx512.cpp) and the JSON
// parser's stage 1, which validates the whole input while it indexes it. Internal: callers carry
// NETBUF_UTF8_AVX512_TARGET (or a superset) and run it only where utf8::activeIsa() is Avx512.
//
// Use: makeValidator() once; for each block `input`, blockErrors(validator, input, prev) with
// `prev` the block before it (zeros before the first) is the mask of bytes where a sequence is
// seen to be ill-formed, and openAtEnd(validator, input) whether input ends inside a sequence. A
// block of ASCII needs neither call: it is ill-formed only when the block before it ended open.
#if defined(__x86_64__)

// GCC 12's AVX-512 headers start many intrinsics from _mm512_undefined_*(), which its own
// -Wuninitialized then reports at every inlined use (GCC bug 105593); the values are never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <array>
#include <cstdint>
#include <netbuf/buffer/detail/utf8_validate_tables.hpp>

#define NETBUF_UTF8_AVX512_TARGET                                                     \
  __attribute__((                                                                     \
      target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,avx2,bmi,bmi2,popcnt," \
             "lzcnt")))

namespace netbuf::utf8::detail::avx512 {

/// vpermt2b indices: result byte k is input[k - N] for k >= N, else prev[64 - N + k].
template <int N>
struct PrevIndex {
  alignas(64) u8 idx[64];
  constexpr PrevIndex() : idx{} {
    for (int k = 0; k < 64; ++k) idx[k] = static_cast<u8>(k >= N ? k - N : 128 - N + k);
  }
};
inline constexpr PrevIndex<1> kPrev1{};
inline constexpr PrevIndex<2> kPrev2{};
inline constexpr PrevIndex<3> kPrev3{};

/// Bytes that leave a sequence open at the block's end when they sit in its last three slots are
/// those above these limits.
struct IncompleteMax {
  alignas(64) u8 max[64];
  constexpr IncompleteMax() : max{} {
    for (u8& b : max) b = 0xFF;
    max[61] = 0xF0 - 1;
    max[62] = 0xE0 - 1;
    max[63] = 0xC0 - 1;
  }
};
inline constexpr IncompleteMax kIncompleteMax{};

struct Validator {
  __m512i t1h, t1l, t2h, nibble, third, fourth, incompleteMax, prev1, prev2, prev3;
};

NETBUF_UTF8_AVX512_TARGET inline __m512i table16(const std::array<u8, 16>& t) noexcept {
  return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.data())));
}

NETBUF_UTF8_AVX512_TARGET inline Validator makeValidator() noexcept {
  Validator v;
  v.t1h = table16(kByte1High);
  v.t1l = table16(kByte1Low);
  v.t2h = table16(kByte2High);
  v.nibble = _mm512_set1_epi8(0x0F);
  v.third = _mm512_set1_epi8(static_cast<char>(0xE0 - 0x80));
  v.fourth = _mm512_set1_epi8(static_cast<char>(0xF0 - 0x80));
  v.incompleteMax = _mm512_load_si512(kIncompleteMax.max);
  v.prev1 = _mm512_load_si512(kPrev1.idx);
  v.prev2 = _mm512_load_si512(kPrev2.idx);
  v.prev3 = _mm512_load_si512(kPrev3.idx);
  return v;
}

/// Mask of bytes of `input` flagged ill-formed given the previous 64 bytes `prev`. An error is
/// flagged at the byte where it becomes visible: a missing continuation at the position where the
/// continuation should have been.
NETBUF_UTF8_AVX512_TARGET inline std::uint64_t blockErrors(const Validator& v, __m512i input,
                                                           __m512i prev) noexcept {
  const __m512i prev1 = _mm512_permutex2var_epi8(input, v.prev1, prev);
  const __m512i b1h =
      _mm512_shuffle_epi8(v.t1h, _mm512_and_si512(_mm512_srli_epi16(prev1, 4), v.nibble));
  const __m512i b1l = _mm512_shuffle_epi8(v.t1l, _mm512_and_si512(prev1, v.nibble));
  const __m512i b2h =
      _mm512_shuffle_epi8(v.t2h, _mm512_and_si512(_mm512_srli_epi16(input, 4), v.nibble));
  const __m512i special = _mm512_ternarylogic_epi32(b1h, b1l, b2h, 0x80);  // a & b & c
  const __m512i is3 = _mm512_subs_epu8(_mm512_permutex2var_epi8(input, v.prev2, prev), v.third);
  const __m512i is4 = _mm512_subs_epu8(_mm512_permutex2var_epi8(input, v.prev3, prev), v.fourth);
  // must23: high bit set where a 3rd/4th byte is required; special has kTwoConts (0x80) exactly
  // where two continuations are adjacent, so XOR leaves 0x80 only on a mismatch.
  const __m512i must23 =
      _mm512_ternarylogic_epi32(is3, is4, _mm512_set1_epi8(static_cast<char>(0x80)),
                                0xA8);  // (a | b) & c
  return _mm512_test_epi8_mask(_mm512_xor_si512(must23, special),
                               _mm512_xor_si512(must23, special));
}

NETBUF_UTF8_AVX512_TARGET inline bool openAtEnd(const Validator& v, __m512i input) noexcept {
  return _mm512_test_epi8_mask(_mm512_subs_epu8(input, v.incompleteMax),
                               _mm512_subs_epu8(input, v.incompleteMax)) != 0;
}

}  // namespace netbuf::utf8::detail::avx512

#endif
