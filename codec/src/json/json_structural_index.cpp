// Stage 1 of the JSON parser: see json_structural_index.hpp.
//
// One loop over the blocks (indexBlocks) serves every tier; each tier supplies the function that
// classifies one block (its instruction set's masks) and an entry point compiled for that
// instruction set, which flattens the loop and the block function into one body. What the masks
// mean, and what is recorded from them, is one function shared by all tiers (plain 64-bit
// arithmetic, inlined into each).
#include "json_structural_index.hpp"

#include <algorithm>
#include <cstring>
#include <netbuf/buffer/detail/utf8_validate_avx512.hpp>
#include <netbuf/buffer/utf8.hpp>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace netbuf::detail {
namespace {

/// The classes of one block's 64 bytes, one bit per byte (bit i: byte i).
struct RawMasks {
  std::uint64_t quote;
  std::uint64_t backslash;
  std::uint64_t op;    // { } [ ] : ,
  std::uint64_t ws;    // space, tab, line feed, carriage return
  std::uint64_t ctrl;  // below 0x20
  std::uint64_t high;  // above 0x7F
};

/// State carried from one block to the next.
struct Carry {
  std::uint64_t inString = 0;  // all ones when the previous block ended inside a string
  std::uint64_t escaped = 0;   // 1 when the previous block ended with an escaping backslash
  std::uint64_t scalar = 0;    // 1 when the previous block ended inside a scalar run
  std::uint64_t error = 0;     // a control byte inside a string was seen
  // UTF-8 validation (the AVX-512 tier only): the previous block's 64 bytes (zeros before the
  // first), whether a sequence was left open at its end, and the ill-formed bytes seen so far.
  const unsigned char* previous = kZeroBlock;
  std::uint64_t utf8Open = 0;
  std::uint64_t utf8Error = 0;
  static constexpr unsigned char kZeroBlock[64] = {};
};

/// The bytes escaped by a backslash: each backslash not itself escaped escapes the next byte.
/// Backslashes are rare; the loop runs once per escaping backslash.
[[gnu::always_inline]] inline std::uint64_t escapedBytes(std::uint64_t backslash,
                                                         std::uint64_t& carry) noexcept {
  std::uint64_t escaped = carry;
  carry = 0;
  std::uint64_t b = backslash & ~escaped;
  while (b != 0) {
    const std::uint64_t bit = b & (0 - b);
    const std::uint64_t next = bit << 1;  // 0 for bit 63: the escape continues in the next block
    if (next == 0) carry = 1;
    escaped |= next;
    b &= ~(bit | next);
  }
  return escaped;
}

/// Writes the positions of s's bits (base + bit index) at out; returns the new end. Writes up to
/// 16 slots beyond the last position (the caller keeps 64 + 16 free).
[[gnu::always_inline]] inline std::uint32_t* flatten(std::uint32_t* out, std::uint32_t base,
                                                     std::uint64_t s) noexcept {
  if (s == 0) return out;
  const int count = __builtin_popcountll(s);
  // Lowest set bit of s, defined (and unused) when s is 0: OR-ing bit 63 changes no other answer.
  auto low = [](std::uint64_t x) {
    return static_cast<std::uint32_t>(__builtin_ctzll(x | (std::uint64_t{1} << 63)));
  };
  for (int i = 0; i < 8; ++i) {
    out[i] = base + low(s);
    s &= s - 1;
  }
  if (count > 8) {
    for (int i = 8; i < 16; ++i) {
      out[i] = base + low(s);
      s &= s - 1;
    }
    for (int i = 16; s != 0; ++i) {
      out[i] = base + low(s);
      s &= s - 1;
    }
  }
  return out + count;
}

/// One block's masks (and the prefix XOR of its unescaped quotes, computed by the tier) to its
/// structurals and bits.
[[gnu::always_inline]] inline std::uint64_t structuralsOf(const RawMasks& m, std::uint64_t quote,
                                                          std::uint64_t quotePrefixXor, Carry& c,
                                                          std::uint64_t* bits) noexcept {
  // inString: set from an opening quote through the byte before its closing quote.
  const std::uint64_t inString = quotePrefixXor ^ c.inString;
  c.inString = static_cast<std::uint64_t>(static_cast<std::int64_t>(inString) >> 63);
  c.error |= m.ctrl & inString;
  const std::uint64_t outside = ~inString;  // closing quotes included
  const std::uint64_t scalar = ~(m.op | m.ws | quote) & outside;
  const std::uint64_t scalarStart = scalar & ~((scalar << 1) | c.scalar);
  c.scalar = scalar >> 63;
  bits[kQuoteWord] = quote;
  bits[kSpecialWord] = m.backslash | m.high;
  bits[kBackslashWord] = m.backslash;
  return (m.op & outside) | (quote & inString) | scalarStart;
}

[[gnu::always_inline]] inline std::uint64_t prefixXorPortable(std::uint64_t x) noexcept {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

RawMasks masksPortable(const unsigned char* p) noexcept {
  RawMasks m{};
  for (unsigned i = 0; i < 64; ++i) {
    const unsigned char c = p[i];
    const std::uint64_t bit = std::uint64_t{1} << i;
    if (c == '"') m.quote |= bit;
    if (c == '\\') m.backslash |= bit;
    if (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',') m.op |= bit;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') m.ws |= bit;
    if (c < 0x20) m.ctrl |= bit;
    if (c >= 0x80) m.high |= bit;
  }
  return m;
}

// Positions a block writes at most: 64, plus flatten's 16 slots of slack.
constexpr std::size_t kBlockRoom = 64 + 16;
// The loop checks room once per kRoomStride blocks.
constexpr std::size_t kRoomStride = 16;

/// Makes room for `room` more positions after out (out stays valid: it is returned rebased).
/// Out of line: the growth is rare, and the tiers' flattened loops must not inline it.
[[gnu::noinline]] std::uint32_t* growIndex(std::vector<std::uint32_t>& v, std::uint32_t* out,
                                           std::size_t room) {
  const auto used = static_cast<std::size_t>(out - v.data());
  if (v.size() - used < room) v.resize(std::max<std::size_t>(v.size() * 2, used + room + 1024));
  return v.data() + used;
}

/// The last, partial block, padded with spaces (whitespace: never structural).
inline const unsigned char* paddedTail(const char* p, std::size_t n, std::size_t offset,
                                       unsigned char (&buf)[64]) noexcept {
  std::memset(buf, ' ', sizeof buf);
  std::memcpy(buf, p + offset, n - offset);
  return buf;
}

/// The loop of every tier: Block classifies the 64 bytes at its first argument (the byte at
/// offset `offset` of the input), records the block's masks in `bits` and its positions at `out`,
/// and returns the new end of the positions.
template <auto Block>
[[gnu::always_inline]] inline bool indexBlocks(const char* p, std::size_t n,
                                               std::vector<std::uint32_t>& structurals,
                                               std::vector<std::uint64_t>& bits) {
  const std::size_t blocks = (n + 63) / 64;
  if (bits.size() < blocks * kWordsPerBlock) bits.resize(blocks * kWordsPerBlock);
  // A guess that fits typical documents (a token every 6 bytes or more); growIndex grows it.
  if (structurals.size() < n / 6 + 2048) structurals.resize(n / 6 + 2048);
  std::uint32_t* out = structurals.data();
  std::uint32_t* limit = structurals.data() + structurals.size() - kRoomStride * kBlockRoom;
  std::uint64_t* b = bits.data();
  Carry c;
  const std::size_t full = n / 64;
  for (std::size_t k = 0; k < full; ++k, b += kWordsPerBlock) {
    if (k % kRoomStride == 0 && out > limit) [[unlikely]] {
      out = growIndex(structurals, out, kRoomStride * kBlockRoom);
      limit = structurals.data() + structurals.size() - kRoomStride * kBlockRoom;
    }
    out = Block(reinterpret_cast<const unsigned char*>(p) + k * 64,
                static_cast<std::uint32_t>(k * 64), c, b, out);
  }
  if (full != blocks) {
    unsigned char tail[64];
    out = growIndex(structurals, out, kBlockRoom);
    out =
        Block(paddedTail(p, n, full * 64, tail), static_cast<std::uint32_t>(full * 64), c, b, out);
  }
  out = growIndex(structurals, out, 1);
  *out = static_cast<std::uint32_t>(n);  // the sentinel
  return c.inString == 0 && c.error == 0 && c.utf8Error == 0 && c.utf8Open == 0;
}

inline std::uint32_t* blockPortable(const unsigned char* block, std::uint32_t offset, Carry& c,
                                    std::uint64_t* bits, std::uint32_t* out) noexcept {
  const RawMasks m = masksPortable(block);
  const std::uint64_t quote = m.quote & ~escapedBytes(m.backslash, c.escaped);
  const std::uint64_t s =
      structuralsOf(m, quote, quote != 0 ? prefixXorPortable(quote) : 0, c, bits);
  return flatten(out, offset, s);
}

bool indexPortable(const char* p, std::size_t n, std::vector<std::uint32_t>& structurals,
                   std::vector<std::uint64_t>& bits) {
  return indexBlocks<blockPortable>(p, n, structurals, bits);
}

#if defined(__x86_64__)

#define NETBUF_JSON_AVX2 __attribute__((target("avx2,bmi,bmi2,popcnt,pclmul")))
// The AVX-512 tier runs where utf8::activeIsa() is Avx512, which implies every feature of
// NETBUF_UTF8_AVX512_TARGET (the UTF-8 block validator it inlines).
#define NETBUF_JSON_AVX512                                                            \
  __attribute__((                                                                     \
      target("avx512f,avx512bw,avx512vl,avx512vbmi,avx512vbmi2,avx2,bmi,bmi2,popcnt," \
             "lzcnt,pclmul")))

NETBUF_JSON_AVX2 inline std::uint64_t prefixXorClmul(std::uint64_t x) noexcept {
  const __m128i r = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<long long>(x)),
                                         _mm_set1_epi8(static_cast<char>(0xFF)), 0);
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(r));
}

// (Helpers rather than lambdas: a lambda does not inherit its function's target attribute.)
NETBUF_JSON_AVX2 inline std::uint64_t bits2(__m256i lo, __m256i hi) noexcept {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm256_movemask_epi8(lo))) |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm256_movemask_epi8(hi))) << 32;
}
NETBUF_JSON_AVX2 inline std::uint64_t eq2(__m256i lo, __m256i hi, char ch) noexcept {
  const __m256i c = _mm256_set1_epi8(ch);
  return bits2(_mm256_cmpeq_epi8(lo, c), _mm256_cmpeq_epi8(hi, c));
}

NETBUF_JSON_AVX2 inline RawMasks masksAvx2(const unsigned char* p) noexcept {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  // '[' | 0x20 == '{' and ']' | 0x20 == '}', and no other byte maps onto either.
  const __m256i x20 = _mm256_set1_epi8(0x20);
  const __m256i lo20 = _mm256_or_si256(lo, x20);
  const __m256i hi20 = _mm256_or_si256(hi, x20);
  const __m256i x1f = _mm256_set1_epi8(0x1F);
  RawMasks m;
  m.quote = eq2(lo, hi, '"');
  m.backslash = eq2(lo, hi, '\\');
  m.op = eq2(lo20, hi20, '{') | eq2(lo20, hi20, '}') | eq2(lo, hi, ':') | eq2(lo, hi, ',');
  m.ws = eq2(lo, hi, ' ') | eq2(lo, hi, '\t') | eq2(lo, hi, '\n') | eq2(lo, hi, '\r');
  m.ctrl = bits2(_mm256_cmpeq_epi8(_mm256_min_epu8(lo, x1f), lo),
                 _mm256_cmpeq_epi8(_mm256_min_epu8(hi, x1f), hi));
  m.high = bits2(lo, hi);
  return m;
}

NETBUF_JSON_AVX2 inline std::uint32_t* blockAvx2(const unsigned char* block, std::uint32_t offset,
                                                 Carry& c, std::uint64_t* bits,
                                                 std::uint32_t* out) noexcept {
  const RawMasks m = masksAvx2(block);
  const std::uint64_t quote = m.quote & ~escapedBytes(m.backslash, c.escaped);
  const std::uint64_t s = structuralsOf(m, quote, quote != 0 ? prefixXorClmul(quote) : 0, c, bits);
  return flatten(out, offset, s);
}

// flatten: the loop and blockAvx2 are compiled into this AVX2 body (the loop itself carries no
// target attribute, so it could not inline the block function on its own).
NETBUF_JSON_AVX2 __attribute__((flatten)) bool indexAvx2(const char* p, std::size_t n,
                                                         std::vector<std::uint32_t>& structurals,
                                                         std::vector<std::uint64_t>& bits) {
  return indexBlocks<blockAvx2>(p, n, structurals, bits);
}

NETBUF_JSON_AVX512 inline std::uint64_t eq64(__m512i v, char ch) noexcept {
  return static_cast<std::uint64_t>(_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(ch)));
}

/// flatten() with AVX-512: one byte compress (VBMI2) packs the offsets of s's bits, in order, into
/// the low bytes of a register; each 16 of them are widened to 32 bits, added to base and stored
/// (most blocks have at most 16 tokens: one store). No branch per bit, no dependency chain through
/// the mask. Writes up to 16 slots beyond the last position.
NETBUF_JSON_AVX512 inline std::uint32_t* flattenAvx512(std::uint32_t* out, std::uint32_t base,
                                                       std::uint64_t s) noexcept {
  if (s == 0) return out;
  alignas(64) static constexpr std::uint8_t kIota[64] = {
      0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
      22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
      44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
  const unsigned count = static_cast<unsigned>(__builtin_popcountll(s));
  const __m512i offsets = _mm512_maskz_compress_epi8(s, _mm512_load_si512(kIota));
  const __m512i baseV = _mm512_set1_epi32(static_cast<int>(base));
  _mm512_storeu_si512(
      out, _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_castsi512_si128(offsets)), baseV));
  if (count > 16) [[unlikely]] {
    _mm512_storeu_si512(
        out + 16,
        _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(offsets, 1)), baseV));
    if (count > 32) {
      _mm512_storeu_si512(
          out + 32,
          _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(offsets, 2)), baseV));
      if (count > 48) {
        _mm512_storeu_si512(
            out + 48,
            _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(offsets, 3)), baseV));
      }
    }
  }
  return out + count;
}

/// UTF-8 validation of the block v (at `block`) after c.previous: a block of ASCII is ill-formed
/// only after an open sequence.
NETBUF_JSON_AVX512 inline void validateUtf8Block(__m512i v, const unsigned char* block,
                                                 std::uint64_t high, Carry& c) noexcept {
  if (high == 0) {
    c.utf8Error |= c.utf8Open;
    c.utf8Open = 0;
  } else {
    // (Six loads of constant tables, from L1, on blocks with non-ASCII bytes only.)
    const utf8::detail::avx512::Validator validator = utf8::detail::avx512::makeValidator();
    c.utf8Error |= utf8::detail::avx512::blockErrors(validator, v, _mm512_loadu_si512(c.previous));
    c.utf8Open = utf8::detail::avx512::openAtEnd(validator, v) ? 1 : 0;
  }
  c.previous = block;
}

NETBUF_JSON_AVX512 inline std::uint32_t* blockAvx512(const unsigned char* block,
                                                     std::uint32_t offset, Carry& c,
                                                     std::uint64_t* bits,
                                                     std::uint32_t* out) noexcept {
  const __m512i v = _mm512_loadu_si512(block);
  const std::uint64_t quoteRaw = eq64(v, '"');
  const std::uint64_t backslash = eq64(v, '\\');
  const std::uint64_t ctrl = _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20));
  const std::uint64_t high = _mm512_movepi8_mask(v);
  validateUtf8Block(v, block, high, c);
  if ((quoteRaw | backslash) == 0 && c.inString != 0) {
    // Wholly inside a string that does not end here (long strings): only control bytes matter.
    c.error |= ctrl;
    c.escaped = 0;
    c.scalar = 0;
    bits[kQuoteWord] = 0;
    bits[kSpecialWord] = high;
    bits[kBackslashWord] = 0;
    return out;
  }
  // Structural characters and whitespace by nibble lookup (two shuffles instead of eight
  // compares; shuffles and compares both run on one port). Each class bit names one group of
  // characters that share their high nibbles' and low nibbles' sets, so that the AND of the two
  // lookups has a bit only for the exact characters:
  //   1 ','  (2, C)    2 ':'  (3, A)    4 '[' '{'  (5 7, B)    8 ']' '}'  (5 7, D)
  //   16 ' ' (2, 0)    32 '\t' '\n' '\r'  (0, 9 A D)
  // Bytes from 0x80 up look up high nibbles 8-F, all 0.
#define NETBUF_LO 16, 0, 0, 0, 0, 0, 0, 0, 0, 32, 2 | 32, 4, 1, 8 | 32, 0, 0
#define NETBUF_HI 32, 0, 1 | 16, 2, 0, 4 | 8, 0, 4 | 8, 0, 0, 0, 0, 0, 0, 0, 0
  alignas(64) static constexpr std::uint8_t kLo[64] = {NETBUF_LO, NETBUF_LO, NETBUF_LO, NETBUF_LO};
  alignas(64) static constexpr std::uint8_t kHi[64] = {NETBUF_HI, NETBUF_HI, NETBUF_HI, NETBUF_HI};
#undef NETBUF_LO
#undef NETBUF_HI
  const __m512i loTable = _mm512_load_si512(kLo);
  const __m512i hiTable = _mm512_load_si512(kHi);
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i cls = _mm512_and_si512(
      _mm512_shuffle_epi8(loTable, _mm512_and_si512(v, nibble)),
      _mm512_shuffle_epi8(hiTable, _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble)));
  RawMasks m;
  m.quote = quoteRaw;
  m.backslash = backslash;
  m.op = _mm512_test_epi8_mask(cls, _mm512_set1_epi8(1 | 2 | 4 | 8));
  m.ws = _mm512_test_epi8_mask(cls, _mm512_set1_epi8(16 | 32));
  m.ctrl = ctrl;
  m.high = high;
  const std::uint64_t quote = m.quote & ~escapedBytes(m.backslash, c.escaped);
  const std::uint64_t s = structuralsOf(m, quote, quote != 0 ? prefixXorClmul(quote) : 0, c, bits);
  return flattenAvx512(out, offset, s);
}

NETBUF_JSON_AVX512 __attribute__((flatten)) bool indexAvx512(
    const char* p, std::size_t n, std::vector<std::uint32_t>& structurals,
    std::vector<std::uint64_t>& bits) {
  return indexBlocks<blockAvx512>(p, n, structurals, bits);
}

bool hasClmul() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("bmi") &&
           __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
  }();
  return yes;
}

#endif

}  // namespace

bool indexJson(const char* p, std::size_t n, std::vector<std::uint32_t>& structurals,
               std::vector<std::uint64_t>& bits, bool& utf8Validated) {
  utf8Validated = false;
#if defined(__x86_64__)
  // The tier the text kernels use now (utf8::forceIsa pins it for tests), when this CPU also has
  // the carry-less multiply.
  switch (utf8::activeIsa()) {
    case utf8::Isa::Avx512:
      if (hasClmul()) {
        utf8Validated = indexAvx512(p, n, structurals, bits);
        return utf8Validated;
      }
      break;
    case utf8::Isa::Avx2:
      if (hasClmul()) return indexAvx2(p, n, structurals, bits);
      break;
    default:
      break;
  }
#endif
  return indexPortable(p, n, structurals, bits);
}

}  // namespace netbuf::detail
