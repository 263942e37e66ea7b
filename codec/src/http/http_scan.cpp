// The vectorised byte scans of the HTTP decoders (detail/http_scan.hpp).
//
// A value byte is invalid when it is below 0x20 (except HTAB) or DEL. With unsigned bytes that is
// "b < 0x20", computed with a signed compare after flipping the top bit (SSE2 and AVX2 have only
// signed byte compares): b ^ 0x80 < 0xA0 as signed bytes. A target ends at the same set plus SP
// and HTAB: b ^ 0x80 < 0xA1 (b <= 0x20), or DEL.

#include <netbuf/codec/http/detail/http_scan.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NETBUF_HTTP_X86 1
#endif

namespace netbuf::detail::http_scan {

namespace {

constexpr bool isTchar(unsigned c) {
  if (c >= '0' && c <= '9') return true;
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

inline bool invalidValue(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }
inline bool targetEnd(unsigned char c) { return c <= 0x20 || c == 0x7f; }

std::size_t scalarValue(const char* p, std::size_t i, std::size_t n) noexcept {
  for (; i < n; ++i)
    if (invalidValue(static_cast<unsigned char>(p[i]))) return i;
  return n;
}
std::size_t scalarTarget(const char* p, std::size_t i, std::size_t n) noexcept {
  for (; i < n; ++i)
    if (targetEnd(static_cast<unsigned char>(p[i]))) return i;
  return n;
}

std::size_t scalarLineEnd(const char* p, std::size_t i, std::size_t n,
                          std::size_t& firstBad) noexcept {
  for (; i < n; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c == '\n') return i;
    if (firstBad == npos && invalidValue(c)) firstBad = i;
  }
  return n;
}

#ifdef NETBUF_HTTP_X86
// SSE2 is part of x86-64: no target attribute needed.
std::size_t sse2LineEnd(const char* p, std::size_t n, std::size_t& firstBad) noexcept {
  std::size_t i = 0;
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  const __m128i below = _mm_set1_epi8(static_cast<char>(0xA0));
  const __m128i tab = _mm_set1_epi8('\t');
  const __m128i del = _mm_set1_epi8(0x7f);
  const __m128i lf = _mm_set1_epi8('\n');
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const unsigned lfMask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(b, lf)));
    if (firstBad == npos) {
      __m128i bad = _mm_cmplt_epi8(_mm_xor_si128(b, flip), below);
      bad = _mm_andnot_si128(_mm_cmpeq_epi8(b, tab), bad);
      bad = _mm_or_si128(bad, _mm_cmpeq_epi8(b, del));
      unsigned badMask = static_cast<unsigned>(_mm_movemask_epi8(bad)) & ~lfMask;
      // Only the bytes before the first LF count.
      if (lfMask != 0) badMask &= (lfMask & (0U - lfMask)) - 1;
      if (badMask != 0) firstBad = i + static_cast<std::size_t>(__builtin_ctz(badMask));
    }
    if (lfMask != 0) return i + static_cast<std::size_t>(__builtin_ctz(lfMask));
  }
  return scalarLineEnd(p, i, n, firstBad);
}
std::size_t sse2Value(const char* p, std::size_t n) noexcept {
  std::size_t i = 0;
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  const __m128i below = _mm_set1_epi8(static_cast<char>(0xA0));
  const __m128i tab = _mm_set1_epi8('\t');
  const __m128i del = _mm_set1_epi8(0x7f);
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    __m128i bad = _mm_cmplt_epi8(_mm_xor_si128(b, flip), below);
    bad = _mm_andnot_si128(_mm_cmpeq_epi8(b, tab), bad);
    bad = _mm_or_si128(bad, _mm_cmpeq_epi8(b, del));
    const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(bad));
    if (m != 0) return i + static_cast<std::size_t>(__builtin_ctz(m));
  }
  return scalarValue(p, i, n);
}
std::size_t sse2Target(const char* p, std::size_t n) noexcept {
  std::size_t i = 0;
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  const __m128i below = _mm_set1_epi8(static_cast<char>(0xA1));
  const __m128i del = _mm_set1_epi8(0x7f);
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    __m128i end = _mm_cmplt_epi8(_mm_xor_si128(b, flip), below);
    end = _mm_or_si128(end, _mm_cmpeq_epi8(b, del));
    const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(end));
    if (m != 0) return i + static_cast<std::size_t>(__builtin_ctz(m));
  }
  return scalarTarget(p, i, n);
}

#define NETBUF_HTTP_AVX2 __attribute__((target("avx2,bmi")))
NETBUF_HTTP_AVX2 std::size_t avx2LineEnd(const char* p, std::size_t n,
                                         std::size_t& firstBad) noexcept {
  std::size_t i = 0;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i below = _mm256_set1_epi8(static_cast<char>(0xA0));
  const __m256i tab = _mm256_set1_epi8('\t');
  const __m256i del = _mm256_set1_epi8(0x7f);
  const __m256i lf = _mm256_set1_epi8('\n');
  for (; i + 32 <= n; i += 32) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const unsigned lfMask = static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, lf)));
    if (firstBad == npos) {
      __m256i bad = _mm256_cmpgt_epi8(below, _mm256_xor_si256(b, flip));
      bad = _mm256_andnot_si256(_mm256_cmpeq_epi8(b, tab), bad);
      bad = _mm256_or_si256(bad, _mm256_cmpeq_epi8(b, del));
      unsigned badMask = static_cast<unsigned>(_mm256_movemask_epi8(bad)) & ~lfMask;
      if (lfMask != 0) badMask &= (lfMask & (0U - lfMask)) - 1;
      if (badMask != 0) firstBad = i + static_cast<std::size_t>(__builtin_ctz(badMask));
    }
    if (lfMask != 0) return i + static_cast<std::size_t>(__builtin_ctz(lfMask));
  }
  if (i == n) return n;
  std::size_t rest = firstBad == npos ? npos : 0;  // 0: already found, the tail need not look
  const std::size_t end = i + sse2LineEnd(p + i, n - i, rest);
  if (firstBad == npos && rest != npos) firstBad = i + rest;
  return end;
}
NETBUF_HTTP_AVX2 std::size_t avx2Value(const char* p, std::size_t n) noexcept {
  std::size_t i = 0;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i below = _mm256_set1_epi8(static_cast<char>(0xA0));
  const __m256i tab = _mm256_set1_epi8('\t');
  const __m256i del = _mm256_set1_epi8(0x7f);
  for (; i + 32 <= n; i += 32) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    __m256i bad = _mm256_cmpgt_epi8(below, _mm256_xor_si256(b, flip));
    bad = _mm256_andnot_si256(_mm256_cmpeq_epi8(b, tab), bad);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi8(b, del));
    const unsigned m = static_cast<unsigned>(_mm256_movemask_epi8(bad));
    if (m != 0) return i + static_cast<std::size_t>(__builtin_ctz(m));
  }
  return i == n ? n : i + sse2Value(p + i, n - i);
}
NETBUF_HTTP_AVX2 std::size_t avx2Target(const char* p, std::size_t n) noexcept {
  std::size_t i = 0;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i below = _mm256_set1_epi8(static_cast<char>(0xA1));
  const __m256i del = _mm256_set1_epi8(0x7f);
  for (; i + 32 <= n; i += 32) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    __m256i end = _mm256_cmpgt_epi8(below, _mm256_xor_si256(b, flip));
    end = _mm256_or_si256(end, _mm256_cmpeq_epi8(b, del));
    const unsigned m = static_cast<unsigned>(_mm256_movemask_epi8(end));
    if (m != 0) return i + static_cast<std::size_t>(__builtin_ctz(m));
  }
  return i == n ? n : i + sse2Target(p + i, n - i);
}
#endif

struct Dispatch {
  std::size_t (*value)(const char*, std::size_t) noexcept;
  std::size_t (*target)(const char*, std::size_t) noexcept;
  std::size_t (*lineEnd)(const char*, std::size_t, std::size_t&) noexcept;
  const char* name;
};

Dispatch pick() noexcept {
#ifdef NETBUF_HTTP_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) return {avx2Value, avx2Target, avx2LineEnd, "avx2"};
  return {sse2Value, sse2Target, sse2LineEnd, "sse2"};
#else
  return {[](const char* p, std::size_t n) noexcept { return scalarValue(p, 0, n); },
          [](const char* p, std::size_t n) noexcept { return scalarTarget(p, 0, n); },
          [](const char* p, std::size_t n, std::size_t& bad) noexcept {
            return scalarLineEnd(p, 0, n, bad);
          },
          "scalar"};
#endif
}

// Chosen once, before main (no check per call).
const Dispatch kDispatch = pick();

}  // namespace

constexpr bool makeTable(unsigned c) { return isTchar(c); }

const bool kTchar[256] = {
#define NETBUF_T(i) makeTable(i)
#define NETBUF_T4(i) NETBUF_T(i), NETBUF_T(i + 1), NETBUF_T(i + 2), NETBUF_T(i + 3)
#define NETBUF_T16(i) NETBUF_T4(i), NETBUF_T4(i + 4), NETBUF_T4(i + 8), NETBUF_T4(i + 12)
#define NETBUF_T64(i) NETBUF_T16(i), NETBUF_T16(i + 16), NETBUF_T16(i + 32), NETBUF_T16(i + 48)
    NETBUF_T64(0), NETBUF_T64(64), NETBUF_T64(128), NETBUF_T64(192)
#undef NETBUF_T64
#undef NETBUF_T16
#undef NETBUF_T4
#undef NETBUF_T
};

std::size_t findInvalidValueByte(const char* p, std::size_t n) noexcept {
  // Short values (most header values) are cheaper scalar than through the call.
  if (n < 16) return scalarValue(p, 0, n);
  return kDispatch.value(p, n);
}
std::size_t findLineEnd(const char* p, std::size_t n, std::size_t& firstBad) noexcept {
  return kDispatch.lineEnd(p, n, firstBad);
}
std::size_t findTargetEnd(const char* p, std::size_t n) noexcept { return kDispatch.target(p, n); }
const char* implementation() noexcept { return kDispatch.name; }

}  // namespace netbuf::detail::http_scan
