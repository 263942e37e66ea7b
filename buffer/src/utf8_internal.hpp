#pragma once
// Private to the utf8 kernels: the per-instruction-set kernel table and the scalar building blocks
// that every tier uses for tails, surrogates and ill-formed input. Everything here works on
// `unsigned char` (std::byte pointers from the public API are reinterpreted; char types may alias
// anything). The scalar helpers are inline so the SIMD translation units can inline them into
// their target("avx2") functions (a callee with a subset of the caller's ISA may be inlined).

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace netbuf::utf8::detail {

using u8 = unsigned char;

/// One table per tier; the public functions make exactly one indirect call through it.
struct Kernels {
  std::size_t (*utf8BytesU16)(const char16_t*, std::size_t) noexcept;
  std::size_t (*utf8BytesU32)(const char32_t*, std::size_t) noexcept;
  std::size_t (*utf8ReplacingBytes)(const u8*, std::size_t) noexcept;
  std::size_t (*encodeUtf8U16)(const char16_t*, std::size_t, u8*) noexcept;
  std::size_t (*encodeUtf8U32)(const char32_t*, std::size_t, u8*) noexcept;
  std::size_t (*copyUtf8Replacing)(const u8*, std::size_t, u8*) noexcept;
  std::size_t (*firstInvalidUtf8)(const u8*, std::size_t) noexcept;
  bool (*isAscii)(const u8*, std::size_t) noexcept;
  void (*encodeAsciiU16)(const char16_t*, std::size_t, u8*) noexcept;
  void (*encodeAscii8)(const u8*, std::size_t, u8*) noexcept;
  void (*encodeLatin1)(const char16_t*, std::size_t, u8*) noexcept;
  void (*encodeUtf16)(const char16_t*, std::size_t, u8*, bool bigEndian) noexcept;
  std::size_t (*utf8ToLatin1)(const u8*, std::size_t, u8*) noexcept;
  std::size_t (*utf8ToUtf16)(const u8*, std::size_t, char16_t*) noexcept;
  std::size_t (*utf8ToUtf16Bytes)(const u8*, std::size_t, u8*, bool bigEndian) noexcept;
  std::size_t (*utf16Length)(const u8*, std::size_t) noexcept;
};

extern const Kernels kScalarKernels;
#if defined(__x86_64__)
extern const Kernels kSse2Kernels;
extern const Kernels kAvx2Kernels;
extern const Kernels kAvx512Kernels;
#endif

/// Returned by decodeOne for an ill-formed maximal subpart.
inline constexpr char32_t kBad = 0xFFFFFFFFu;

constexpr bool isSurrogate(char32_t c) noexcept { return c >= 0xD800 && c <= 0xDFFF; }
constexpr bool isContinuation(u8 b) noexcept { return (b & 0xC0) == 0x80; }

/// Decodes the code point starting at p[0] (n >= 1 bytes available). Returns the bytes consumed
/// and sets cp: the scalar value, or kBad after consuming exactly one maximal subpart (Unicode 3.9,
/// Table 3-7: the lead byte plus every following byte that still fits a well-formed prefix).
inline std::size_t decodeOne(const u8* p, std::size_t n, char32_t& cp) noexcept {
  const unsigned b0 = p[0];
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  unsigned lo = 0x80;
  unsigned hi = 0xBF;
  std::size_t need;
  char32_t c;
  if (b0 < 0xC2) {  // stray continuation byte, or C0/C1 (always overlong)
    cp = kBad;
    return 1;
  } else if (b0 < 0xE0) {
    need = 1;
    c = b0 & 0x1F;
  } else if (b0 < 0xF0) {
    need = 2;
    c = b0 & 0x0F;
    if (b0 == 0xE0)
      lo = 0xA0;  // overlong below U+0800
    else if (b0 == 0xED)
      hi = 0x9F;  // would encode a surrogate
  } else if (b0 < 0xF5) {
    need = 3;
    c = b0 & 0x07;
    if (b0 == 0xF0)
      lo = 0x90;  // overlong below U+10000
    else if (b0 == 0xF4)
      hi = 0x8F;  // above U+10FFFF
  } else {        // F5..FF never appear in UTF-8
    cp = kBad;
    return 1;
  }
  for (std::size_t i = 1; i <= need; ++i) {
    if (i >= n) {
      cp = kBad;
      return i;
    }
    const unsigned b = p[i];
    if (b < lo || b > hi) {
      cp = kBad;
      return i;
    }
    lo = 0x80;
    hi = 0xBF;
    c = (c << 6) | (b & 0x3F);
  }
  cp = c;
  return need + 1;
}

/// Writes the UTF-8 form of a valid scalar value c (not a surrogate, <= U+10FFFF).
inline u8* putUtf8(char32_t c, u8* d) noexcept {
  if (c < 0x80) {
    *d++ = static_cast<u8>(c);
  } else if (c < 0x800) {
    *d++ = static_cast<u8>(0xC0 | (c >> 6));
    *d++ = static_cast<u8>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    *d++ = static_cast<u8>(0xE0 | (c >> 12));
    *d++ = static_cast<u8>(0x80 | ((c >> 6) & 0x3F));
    *d++ = static_cast<u8>(0x80 | (c & 0x3F));
  } else {
    *d++ = static_cast<u8>(0xF0 | (c >> 18));
    *d++ = static_cast<u8>(0x80 | ((c >> 12) & 0x3F));
    *d++ = static_cast<u8>(0x80 | ((c >> 6) & 0x3F));
    *d++ = static_cast<u8>(0x80 | (c & 0x3F));
  }
  return d;
}

inline std::uint64_t load64(const void* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline constexpr std::uint64_t kHighBits = 0x8080808080808080ull;

// ---- Scalar step functions. Each processes input from index i while i < stop (the last code
// point may run past stop, up to n) and advances i and the destination. The SIMD tiers call them
// for tails and for blocks their vector code does not handle; the Scalar tier calls them with
// stop == n.

/// UTF-16 -> UTF-8 (Java's policy for unpaired surrogates).
inline void encodeU16Step(const char16_t* s, std::size_t& i, std::size_t stop, std::size_t n,
                          u8*& d) noexcept {
  while (i < stop) {
    const char32_t c = s[i];
    if (c < 0x80) {
      *d++ = static_cast<u8>(c);
      ++i;
    } else if (!isSurrogate(c)) {
      d = putUtf8(c, d);
      ++i;
    } else if (c <= 0xDBFF && i + 1 < n && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      d = putUtf8(0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00), d);
      i += 2;
    } else {
      *d++ = '?';
      ++i;
    }
  }
}

/// Bytes encodeU16Step would write for [i, stop) (same stopping rule).
inline std::size_t countU16Step(const char16_t* s, std::size_t& i, std::size_t stop,
                                std::size_t n) noexcept {
  std::size_t total = 0;
  while (i < stop) {
    const char32_t c = s[i];
    if (!isSurrogate(c)) {
      total += 1 + (c >= 0x80) + (c >= 0x800);
      ++i;
    } else if (c <= 0xDBFF && i + 1 < n && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      total += 4;
      i += 2;
    } else {
      total += 1;
      ++i;
    }
  }
  return total;
}

inline u8* encodeU32One(char32_t c, u8* d) noexcept {
  if (isSurrogate(c) || c > 0x10FFFF) {
    *d++ = '?';
    return d;
  }
  return putUtf8(c, d);
}

inline std::size_t countU32One(char32_t c) noexcept {
  if (isSurrogate(c) || c > 0x10FFFF) return 1;
  return 1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000);
}

/// Validating copy with U+FFFD replacement; 8-byte ASCII skip (portable SWAR).
inline void copyReplacingStep(const u8* s, std::size_t& i, std::size_t stop, std::size_t n,
                              u8*& d) noexcept {
  while (i < stop) {
    if (i + 8 <= n && (load64(s + i) & kHighBits) == 0) {
      std::memcpy(d, s + i, 8);
      d += 8;
      i += 8;
      continue;
    }
    char32_t c;
    const std::size_t len = decodeOne(s + i, n - i, c);
    if (c == kBad) {
      d[0] = 0xEF;
      d[1] = 0xBF;
      d[2] = 0xBD;
      d += 3;
    } else {
      std::memcpy(d, s + i, len);
      d += len;
    }
    i += len;
  }
}

/// Output bytes of copyReplacingStep.
inline std::size_t countReplacingStep(const u8* s, std::size_t& i, std::size_t stop,
                                      std::size_t n) noexcept {
  std::size_t total = 0;
  while (i < stop) {
    if (i + 8 <= n && (load64(s + i) & kHighBits) == 0) {
      total += 8;
      i += 8;
      continue;
    }
    char32_t c;
    const std::size_t len = decodeOne(s + i, n - i, c);
    total += c == kBad ? 3 : len;
    i += len;
  }
  return total;
}

/// Scans for the first ill-formed subpart in [i, stop) (finishing the last sequence up to n).
/// Returns its offset, or npos-like SIZE_MAX when none was found before i reached stop.
inline std::size_t firstInvalidStep(const u8* s, std::size_t& i, std::size_t stop,
                                    std::size_t n) noexcept {
  while (i < stop) {
    if (i + 8 <= n && (load64(s + i) & kHighBits) == 0) {
      i += 8;
      continue;
    }
    char32_t c;
    const std::size_t len = decodeOne(s + i, n - i, c);
    if (c == kBad) return i;
    i += len;
  }
  return static_cast<std::size_t>(-1);
}

/// Generic replacing decoder; `emit(c)` receives each scalar value, or kBad for a maximal subpart.
template <class Emit>
inline void decodeStep(const u8* s, std::size_t& i, std::size_t stop, std::size_t n,
                       Emit&& emit) noexcept {
  while (i < stop) {
    char32_t c;
    i += decodeOne(s + i, n - i, c);
    emit(c);
  }
}

inline char16_t* putUtf16(char32_t c, char16_t* d) noexcept {
  if (c == kBad) {
    *d++ = u'\uFFFD';
  } else if (c < 0x10000) {
    *d++ = static_cast<char16_t>(c);
  } else {
    c -= 0x10000;
    *d++ = static_cast<char16_t>(0xD800 + (c >> 10));
    *d++ = static_cast<char16_t>(0xDC00 + (c & 0x3FF));
  }
  return d;
}

inline u8* putUtf16Bytes(char32_t c, u8* d, bool bigEndian) noexcept {
  char16_t units[2];
  char16_t* end = putUtf16(c, units);
  for (char16_t* u = units; u != end; ++u) {
    const u8 hi = static_cast<u8>(*u >> 8);
    const u8 lo = static_cast<u8>(*u & 0xFF);
    *d++ = bigEndian ? hi : lo;
    *d++ = bigEndian ? lo : hi;
  }
  return d;
}

/// Units utf8ToUtf16 writes for [i, stop).
inline std::size_t countUtf16Step(const u8* s, std::size_t& i, std::size_t stop,
                                  std::size_t n) noexcept {
  std::size_t total = 0;
  while (i < stop) {
    if (i + 8 <= n && (load64(s + i) & kHighBits) == 0) {
      total += 8;
      i += 8;
      continue;
    }
    char32_t c;
    i += decodeOne(s + i, n - i, c);
    total += (c != kBad && c >= 0x10000) ? 2 : 1;
  }
  return total;
}

/// Start of the code point that contains position i (or begins there), assuming [floor, i) is
/// well-formed UTF-8 except possibly for one incomplete sequence at its end, and that floor is a
/// code point boundary. Reads only bytes before i. SIMD code uses it to hand the rest of a block
/// back to the scalar step functions after it has copied (or counted) a block that ended inside a
/// sequence.
inline std::size_t backToBoundary(const u8* s, std::size_t i, std::size_t floor) noexcept {
  for (std::size_t k = 1; k <= 3 && k <= i - floor; ++k) {
    const u8 b = s[i - k];
    if (isContinuation(b)) continue;
    const std::size_t len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return len > k ? i - k : i;
  }
  return i;
}

/// Sinks for decodeStep (plain structs rather than lambdas, so that SIMD translation units whose
/// functions carry target attributes can still inline them).
struct Latin1Sink {
  u8* d;
  void operator()(char32_t c) noexcept { *d++ = c <= 0xFF ? static_cast<u8>(c) : u8{'?'}; }
};
struct Utf16Sink {
  char16_t* d;
  void operator()(char32_t c) noexcept { d = putUtf16(c, d); }
};
struct Utf16BytesSink {
  u8* d;
  bool bigEndian;
  void operator()(char32_t c) noexcept { d = putUtf16Bytes(c, d, bigEndian); }
};

}  // namespace netbuf::utf8::detail
