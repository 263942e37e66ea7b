// The AVX2 tier, selected at run time when CPUID reports AVX2. The library is built without
// -mavx2: every function here carries a target attribute, and only the dispatch table (reached
// after the CPU check) points at them.
//
// Techniques (facts from the literature, implemented here from scratch):
//  * UTF-16 -> UTF-8 without surrogates: each unit is widened to a 32-bit lane holding the three
//    candidate bytes [E0|u>>12, C0-or-80|(u>>6)&3F, u-or-80|u&3F]; a 1-, 2- or 3-byte unit is the
//    last 1, 2 or 3 of them. A 256-entry pshufb table indexed by the per-unit "needs >= 2 bytes"
//    and "needs 3 bytes" bits of four lanes compacts each 128-bit lane, which is then stored
//    unaligned. For UTF-16 input the lanes are built from 16-bit lanes [lead, middle] and [last]
//    by one unpack each (emit16), without widening the units first.
//  * UTF-8 -> UTF-16: each byte position that ends a 1-3 byte code point gets its unit in parallel
//    (from the byte and the two before it), then the units at those positions are compacted with
//    a pshufb table indexed by 8 bits of the end-of-code-point mask (see decodeBlock).
//  * UTF-8 validation: the Keiser-Lemire lookup method. Three 16-entry nibble tables classify every
//    (previous byte, current byte) pair into error classes; a required 3rd/4th continuation byte is
//    checked with saturating subtractions. A pure-ASCII block needs only the "previous block ended
//    inside a sequence" check.

#if defined(__x86_64__)

#include <immintrin.h>

#include <array>
#include <netbuf/buffer/detail/utf8_validate_tables.hpp>

#include "utf8_internal.hpp"

#define NETBUF_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt")))

namespace netbuf::utf8::detail {
namespace {

// ---- pshufb compaction table for 4 units per 128-bit lane.
struct CompactTable {
  alignas(16) u8 shuffle[256][16];
  u8 length[256];
};

constexpr CompactTable makeCompactTable() {
  CompactTable t{};
  for (unsigned idx = 0; idx < 256; ++idx) {
    const unsigned ge80 = idx & 0xF;
    const unsigned ge800 = idx >> 4;
    unsigned out = 0;
    for (unsigned unit = 0; unit < 4; ++unit) {
      const unsigned len = 1 + ((ge80 >> unit) & 1) + ((ge800 >> unit) & 1);
      for (unsigned b = 3 - len; b < 3; ++b) t.shuffle[idx][out++] = static_cast<u8>(4 * unit + b);
    }
    t.length[idx] = static_cast<u8>(out);
    for (; out < 16; ++out) t.shuffle[idx][out] = 0x80;  // pshufb writes zero
  }
  return t;
}
constexpr CompactTable kCompact = makeCompactTable();

NETBUF_AVX2 inline __m256i load(const void* p) noexcept {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
NETBUF_AVX2 inline void store(void* p, __m256i v) noexcept {
  _mm256_storeu_si256(static_cast<__m256i*>(p), v);
}
NETBUF_AVX2 inline __m128i load128(const void* p) noexcept {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}
NETBUF_AVX2 inline void store128(void* p, __m128i v) noexcept {
  _mm_storeu_si128(static_cast<__m128i*>(p), v);
}
NETBUF_AVX2 inline unsigned popcount(unsigned v) noexcept {
  return static_cast<unsigned>(__builtin_popcount(v));
}

/// Encodes 8 BMP non-surrogate values held in 32-bit lanes; writes up to 28 bytes past d
/// (the second 16-byte store starts at most 12 bytes in), returns the new end.
NETBUF_AVX2 inline u8* emit8(__m256i w, u8* d) noexcept {
  const __m256i ge80 = _mm256_cmpgt_epi32(w, _mm256_set1_epi32(0x7F));
  const __m256i ge800 = _mm256_cmpgt_epi32(w, _mm256_set1_epi32(0x7FF));
  const __m256i low6 = _mm256_set1_epi32(0x3F);
  const __m256i b0 = _mm256_or_si256(_mm256_srli_epi32(w, 12), _mm256_set1_epi32(0xE0));
  const __m256i b1 = _mm256_or_si256(
      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(w, 6), low6), _mm256_set1_epi32(0x80)),
      _mm256_andnot_si256(ge800, _mm256_set1_epi32(0x40)));
  const __m256i b2 = _mm256_blendv_epi8(
      w, _mm256_or_si256(_mm256_and_si256(w, low6), _mm256_set1_epi32(0x80)), ge80);
  const __m256i bytes =
      _mm256_or_si256(_mm256_and_si256(b0, _mm256_set1_epi32(0xFF)),
                      _mm256_or_si256(_mm256_slli_epi32(b1, 8), _mm256_slli_epi32(b2, 16)));
  const unsigned m80 = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(ge80)));
  const unsigned m800 = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(ge800)));
  const unsigned idx0 = (m80 & 0xF) | ((m800 & 0xF) << 4);
  const unsigned idx1 = (m80 >> 4) | ((m800 >> 4) << 4);
  const __m256i shuf = _mm256_inserti128_si256(
      _mm256_castsi128_si256(load128(kCompact.shuffle[idx0])), load128(kCompact.shuffle[idx1]), 1);
  const __m256i packed = _mm256_shuffle_epi8(bytes, shuf);
  store128(d, _mm256_castsi256_si128(packed));
  d += kCompact.length[idx0];
  store128(d, _mm256_extracti128_si256(packed, 1));
  return d + kCompact.length[idx1];
}

/// Encodes 16 BMP non-surrogate units without widening them first: 16-bit lanes A = [lead,
/// middle] and B = [last, 0] are interleaved into 32-bit lanes [lead, middle, last, 0] (the layout
/// emit8 builds), four units per 128-bit lane, then compacted with the same table. Writes up to 52
/// bytes past d (48 of output, the last 16-byte store starts at most 36 in); returns the new end.
NETBUF_AVX2 inline u8* emit16(__m256i v, u8* d) noexcept {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i below80 = _mm256_cmpeq_epi16(_mm256_and_si256(v, _mm256_set1_epi16(-128)), zero);
  const __m256i below800 = _mm256_cmpeq_epi16(_mm256_and_si256(v, _mm256_set1_epi16(-2048)), zero);
  const __m256i low6 = _mm256_set1_epi16(0x3F);
  const __m256i last = _mm256_blendv_epi8(
      _mm256_or_si256(_mm256_and_si256(v, low6), _mm256_set1_epi16(0x80)), v, below80);
  const __m256i middle =
      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 6), low6),
                      _mm256_or_si256(_mm256_set1_epi16(0x80),
                                      _mm256_and_si256(below800, _mm256_set1_epi16(0x40))));
  const __m256i lead = _mm256_or_si256(_mm256_srli_epi16(v, 12), _mm256_set1_epi16(0xE0));
  const __m256i a = _mm256_or_si256(lead, _mm256_slli_epi16(middle, 8));
  const __m256i lo = _mm256_unpacklo_epi16(a, last);  // units 0-3 | 8-11
  const __m256i hi = _mm256_unpackhi_epi16(a, last);  // units 4-7 | 12-15
  // packs gives, per 128-bit lane, dwords [<0x80 of units 0-3, 4-7; <0x800 of units 0-3, 4-7];
  // reordered to 0, 2, 1, 3, byte g of the mask is the table index of units 4g..4g+3.
  const unsigned m = ~static_cast<unsigned>(
      _mm256_movemask_epi8(_mm256_shuffle_epi32(_mm256_packs_epi16(below80, below800), 0xD8)));
  const unsigned idx0 = m & 0xFF;
  const unsigned idx1 = (m >> 8) & 0xFF;
  const unsigned idx2 = (m >> 16) & 0xFF;
  const unsigned idx3 = m >> 24;
  const __m256i shufLo = _mm256_inserti128_si256(
      _mm256_castsi128_si256(load128(kCompact.shuffle[idx0])), load128(kCompact.shuffle[idx2]), 1);
  const __m256i shufHi = _mm256_inserti128_si256(
      _mm256_castsi128_si256(load128(kCompact.shuffle[idx1])), load128(kCompact.shuffle[idx3]), 1);
  const __m256i outLo = _mm256_shuffle_epi8(lo, shufLo);
  const __m256i outHi = _mm256_shuffle_epi8(hi, shufHi);
  store128(d, _mm256_castsi256_si128(outLo));
  d += kCompact.length[idx0];
  store128(d, _mm256_castsi256_si128(outHi));
  d += kCompact.length[idx1];
  store128(d, _mm256_extracti128_si256(outLo, 1));
  d += kCompact.length[idx2];
  store128(d, _mm256_extracti128_si256(outHi, 1));
  return d + kCompact.length[idx3];
}

NETBUF_AVX2 inline bool allBelow(__m256i v, short mask16) noexcept {
  return _mm256_testz_si256(v, _mm256_set1_epi16(mask16)) != 0;
}

NETBUF_AVX2 inline __m256i packUnits(__m256i a, __m256i b) noexcept {
  // packus works within 128-bit lanes; reorder the quadwords back into source order.
  return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
}

NETBUF_AVX2 std::size_t encodeUtf8U16(const char16_t* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  u8* const dstEnd = dst + 3 * n;
  while (i + 16 <= n) {
    const __m256i v = load(s + i);
    if (allBelow(v, -128)) {
      if (i + 32 <= n) {
        const __m256i v2 = load(s + i + 16);
        if (allBelow(v2, -128)) {
          store(d, packUnits(v, v2));
          d += 32;
          i += 32;
          continue;
        }
      }
      store128(d, _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
      d += 16;
      i += 16;
      continue;
    }
    const __m256i surrogate = _mm256_cmpeq_epi16(_mm256_and_si256(v, _mm256_set1_epi16(-2048)),
                                                 _mm256_set1_epi16(-10240 /* 0xD800 */));
    // 16 units write at most 48 bytes, the last store may reach 16 past its start: keep 52 spare.
    if (_mm256_testz_si256(surrogate, surrogate) && dstEnd - d >= 52) {
      d = emit16(v, d);
      i += 16;
    } else {
      // Scalar up to just past the first surrogate (a pair, or an unpaired one and the unit after
      // it), then back to 16-unit vector steps from there. Copies, so that i and d never have
      // their address taken and stay in registers.
      const unsigned sur = static_cast<unsigned>(_mm256_movemask_epi8(surrogate));
      std::size_t stop = i + 16;
      if (sur != 0) {
        const std::size_t past = i + static_cast<unsigned>(__builtin_ctz(sur)) / 2 + 2;
        stop = past < n ? past : n;
      }
      std::size_t j = i;
      u8* e = d;
      encodeU16Step(s, j, stop, n, e);
      i = j;
      d = e;
    }
  }
  encodeU16Step(s, i, n, n, d);
  return static_cast<std::size_t>(d - dst);
}

NETBUF_AVX2 std::size_t utf8BytesU16(const char16_t* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::size_t total = 0;
  while (i + 16 <= n) {
    const __m256i v = load(s + i);
    const __m256i zero = _mm256_setzero_si256();
    const __m256i hi5 = _mm256_and_si256(v, _mm256_set1_epi16(-2048));
    if (!_mm256_testz_si256(_mm256_cmpeq_epi16(hi5, _mm256_set1_epi16(-10240)),
                            _mm256_set1_epi16(-1))) {
      total += countU16Step(s, i, i + 16, n);
      continue;
    }
    // Two mask bits per unit: count set bits / 2 = units below the threshold.
    const unsigned below80 = static_cast<unsigned>(_mm256_movemask_epi8(
        _mm256_cmpeq_epi16(_mm256_and_si256(v, _mm256_set1_epi16(-128)), zero)));
    const unsigned below800 =
        static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi16(hi5, zero)));
    total += 16 + (32 - popcount(below80)) / 2 + (32 - popcount(below800)) / 2;
    i += 16;
  }
  return total + countU16Step(s, i, n, n);
}

NETBUF_AVX2 inline std::size_t sum32(__m256i v) noexcept {
  __m128i x = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4E));
  x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0xB1));
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(x));
}

/// Lanes holding a surrogate or a value above U+10FFFF (both written as '?').
NETBUF_AVX2 inline __m256i invalidU32(__m256i v) noexcept {
  const __m256i tooLarge = _mm256_cmpeq_epi32(_mm256_max_epu32(v, _mm256_set1_epi32(0x110000)), v);
  const __m256i surrogate =
      _mm256_cmpeq_epi32(_mm256_and_si256(v, _mm256_set1_epi32(-2048)), _mm256_set1_epi32(0xD800));
  return _mm256_or_si256(tooLarge, surrogate);
}

NETBUF_AVX2 std::size_t utf8BytesU32(const char32_t* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::size_t total = 0;
  while (i + 8 <= n) {
    // 32-bit lane sums grow by at most 4 per step; flush well before overflow.
    __m256i acc = _mm256_setzero_si256();
    for (unsigned rounds = 0; rounds < (1u << 24) && i + 8 <= n; ++rounds, i += 8) {
      const __m256i v = load(s + i);
      // 1 - (>=0x80) - (>=0x800) - (>=0x10000); invalid lanes forced to 1. Values with the top bit
      // set compare negative, but they are invalid anyway.
      __m256i len = _mm256_set1_epi32(1);
      len = _mm256_sub_epi32(len, _mm256_cmpgt_epi32(v, _mm256_set1_epi32(0x7F)));
      len = _mm256_sub_epi32(len, _mm256_cmpgt_epi32(v, _mm256_set1_epi32(0x7FF)));
      len = _mm256_sub_epi32(len, _mm256_cmpgt_epi32(v, _mm256_set1_epi32(0xFFFF)));
      len = _mm256_blendv_epi8(len, _mm256_set1_epi32(1), invalidU32(v));
      acc = _mm256_add_epi32(acc, len);
    }
    total += sum32(acc);
  }
  for (; i < n; ++i) total += countU32One(s[i]);
  return total;
}

NETBUF_AVX2 std::size_t encodeUtf8U32(const char32_t* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  u8* const dstEnd = dst + 4 * n;
  for (; i + 8 <= n; i += 8) {
    const __m256i v = load(s + i);
    if (_mm256_testz_si256(v, _mm256_set1_epi32(-128))) {
      // Gather the low byte of each lane: in-lane shuffle, then the two 4-byte groups together.
      const __m256i lowBytes = _mm256_shuffle_epi8(
          v, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                              12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
      const __m256i joined =
          _mm256_permutevar8x32_epi32(lowBytes, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d), _mm256_castsi256_si128(joined));
      d += 8;
      continue;
    }
    const __m256i bmpValid =
        _mm256_or_si256(_mm256_cmpgt_epi32(v, _mm256_set1_epi32(0xFFFF)), invalidU32(v));
    if (_mm256_testz_si256(bmpValid, bmpValid) && dstEnd - d >= 28) {
      d = emit8(v, d);
    } else {
      for (std::size_t j = i; j < i + 8; ++j) d = encodeU32One(s[j], d);
    }
  }
  for (; i < n; ++i) d = encodeU32One(s[i], d);
  return static_cast<std::size_t>(d - dst);
}

// ---- Keiser-Lemire validation (tables: netbuf/buffer/detail/utf8_validate_tables.hpp).
NETBUF_AVX2 inline __m256i table16(const std::array<u8, 16>& t) noexcept {
  const __m128i x = load128(t.data());
  return _mm256_broadcastsi128_si256(x);
}

/// `input` shifted right by N bytes across the block boundary, filled from the previous block.
template <int N>
NETBUF_AVX2 inline __m256i prevBytes(__m256i input, __m256i prev) noexcept {
  return _mm256_alignr_epi8(input, _mm256_permute2x128_si256(prev, input, 0x21), 16 - N);
}

struct Validator {
  __m256i t1h, t1l, t2h, nibble, third, fourth, incompleteMax;
};

NETBUF_AVX2 inline Validator makeValidator() noexcept {
  Validator v;
  v.t1h = table16(kByte1High);
  v.t1l = table16(kByte1Low);
  v.t2h = table16(kByte2High);
  v.nibble = _mm256_set1_epi8(0x0F);
  v.third = _mm256_set1_epi8(static_cast<char>(0xE0 - 0x80));
  v.fourth = _mm256_set1_epi8(static_cast<char>(0xF0 - 0x80));
  // Bytes that leave a sequence open at the block's end when they sit in its last three slots.
  v.incompleteMax =
      _mm256_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, static_cast<char>(0xF0 - 1),
                       static_cast<char>(0xE0 - 1), static_cast<char>(0xC0 - 1));
  return v;
}

/// Non-zero lanes mark ill-formed bytes of `input` given the previous 32 bytes.
NETBUF_AVX2 inline __m256i blockErrors(const Validator& v, __m256i input, __m256i prev) noexcept {
  const __m256i prev1 = prevBytes<1>(input, prev);
  const __m256i b1h =
      _mm256_shuffle_epi8(v.t1h, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), v.nibble));
  const __m256i b1l = _mm256_shuffle_epi8(v.t1l, _mm256_and_si256(prev1, v.nibble));
  const __m256i b2h =
      _mm256_shuffle_epi8(v.t2h, _mm256_and_si256(_mm256_srli_epi16(input, 4), v.nibble));
  const __m256i special = _mm256_and_si256(_mm256_and_si256(b1h, b1l), b2h);
  const __m256i is3 = _mm256_subs_epu8(prevBytes<2>(input, prev), v.third);
  const __m256i is4 = _mm256_subs_epu8(prevBytes<3>(input, prev), v.fourth);
  const __m256i must23 =
      _mm256_and_si256(_mm256_or_si256(is3, is4), _mm256_set1_epi8(static_cast<char>(0x80)));
  return _mm256_xor_si256(must23, special);
}

NETBUF_AVX2 inline bool any(__m256i v) noexcept { return !_mm256_testz_si256(v, v); }
NETBUF_AVX2 inline bool asciiBlock(__m256i v) noexcept { return _mm256_movemask_epi8(v) == 0; }

/// Shared driver of the validating kernels. `Policy` sees each well-formed block
/// (`block(i, input)`), is told to roll back the bytes [b, i) of an open sequence it already
/// accepted (`rewind(b, i)`), and runs the scalar step over ill-formed regions and the tail
/// (`scalar(i, stop)`, which returns false to stop early, e.g. once an error was found).
template <class Policy>
NETBUF_AVX2 inline void validateDriver(const u8* s, std::size_t n, Policy& policy) noexcept {
  const Validator v = makeValidator();
  std::size_t i = 0;
  std::size_t floor = 0;
  __m256i prev = _mm256_setzero_si256();
  __m256i prevIncomplete = _mm256_setzero_si256();
  while (i + 32 <= n) {
    const __m256i input = load(s + i);
    bool ok;
    if (asciiBlock(input)) {
      ok = !any(prevIncomplete);
      prevIncomplete = _mm256_setzero_si256();
    } else {
      ok = !any(blockErrors(v, input, prev));
      prevIncomplete = _mm256_subs_epu8(input, v.incompleteMax);
    }
    if (ok) {
      policy.block(i, input);
      prev = input;
      i += 32;
      continue;
    }
    // Something in this block (or a sequence left open by the previous one) is ill-formed: let
    // the scalar decoder redo it from the last code point boundary, then resume on a boundary.
    const std::size_t b = backToBoundary(s, i, floor);
    policy.rewind(b, i);
    std::size_t j = b;
    if (!policy.scalar(j, i + 32)) return;
    i = floor = j;
    prev = _mm256_setzero_si256();
    prevIncomplete = _mm256_setzero_si256();
  }
  const std::size_t b = backToBoundary(s, i, floor);
  policy.rewind(b, i);
  std::size_t j = b;
  policy.scalar(j, n);
}

struct CopyPolicy {
  const u8* s;
  std::size_t n;
  u8* d;
  NETBUF_AVX2 void block(std::size_t, __m256i input) noexcept {
    store(d, input);
    d += 32;
  }
  void rewind(std::size_t b, std::size_t i) noexcept { d -= i - b; }
  bool scalar(std::size_t& i, std::size_t stop) noexcept {
    copyReplacingStep(s, i, stop, n, d);
    return true;
  }
};

NETBUF_AVX2 std::size_t copyReplacing(const u8* s, std::size_t n, u8* dst) noexcept {
  CopyPolicy p{s, n, dst};
  validateDriver(s, n, p);
  return static_cast<std::size_t>(p.d - dst);
}

struct CountReplacingPolicy {
  const u8* s;
  std::size_t n;
  std::size_t total = 0;
  NETBUF_AVX2 void block(std::size_t, __m256i) noexcept { total += 32; }
  void rewind(std::size_t b, std::size_t i) noexcept { total -= i - b; }
  bool scalar(std::size_t& i, std::size_t stop) noexcept {
    total += countReplacingStep(s, i, stop, n);
    return true;
  }
};

NETBUF_AVX2 std::size_t replacingBytes(const u8* s, std::size_t n) noexcept {
  CountReplacingPolicy p{s, n};
  validateDriver(s, n, p);
  return p.total;
}

struct FirstInvalidPolicy {
  const u8* s;
  std::size_t n;
  std::size_t result = static_cast<std::size_t>(-1);
  NETBUF_AVX2 void block(std::size_t, __m256i) noexcept {}
  void rewind(std::size_t, std::size_t) noexcept {}
  bool scalar(std::size_t& i, std::size_t stop) noexcept {
    result = firstInvalidStep(s, i, stop, n);
    return result == static_cast<std::size_t>(-1);
  }
};

NETBUF_AVX2 std::size_t firstInvalid(const u8* s, std::size_t n) noexcept {
  FirstInvalidPolicy p{s, n};
  validateDriver(s, n, p);
  return p.result;
}

struct Utf16LengthPolicy {
  const u8* s;
  std::size_t n;
  std::size_t total = 0;
  // Well-formed block: one unit per non-continuation byte, one more per 4-byte lead.
  NETBUF_AVX2 void block(std::size_t, __m256i input) noexcept {
    const unsigned cont = static_cast<unsigned>(_mm256_movemask_epi8(
        _mm256_cmpgt_epi8(_mm256_set1_epi8(-64), input)));  // 0x80..0xBF are < -64 signed
    const unsigned below4 = static_cast<unsigned>(_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_subs_epu8(input, _mm256_set1_epi8(static_cast<char>(0xEF))),
                          _mm256_setzero_si256())));
    total += 32 - popcount(cont) + (32 - popcount(below4));
  }
  void rewind(std::size_t b, std::size_t i) noexcept {
    // [b, i) is one open sequence: its lead counted 1 (2 for F0..F4), its continuations 0.
    if (b < i) total -= s[b] >= 0xF0 ? 2 : 1;
  }
  bool scalar(std::size_t& i, std::size_t stop) noexcept {
    total += countUtf16Step(s, i, stop, n);
    return true;
  }
};

NETBUF_AVX2 std::size_t utf16Length(const u8* s, std::size_t n) noexcept {
  Utf16LengthPolicy p{s, n};
  validateDriver(s, n, p);
  return p.total;
}

// ---- ASCII-run kernels.

NETBUF_AVX2 bool isAsciiAvx2(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  __m256i acc = _mm256_setzero_si256();
  for (; i + 128 <= n; i += 128) {
    acc =
        _mm256_or_si256(acc, _mm256_or_si256(_mm256_or_si256(load(s + i), load(s + i + 32)),
                                             _mm256_or_si256(load(s + i + 64), load(s + i + 96))));
    if (!asciiBlock(acc)) return false;
  }
  for (; i + 32 <= n; i += 32) acc = _mm256_or_si256(acc, load(s + i));
  if (!asciiBlock(acc)) return false;
  std::uint64_t tail = 0;
  for (; i + 8 <= n; i += 8) tail |= load64(s + i);
  for (; i < n; ++i) tail |= s[i];
  return (tail & kHighBits) == 0;
}

/// Units with any bit of highMask set become '?'.
NETBUF_AVX2 inline __m256i clampUnits(__m256i v, short highMask) noexcept {
  const __m256i bad =
      _mm256_cmpeq_epi16(_mm256_and_si256(v, _mm256_set1_epi16(highMask)), _mm256_setzero_si256());
  return _mm256_blendv_epi8(_mm256_set1_epi16('?'), v, bad);
}
NETBUF_AVX2 inline __m128i clampUnits128(__m128i v, short highMask) noexcept {
  const __m128i ok =
      _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(highMask)), _mm_setzero_si128());
  return _mm_blendv_epi8(_mm_set1_epi16('?'), v, ok);
}

NETBUF_AVX2 inline void narrowU16(const char16_t* s, std::size_t n, u8* d, short highMask,
                                  char16_t limit) noexcept {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    store(d + i,
          packUnits(clampUnits(load(s + i), highMask), clampUnits(load(s + i + 16), highMask)));
  }
  if (i + 16 <= n) {
    store128(d + i, _mm_packus_epi16(clampUnits128(load128(s + i), highMask),
                                     clampUnits128(load128(s + i + 8), highMask)));
    i += 16;
  }
  for (; i < n; ++i) d[i] = s[i] <= limit ? static_cast<u8>(s[i]) : u8{'?'};
}

NETBUF_AVX2 void encodeAsciiU16(const char16_t* s, std::size_t n, u8* d) noexcept {
  narrowU16(s, n, d, -128, 0x7F);
}
NETBUF_AVX2 void encodeLatin1(const char16_t* s, std::size_t n, u8* d) noexcept {
  narrowU16(s, n, d, -256, 0xFF);
}

NETBUF_AVX2 void encodeAscii8(const u8* s, std::size_t n, u8* d) noexcept {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = load(s + i);
    store(d + i, _mm256_blendv_epi8(v, _mm256_set1_epi8('?'), v));  // top bit selects '?'
  }
  if (i + 16 <= n) {
    const __m128i v = load128(s + i);
    store128(d + i, _mm_blendv_epi8(v, _mm_set1_epi8('?'), v));
    i += 16;
  }
  for (; i < n; ++i) d[i] = s[i] < 0x80 ? s[i] : u8{'?'};
}

NETBUF_AVX2 void encodeUtf16(const char16_t* s, std::size_t n, u8* d, bool bigEndian) noexcept {
  if (!bigEndian) {  // x86 is little-endian: the units are already the bytes
    std::memcpy(d, s, 2 * n);
    return;
  }
  const __m256i swap = _mm256_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 1, 0,
                                        3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) store(d + 2 * i, _mm256_shuffle_epi8(load(s + i), swap));
  for (; i < n; ++i) {
    d[2 * i] = static_cast<u8>(s[i] >> 8);
    d[2 * i + 1] = static_cast<u8>(s[i] & 0xFF);
  }
}

// ---- UTF-8 decoders to Latin-1 and UTF-16 bytes: widen/copy ASCII runs 32 bytes at a time (the
// store may cover bytes past the run; they are overwritten next, and the bound n units/bytes keeps
// it inside dst), and decode the non-ASCII code points that follow a run with the scalar decoder.

/// Decodes non-ASCII code points at i until an ASCII byte or 16 bytes past i (at least one).
template <class Sink>
inline void decodeNonAsciiRun(const u8* s, std::size_t& i, std::size_t n, Sink& sink) noexcept {
  const std::size_t limit = i + 16;
  do {
    char32_t c;
    i += decodeOne(s + i, n - i, c);
    sink(c);
  } while (i < n && i < limit && s[i] >= 0x80);
}

// ---- UTF-8 -> UTF-16 with vector decoding of 1-3 byte sequences. A 32-byte block that starts on
// a code point boundary is validated on its own (the bytes before it count as ASCII). In a
// well-formed block every byte position k that ends a code point is given, in parallel, the unit
// that code point decodes to, computed from bytes k, k-1 and k-2 (the length follows from k-1
// being a lead or a continuation); then the units at the "end of code point" positions are
// compacted 8 positions at a time with a pshufb table indexed by the 8-bit end mask, and the
// destination advances by its popcount. There is no serial dependency between positions beyond
// the destination pointer. 4-byte sequences (surrogate pairs) and blocks with ill-formed bytes go
// through the scalar decoder, so replacement behaviour is exactly the scalar tier's.

/// pshufb indices moving the 16-bit lanes whose bits are set in the index to the front.
struct CompactUnitsTable {
  alignas(16) u8 shuffle[256][16];
};
constexpr CompactUnitsTable makeCompactUnitsTable() {
  CompactUnitsTable t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned out = 0;
    for (unsigned j = 0; j < 8; ++j)
      if ((m >> j) & 1) {
        t.shuffle[m][out++] = static_cast<u8>(2 * j);
        t.shuffle[m][out++] = static_cast<u8>(2 * j + 1);
      }
    for (; out < 16; ++out) t.shuffle[m][out] = 0x80;
  }
  return t;
}
constexpr CompactUnitsTable kCompactUnits = makeCompactUnitsTable();

/// Writes the units at the positions set in `ends` (all within [8 * first, 8 * last + 8)) of the
/// four 8-unit groups; each group's store covers 8 units, at most 8 units past its first position.
NETBUF_AVX2 inline char16_t* compactGroups(const __m128i (&groups)[4], unsigned ends,
                                           unsigned first, unsigned last, char16_t* d) noexcept {
  for (unsigned g = first; g <= last; ++g) {
    const unsigned m = (ends >> (8 * g)) & 0xFF;
    store128(d, _mm_shuffle_epi8(groups[g], load128(kCompactUnits.shuffle[m])));
    d += popcount(m);
  }
  return d;
}

/// compactGroups for a range that may start inside a group (after a 4-byte sequence, whose two
/// units were written in place of four bytes): a group's 8-unit store could then reach past the
/// block's 32-unit budget, so a store that would pass `limit` writes only its units, one by one.
NETBUF_AVX2 inline char16_t* compactGroupsBounded(const __m128i (&groups)[4], unsigned ends,
                                                  unsigned first, unsigned last, char16_t* d,
                                                  const char16_t* limit) noexcept {
  for (unsigned g = first; g <= last; ++g) {
    const unsigned m = (ends >> (8 * g)) & 0xFF;
    const __m128i units = _mm_shuffle_epi8(groups[g], load128(kCompactUnits.shuffle[m]));
    const unsigned count = static_cast<unsigned>(popcount(m));
    if (d + 8 <= limit) {
      store128(d, units);
    } else {
      alignas(16) char16_t tmp[8];
      store128(tmp, units);
      for (unsigned k = 0; k < count; ++k) d[k] = tmp[k];
    }
    d += count;
  }
  return d;
}

/// Decodes from the code point boundary p (32 readable bytes; `avail` of them are input) and
/// returns the bytes consumed (at least 1, at most 32; a code point boundary). Writes the units at
/// d, with stores reaching at most 32 units past the old d (units never outnumber bytes). Where
/// avail < 32 the bytes from avail on must be zero: the block may then consume some of them, each
/// producing one trailing unit U+0000 that the caller trims.
NETBUF_AVX2 inline std::size_t decodeBlock(const Validator& v, const u8* p, std::size_t avail,
                                           char16_t*& d) noexcept {
  const __m256i in = load(p);
  const unsigned high = static_cast<unsigned>(_mm256_movemask_epi8(in));
  if (high == 0) {
    store(d, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(in)));
    store(d + 16, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(in, 1)));
    d += 32;
    return 32;
  }
  const __m256i zero = _mm256_setzero_si256();
  if (any(blockErrors(v, in, zero))) {
    Utf16Sink sink{d};
    std::size_t j = 0;
    decodeStep(p, j, avail < 32 ? avail : 32, avail, sink);
    d = sink.d;
    return j;
  }
  // Well-formed except perhaps for a sequence cut off by the block's end. Bit k of `ends`: byte
  // k + 1 is not a continuation byte, so byte k ends a code point (known for k <= 30).
  const unsigned cont = static_cast<unsigned>(
      _mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_set1_epi8(-64), in)));  // 0x80..0xBF
  const unsigned ends = ~cont >> 1;
  const unsigned boundary = 32 - static_cast<unsigned>(__builtin_clz(ends));  // ends != 0
  // Unit of the code point ending at each position (meaningful where `ends` is set and the
  // sequence is 1-3 bytes). Low byte: ASCII, or the last byte's 6 bits plus 2 from byte k-1.
  // High byte: 4 bits of byte k-1 (a continuation, or a 2-byte lead whose 5th bit is clear),
  // plus, for a 3-byte sequence (byte k-1 not a lead), the lead's 4 bits from byte k-2.
  const __m256i p1 = prevBytes<1>(in, zero);
  const __m256i p2 = prevBytes<2>(in, zero);
  const __m256i ascii = _mm256_cmpgt_epi8(in, _mm256_set1_epi8(-1));
  const __m256i lead1 = _mm256_cmpgt_epi8(p1, _mm256_set1_epi8(-65));  // C0..FF (or ASCII)
  const __m256i low = _mm256_blendv_epi8(
      _mm256_or_si256(
          _mm256_and_si256(in, _mm256_set1_epi8(0x3F)),
          _mm256_and_si256(_mm256_slli_epi16(p1, 6), _mm256_set1_epi8(static_cast<char>(0xC0)))),
      in, ascii);
  const __m256i highByte = _mm256_andnot_si256(
      ascii,
      _mm256_or_si256(
          _mm256_and_si256(_mm256_srli_epi16(p1, 2), _mm256_set1_epi8(0x0F)),
          _mm256_andnot_si256(lead1, _mm256_and_si256(_mm256_slli_epi16(p2, 4),
                                                      _mm256_set1_epi8(static_cast<char>(0xF0))))));
  const __m256i unitsLo = _mm256_unpacklo_epi8(low, highByte);  // positions 0-7 and 16-23
  const __m256i unitsHi = _mm256_unpackhi_epi8(low, highByte);  // positions 8-15 and 24-31
  const __m128i groups[4] = {_mm256_castsi256_si128(unitsLo), _mm256_castsi256_si128(unitsHi),
                             _mm256_extracti128_si256(unitsLo, 1),
                             _mm256_extracti128_si256(unitsHi, 1)};
  // 4-byte leads before the boundary: their sequences are complete inside the block.
  unsigned four = static_cast<unsigned>(_mm256_movemask_epi8(
                      _mm256_cmpgt_epi8(in, _mm256_set1_epi8(static_cast<char>(0xEF))))) &
                  high & ((1u << boundary) - 1);  // F0..FF (signed -16..-1); boundary <= 31
  if (four == 0) {  // the common case: four straight-line compactions (unused groups add 0)
    d = compactGroups(groups, ends & ((1u << boundary) - 1), 0, 3, d);
    return boundary;
  }
  // Stores stay inside the 32 units the caller reserved from the block's first unit.
  const char16_t* const limit = d + 32;
  unsigned pos = 0;
  for (;;) {
    const unsigned stop = four != 0 ? static_cast<unsigned>(__builtin_ctz(four)) : boundary;
    if (stop > pos) {
      const unsigned range = ends & ((1u << stop) - 1) & ~((1u << pos) - 1);
      d = compactGroupsBounded(groups, range, pos / 8, (stop - 1) / 8, d, limit);
    }
    if (stop == boundary) return boundary;
    char32_t c;
    pos = stop + static_cast<unsigned>(decodeOne(p + stop, 4, c));
    d = putUtf16(c, d);
    four &= four - 1;
  }
}

NETBUF_AVX2 std::size_t utf8ToUtf16(const u8* s, std::size_t n, char16_t* dst) noexcept {
  const Validator v = makeValidator();
  std::size_t i = 0;
  char16_t* d = dst;
  // d - dst <= i (at most one unit per byte), so the 32 units a block may touch fit in n.
  while (i + 32 <= n) i += decodeBlock(v, s + i, n - i, d);
  if (i == n) return static_cast<std::size_t>(d - dst);
  // The tail (1-31 bytes): decode a zero-padded copy into a local buffer, then trim the units the
  // padding produced (one U+0000 per padding byte consumed). Both copies use overlapping vector
  // moves (library memcpy calls cost as much as a block here).
  alignas(32) u8 buf[96];
  u8* const in = buf + 32;
  alignas(32) char16_t out[96];
  const std::size_t rem = n - i;
  if (n >= 32) {
    store(in + rem - 32, load(s + n - 32));  // in[k] = s[i + k] for k < rem
    store(in + rem, _mm256_setzero_si256());
  } else {
    store(in, _mm256_setzero_si256());
    store(in + 32, _mm256_setzero_si256());
    std::memcpy(in, s + i, rem);
  }
  std::size_t j = 0;
  char16_t* o = out;
  while (j < rem) j += decodeBlock(v, in + j, rem - j, o);
  const std::size_t units = static_cast<std::size_t>(o - out) - (j - rem);
  if (units >= 16) {  // units <= rem <= 31
    const __m256i head = load(out);
    const __m256i tailUnits = load(out + units - 16);
    store(d, head);
    store(d + units - 16, tailUnits);
  } else if (units >= 8) {
    const __m128i head = load128(out);
    const __m128i tailUnits = load128(out + units - 8);
    store128(d, head);
    store128(d + units - 8, tailUnits);
  } else {
    for (std::size_t k = 0; k < units; ++k) d[k] = out[k];
  }
  return static_cast<std::size_t>(d - dst) + units;
}

NETBUF_AVX2 std::size_t utf8ToLatin1(const u8* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  Latin1Sink sink{dst};
  while (i + 32 <= n) {
    const __m256i v = load(s + i);
    const unsigned high = static_cast<unsigned>(_mm256_movemask_epi8(v));
    store(sink.d, v);  // d - dst <= i: inside the n-byte bound
    if (high == 0) {
      sink.d += 32;
      i += 32;
      continue;
    }
    const unsigned run = static_cast<unsigned>(__builtin_ctz(high));
    sink.d += run;
    i += run;
    decodeNonAsciiRun(s, i, n, sink);
  }
  decodeStep(s, i, n, n, sink);
  return static_cast<std::size_t>(sink.d - dst);
}

NETBUF_AVX2 std::size_t utf8ToUtf16Bytes(const u8* s, std::size_t n, u8* dst,
                                         bool bigEndian) noexcept {
  std::size_t i = 0;
  Utf16BytesSink sink{dst, bigEndian};
  const __m256i zero = _mm256_setzero_si256();
  while (i + 32 <= n) {
    const __m256i v = load(s + i);
    const unsigned high = static_cast<unsigned>(_mm256_movemask_epi8(v));
    // Byte order within each unit: interleave with zero, then restore the 128-bit lane order.
    const __m256i lo = bigEndian ? _mm256_unpacklo_epi8(zero, v) : _mm256_unpacklo_epi8(v, zero);
    const __m256i hi = bigEndian ? _mm256_unpackhi_epi8(zero, v) : _mm256_unpackhi_epi8(v, zero);
    store(sink.d, _mm256_permute2x128_si256(lo, hi, 0x20));
    store(sink.d + 32, _mm256_permute2x128_si256(lo, hi, 0x31));
    if (high == 0) {
      sink.d += 64;
      i += 32;
      continue;
    }
    const unsigned run = static_cast<unsigned>(__builtin_ctz(high));
    sink.d += 2 * run;
    i += run;
    decodeNonAsciiRun(s, i, n, sink);
  }
  decodeStep(s, i, n, n, sink);
  return static_cast<std::size_t>(sink.d - dst);
}

}  // namespace

const Kernels kAvx2Kernels = {
    utf8BytesU16, utf8BytesU32, replacingBytes,   encodeUtf8U16, encodeUtf8U32, copyReplacing,
    firstInvalid, isAsciiAvx2,  encodeAsciiU16,   encodeAscii8,  encodeLatin1,  encodeUtf16,
    utf8ToLatin1, utf8ToUtf16,  utf8ToUtf16Bytes, utf16Length,
};

}  // namespace netbuf::utf8::detail

#endif  // __x86_64__
