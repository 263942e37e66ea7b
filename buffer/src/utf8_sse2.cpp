// The SSE2 tier: the x86-64 baseline, so it needs no CPU check. SSE2 has no byte shuffle, so the
// vector paths here are the ones plain arithmetic can do: ASCII runs (16 units per step), blocks of
// 8 UTF-16 units that all need exactly two UTF-8 bytes, and vectorised length counting. Everything
// else is handed block by block to the scalar step functions, which always stop on a code point
// boundary so the vector loop can resume cleanly.

#if defined(__x86_64__)

#include <emmintrin.h>

#include "utf8_internal.hpp"

namespace netbuf::utf8::detail {
namespace {

inline __m128i load(const void* p) noexcept {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}
inline void store(void* p, __m128i v) noexcept { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
inline void storeLow(void* p, __m128i v) noexcept { _mm_storel_epi64(static_cast<__m128i*>(p), v); }

/// All 8 units below 0x80.
inline bool ascii16(__m128i v) noexcept {
  return _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(-128)),
                                           _mm_setzero_si128())) == 0xFFFF;
}

/// Unsigned 16-bit a < b, per lane (SSE2 only compares signed).
inline __m128i lessU16(__m128i a, __m128i b) noexcept {
  const __m128i flip = _mm_set1_epi16(static_cast<short>(0x8000));
  return _mm_cmplt_epi16(_mm_xor_si128(a, flip), _mm_xor_si128(b, flip));
}

/// All 8 units in [0x80, 0x800): each becomes exactly two bytes.
inline bool twoByte16(__m128i v) noexcept {
  const __m128i t = _mm_sub_epi16(v, _mm_set1_epi16(0x80));
  return _mm_movemask_epi8(lessU16(t, _mm_set1_epi16(0x780))) == 0xFFFF;
}

/// 8 units in [0x80, 0x800) -> 16 bytes: lead 110xxxxx then 10xxxxxx, as little-endian words.
inline void storeTwoByte(u8* d, __m128i v) noexcept {
  const __m128i lead = _mm_or_si128(_mm_srli_epi16(v, 6), _mm_set1_epi16(0xC0));
  const __m128i cont = _mm_or_si128(_mm_and_si128(v, _mm_set1_epi16(0x3F)), _mm_set1_epi16(0x80));
  store(d, _mm_or_si128(lead, _mm_slli_epi16(cont, 8)));
}

std::size_t encodeUtf8U16(const char16_t* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  while (i + 16 <= n) {
    const __m128i a = load(s + i);
    const __m128i b = load(s + i + 8);
    if (ascii16(_mm_or_si128(a, b))) {
      store(d, _mm_packus_epi16(a, b));
      d += 16;
      i += 16;
      continue;
    }
    // Half a block at a time; the scalar step may run one unit past a half to finish a pair.
    const std::size_t stop = i + 8;
    if (ascii16(a)) {
      storeLow(d, _mm_packus_epi16(a, a));
      d += 8;
      i += 8;
    } else if (twoByte16(a)) {
      storeTwoByte(d, a);
      d += 16;
      i += 8;
    } else {
      encodeU16Step(s, i, stop, n, d);
    }
  }
  encodeU16Step(s, i, n, n, d);
  return static_cast<std::size_t>(d - dst);
}

/// Sums the 16-bit lanes of acc (each lane holds a non-negative count).
inline std::size_t sumU16(__m128i acc) noexcept {
  const __m128i wide = _mm_madd_epi16(acc, _mm_set1_epi16(1));
  alignas(16) std::int32_t lanes[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), wide);
  return static_cast<std::size_t>(lanes[0]) + static_cast<std::size_t>(lanes[1]) +
         static_cast<std::size_t>(lanes[2]) + static_cast<std::size_t>(lanes[3]);
}

std::size_t utf8BytesU16(const char16_t* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::size_t total = 0;
  while (i + 8 <= n) {
    // acc lanes grow by at most 2 per block; flush long before they could overflow 0x7FFF.
    __m128i acc = _mm_setzero_si128();
    std::size_t vectorUnits = 0;
    for (int rounds = 0; rounds < 8192 && i + 8 <= n; ++rounds) {
      const __m128i v = load(s + i);
      const __m128i surrogate = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(-2048)),
                                                _mm_set1_epi16(static_cast<short>(0xD800)));
      if (_mm_movemask_epi8(surrogate) != 0) {
        total += countU16Step(s, i, i + 8, n);
        continue;
      }
      // A lane compare yields -1, so subtracting it counts.
      acc = _mm_sub_epi16(acc, lessU16(_mm_set1_epi16(0x7F), v));
      acc = _mm_sub_epi16(acc, lessU16(_mm_set1_epi16(0x7FF), v));
      vectorUnits += 8;
      i += 8;
    }
    total += vectorUnits + sumU16(acc);
  }
  total += countU16Step(s, i, n, n);
  return total;
}

std::size_t utf8BytesU32(const char32_t* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::size_t total = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128i v = load(s + i);
    // Fast only when every value is a BMP non-surrogate; the rest is rare enough to go scalar.
    const __m128i bmp =
        _mm_cmpeq_epi32(_mm_and_si128(v, _mm_set1_epi32(-65536)), _mm_setzero_si128());
    const __m128i surrogate =
        _mm_cmpeq_epi32(_mm_and_si128(v, _mm_set1_epi32(0xF800)), _mm_set1_epi32(0xD800));
    if (_mm_movemask_epi8(bmp) != 0xFFFF || _mm_movemask_epi8(surrogate) != 0) {
      for (std::size_t j = i; j < i + 4; ++j) total += countU32One(s[j]);
      continue;
    }
    const int m80 = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, _mm_set1_epi32(0x7F))));
    const int m800 = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, _mm_set1_epi32(0x7FF))));
    total += 4 + static_cast<std::size_t>(__builtin_popcount(static_cast<unsigned>(m80)) +
                                          __builtin_popcount(static_cast<unsigned>(m800)));
  }
  for (; i < n; ++i) total += countU32One(s[i]);
  return total;
}

std::size_t encodeUtf8U32(const char32_t* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  for (; i + 8 <= n; i += 8) {
    const __m128i a = load(s + i);
    const __m128i b = load(s + i + 4);
    const __m128i any = _mm_or_si128(a, b);
    if (_mm_movemask_epi8(_mm_cmpeq_epi32(_mm_and_si128(any, _mm_set1_epi32(-65536)),
                                          _mm_setzero_si128())) == 0xFFFF) {
      // All below 0x10000: the signed 32->16 pack is exact.
      const __m128i units = _mm_packs_epi32(_mm_sub_epi32(a, _mm_set1_epi32(0x8000)),
                                            _mm_sub_epi32(b, _mm_set1_epi32(0x8000)));
      const __m128i v = _mm_add_epi16(units, _mm_set1_epi16(static_cast<short>(0x8000)));
      if (ascii16(v)) {
        storeLow(d, _mm_packus_epi16(v, v));
        d += 8;
        continue;
      }
      if (twoByte16(v)) {
        storeTwoByte(d, v);
        d += 16;
        continue;
      }
    }
    for (std::size_t j = i; j < i + 8; ++j) d = encodeU32One(s[j], d);
  }
  for (; i < n; ++i) d = encodeU32One(s[i], d);
  return static_cast<std::size_t>(d - dst);
}

inline bool ascii8(__m128i v) noexcept { return _mm_movemask_epi8(v) == 0; }

std::size_t copyReplacing(const u8* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  while (i + 16 <= n) {
    const __m128i v = load(s + i);
    if (ascii8(v)) {
      store(d, v);
      d += 16;
      i += 16;
    } else {
      copyReplacingStep(s, i, i + 16, n, d);
    }
  }
  copyReplacingStep(s, i, n, n, d);
  return static_cast<std::size_t>(d - dst);
}

std::size_t replacingBytes(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::size_t total = 0;
  while (i + 16 <= n) {
    if (ascii8(load(s + i))) {
      total += 16;
      i += 16;
    } else {
      total += countReplacingStep(s, i, i + 16, n);
    }
  }
  return total + countReplacingStep(s, i, n, n);
}

std::size_t firstInvalid(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  while (i + 16 <= n) {
    if (ascii8(load(s + i))) {
      i += 16;
    } else {
      const std::size_t bad = firstInvalidStep(s, i, i + 16, n);
      if (bad != static_cast<std::size_t>(-1)) return bad;
    }
  }
  return firstInvalidStep(s, i, n, n);
}

bool isAsciiSse2(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  __m128i acc = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) acc = _mm_or_si128(acc, load(s + i));
  if (!ascii8(acc)) return false;
  for (; i < n; ++i)
    if (s[i] >= 0x80) return false;
  return true;
}

/// Units above `limit` (0x7F or 0xFF) become '?', then narrow with an exact pack.
inline __m128i clampUnits(__m128i v, short highMask) noexcept {
  const __m128i ok =
      _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(highMask)), _mm_setzero_si128());
  return _mm_or_si128(_mm_and_si128(ok, v), _mm_andnot_si128(ok, _mm_set1_epi16('?')));
}

void narrowU16(const char16_t* s, std::size_t n, u8* d, short highMask, char16_t limit) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    store(d + i, _mm_packus_epi16(clampUnits(load(s + i), highMask),
                                  clampUnits(load(s + i + 8), highMask)));
  }
  for (; i < n; ++i) d[i] = s[i] <= limit ? static_cast<u8>(s[i]) : u8{'?'};
}

void encodeAsciiU16(const char16_t* s, std::size_t n, u8* d) noexcept {
  narrowU16(s, n, d, -128, 0x7F);
}
void encodeLatin1(const char16_t* s, std::size_t n, u8* d) noexcept {
  narrowU16(s, n, d, -256, 0xFF);
}

void encodeAscii8(const u8* s, std::size_t n, u8* d) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i v = load(s + i);
    const __m128i high = _mm_cmplt_epi8(v, _mm_setzero_si128());
    store(d + i, _mm_or_si128(_mm_andnot_si128(high, v), _mm_and_si128(high, _mm_set1_epi8('?'))));
  }
  for (; i < n; ++i) d[i] = s[i] < 0x80 ? s[i] : u8{'?'};
}

void encodeUtf16(const char16_t* s, std::size_t n, u8* d, bool bigEndian) noexcept {
  std::size_t i = 0;
  if (!bigEndian) {  // x86 is little-endian: the units are already the bytes
    std::memcpy(d, s, 2 * n);
    return;
  }
  for (; i + 8 <= n; i += 8) {
    const __m128i v = load(s + i);
    store(d + 2 * i, _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8)));
  }
  for (; i < n; ++i) {
    d[2 * i] = static_cast<u8>(s[i] >> 8);
    d[2 * i + 1] = static_cast<u8>(s[i] & 0xFF);
  }
}

std::size_t utf8ToLatin1(const u8* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  auto emit = [&d](char32_t c) { *d++ = c <= 0xFF ? static_cast<u8>(c) : u8{'?'}; };
  while (i + 16 <= n) {
    const __m128i v = load(s + i);
    if (ascii8(v)) {
      store(d, v);
      d += 16;
      i += 16;
    } else {
      decodeStep(s, i, i + 16, n, emit);
    }
  }
  decodeStep(s, i, n, n, emit);
  return static_cast<std::size_t>(d - dst);
}

std::size_t utf8ToUtf16(const u8* s, std::size_t n, char16_t* dst) noexcept {
  std::size_t i = 0;
  char16_t* d = dst;
  auto emit = [&d](char32_t c) { d = putUtf16(c, d); };
  while (i + 16 <= n) {
    const __m128i v = load(s + i);
    if (ascii8(v)) {
      store(d, _mm_unpacklo_epi8(v, _mm_setzero_si128()));
      store(d + 8, _mm_unpackhi_epi8(v, _mm_setzero_si128()));
      d += 16;
      i += 16;
    } else {
      decodeStep(s, i, i + 16, n, emit);
    }
  }
  decodeStep(s, i, n, n, emit);
  return static_cast<std::size_t>(d - dst);
}

std::size_t utf8ToUtf16Bytes(const u8* s, std::size_t n, u8* dst, bool bigEndian) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  auto emit = [&d, bigEndian](char32_t c) { d = putUtf16Bytes(c, d, bigEndian); };
  const __m128i zero = _mm_setzero_si128();
  while (i + 16 <= n) {
    const __m128i v = load(s + i);
    if (ascii8(v)) {
      store(d, bigEndian ? _mm_unpacklo_epi8(zero, v) : _mm_unpacklo_epi8(v, zero));
      store(d + 16, bigEndian ? _mm_unpackhi_epi8(zero, v) : _mm_unpackhi_epi8(v, zero));
      d += 32;
      i += 16;
    } else {
      decodeStep(s, i, i + 16, n, emit);
    }
  }
  decodeStep(s, i, n, n, emit);
  return static_cast<std::size_t>(d - dst);
}

std::size_t utf16Length(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::size_t total = 0;
  while (i + 16 <= n) {
    if (ascii8(load(s + i))) {
      total += 16;
      i += 16;
    } else {
      total += countUtf16Step(s, i, i + 16, n);
    }
  }
  return total + countUtf16Step(s, i, n, n);
}

}  // namespace

const Kernels kSse2Kernels = {
    utf8BytesU16, utf8BytesU32, replacingBytes,   encodeUtf8U16, encodeUtf8U32, copyReplacing,
    firstInvalid, isAsciiSse2,  encodeAsciiU16,   encodeAscii8,  encodeLatin1,  encodeUtf16,
    utf8ToLatin1, utf8ToUtf16,  utf8ToUtf16Bytes, utf16Length,
};

}  // namespace netbuf::utf8::detail

#endif  // __x86_64__
