// The AVX-512 tier, selected at run time when CPUID reports AVX-512 F/BW/VL/VBMI/VBMI2 (and the OS
// saves the ZMM state). Like utf8_avx2.cpp, the library is built without -mavx512*: every function
// carries a target attribute and is reached only through the dispatch table.
//
// What AVX-512 buys here (techniques from the literature, implemented from scratch):
//  * Masked loads and stores do not fault on masked-off lanes, so a tail (and a whole short string)
//    runs through the same vector code as a full block instead of a scalar loop.
//  * vpcompressb / vpcompressw (VBMI2) squeeze the bytes or units to keep out of a register in one
//    instruction, so UTF-16 -> UTF-8 needs no shuffle tables: every unit is widened to a lane that
//    holds all its candidate bytes, and the keep-mask says which of them are real.
//  * UTF-8 -> UTF-16 decodes whole 64-byte windows: each byte position computes the value it would
//    have as a 1-, 2- or 3-byte lead, and vpcompressw keeps the positions that really are leads.
//  * Validation is the Keiser-Lemire lookup method on 64 bytes at a time, with a 256-byte
//    ASCII-only fast path (one OR-reduction and one test per 256 bytes).
// Surrogate pairs and 4-byte sequences take a short scalar detour (one code point), then the vector
// loop resumes right after it.

#if defined(__x86_64__)

// (<immintrin.h> comes through the validator's header, with the pragmas GCC 12 needs around it.)
#include <netbuf/buffer/detail/utf8_validate_avx512.hpp>

#include <algorithm>
#include <array>

#include "utf8_internal.hpp"

#define NETBUF_AVX512 NETBUF_UTF8_AVX512_TARGET

namespace netbuf::utf8::detail {
namespace {

using Mask64 = std::uint64_t;
using Mask32 = std::uint32_t;

constexpr Mask64 lowBits64(std::size_t k) noexcept {
  return k >= 64 ? ~Mask64{0} : (Mask64{1} << k) - 1;
}
constexpr Mask32 lowBits32(std::size_t k) noexcept {
  return k >= 32 ? ~Mask32{0} : (Mask32{1} << k) - 1;
}
inline unsigned popcount64(Mask64 m) noexcept {
  return static_cast<unsigned>(__builtin_popcountll(m));
}
inline unsigned popcount32(Mask32 m) noexcept {
  return static_cast<unsigned>(__builtin_popcount(m));
}
inline unsigned ctz64(Mask64 m) noexcept { return static_cast<unsigned>(__builtin_ctzll(m)); }

NETBUF_AVX512 inline __m512i load(const void* p) noexcept { return _mm512_loadu_si512(p); }
NETBUF_AVX512 inline void store(void* p, __m512i v) noexcept { _mm512_storeu_si512(p, v); }

/// Bytes from p to the end of its 4 KiB page.
inline std::size_t toPageEnd(const void* p) noexcept {
  return 4096 - (reinterpret_cast<std::uintptr_t>(p) & 4095);
}

/// Stores the first `count` bytes of v at d when [d, d + 64) crosses a 4 KiB page boundary: a
/// masked store for the bytes on each page, so that no store straddles the boundary.
///
/// Why: the compacting encoders below store a full 64-byte vector and advance d by the 20-50 bytes
/// that are real, so every output byte near a page boundary is covered by one or two 64-byte
/// stores that straddle it. A page-split store is expensive on its own, and on AMD Zen 4/5 the
/// split stores of one call also stall the split loads of the next call's input when the two
/// 4K-alias. A benchmark that writes into one fixed destination whose first 256 bytes straddle a
/// page boundary (utf8_bench's did, by heap layout) pays that on every call: 60-70 ns for Netty's
/// 128-unit string instead of about 25 ns. Real writers cross a page once per 4 KiB of output.
NETBUF_AVX512 inline void storeAcrossPage(u8* d, __m512i v, unsigned count,
                                          std::ptrdiff_t space) noexcept {
  // Both stores are 64-byte aligned (no page split, even with masked-off lanes: AMD cores charge
  // the split for the whole 64-byte range a masked store covers).
  const unsigned head = static_cast<unsigned>(toPageEnd(d));  // 1..63 here
  u8* const page = d + head;
  const __m512i iota = _mm512_set_epi8(
      63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41,
      40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
      17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  // Byte 64 - head + k of the line before the boundary is byte k of v (the lanes below are kept).
  const unsigned first = count < head ? count : head;
  const __m512i low = _mm512_permutexvar_epi8(
      _mm512_sub_epi8(iota, _mm512_set1_epi8(static_cast<char>(64 - head))), v);
  _mm512_mask_storeu_epi8(page - 64, lowBits64(first) << (64 - head), low);
  if (count <= head) return;
  // Byte k after the boundary is byte head + k of v.
  const __m512i high =
      _mm512_permutexvar_epi8(_mm512_add_epi8(iota, _mm512_set1_epi8(static_cast<char>(head))), v);
  if (space - static_cast<std::ptrdiff_t>(head) >= 64)  // the bound past page holds 64 bytes
    store(page, high);
  else
    _mm512_mask_storeu_epi8(page, lowBits64(count - head), high);
}

/// Stores the first `count` bytes of v at d, where `space` bytes from d are inside the destination
/// bound. Masked stores are markedly slower than plain ones on current cores, so a full 64-byte
/// store is used whenever the bound leaves room for it (the bytes past `count` are scratch,
/// overwritten by the next store or never made visible), except where the 64 bytes would straddle a
/// page boundary (see storeAcrossPage).
NETBUF_AVX512 inline void storeFirst(u8* d, __m512i v, unsigned count,
                                     std::ptrdiff_t space) noexcept {
  if (toPageEnd(d) < 64) [[unlikely]]
    storeAcrossPage(d, v, count, space);
  else if (space >= 64)
    store(d, v);
  else
    _mm512_mask_storeu_epi8(d, lowBits64(count), v);
}

// ---------------------------------------------------------------- UTF-16 -> UTF-8

/// vpermt2b indices: 32-bit lane j of half h gathers [lead byte of unit 16h+j (first table),
/// low and high byte of its tail word (second table), unused].
struct Layout3 {
  alignas(64) u8 idx[2][64];
  constexpr Layout3() : idx{} {
    for (int half = 0; half < 2; ++half)
      for (int j = 0; j < 16; ++j) {
        const int unit = 16 * half + j;
        idx[half][4 * j] = static_cast<u8>(2 * unit);
        idx[half][4 * j + 1] = static_cast<u8>(64 + 2 * unit);
        idx[half][4 * j + 2] = static_cast<u8>(64 + 2 * unit + 1);
        idx[half][4 * j + 3] = 0;
      }
  }
};
constexpr Layout3 kLayout3{};

/// True when a block's stores (at most 112 bytes from d) stay inside the bound and d's page.
inline bool roomyAt(const u8* d, const u8* dEnd) noexcept {
  return dEnd - d >= 112 && toPageEnd(d) >= 112;
}
/// The last address from which roomyAt holds on d's page (an integer: it may lie before d). The
/// block loop compares against it instead of testing both conditions per block. (No wrap-around:
/// dEnd and the page end are user-space addresses far above 112 and far below the top.)
inline std::uintptr_t roomyLimit(const u8* d, const u8* dEnd) noexcept {
  const auto at = reinterpret_cast<std::uintptr_t>(d);
  return std::min((at | 4095) + 1, reinterpret_cast<std::uintptr_t>(dEnd)) - 112;
}

/// The UTF-16 encoder's constants. When 64 or more units are left at the first step that is not
/// all ASCII (Pin) they are made once per call from one table and pinned in registers: left to
/// itself, GCC 12 rebuilds every one of them (a move and a broadcast) in every block of the loop.
/// For fewer (not Pin) the splats are immediates, built where used and only if used, which is
/// faster than making all fourteen up front for such short inputs.
struct U16Consts {
  __m512i highFive, surrogateBase, ascii, twoByte, lead3, cont2, cont3, sixBits, sixBitsHigh,
      oneInWord, oneInLane, pack, layout0, layout1;
};

struct U16Table {
  alignas(64) std::uint16_t splat[10][32];
  alignas(64) std::uint32_t oneInLane[16];
  alignas(64) std::uint64_t pack[8];
  constexpr U16Table() : splat{}, oneInLane{}, pack{0, 2, 4, 6, 1, 3, 5, 7} {
    constexpr std::uint16_t values[10] = {0xF800, 0xD800, 0x80, 0x800,  0xE0,
                                          0x80C0, 0x8080, 0x3F, 0x3F00, 0x0001};
    for (int c = 0; c < 10; ++c)
      for (int j = 0; j < 32; ++j) splat[c][j] = values[c];
    for (auto& lane : oneInLane) lane = 0x100;
  }
};
constexpr U16Table kU16Table{};

/// The units of v among `live` that are surrogates (0xD800..0xDFFF: top five bits 11011), given
/// the splats of 0xF800 and 0xD800.
NETBUF_AVX512 inline Mask32 surrogateUnits(__m512i v, Mask32 live, __m512i highFive,
                                           __m512i surrogateBase) noexcept {
  return _mm512_mask_cmpeq_epi16_mask(live, _mm512_and_si512(v, highFive), surrogateBase);
}

/// Hides v's value from the optimiser, so that it is kept in a register rather than rebuilt.
NETBUF_AVX512 inline __m512i pinned(__m512i v) noexcept {
  asm("" : "+v"(v));
  return v;
}

template <bool Pin = true>
NETBUF_AVX512 inline U16Consts makeU16Consts() noexcept {
  const auto& t = kU16Table;
  if constexpr (!Pin) {
    // Splats from immediates: the compiler makes each where it is used, and only those used.
    return {_mm512_set1_epi16(-2048 /* 0xF800 */),
            _mm512_set1_epi16(-10240 /* 0xD800 */),
            _mm512_set1_epi16(0x80),
            _mm512_set1_epi16(0x800),
            _mm512_set1_epi16(0xE0),
            _mm512_set1_epi16(-32576 /* 0x80C0 */),
            _mm512_set1_epi16(-32640 /* 0x8080 */),
            _mm512_set1_epi16(0x3F),
            _mm512_set1_epi16(0x3F00),
            _mm512_set1_epi16(1),
            _mm512_set1_epi32(0x100),
            load(t.pack),
            load(kLayout3.idx[0]),
            load(kLayout3.idx[1])};
  } else {
    return {pinned(load(t.splat[0])),      pinned(load(t.splat[1])),     pinned(load(t.splat[2])),
            pinned(load(t.splat[3])),      pinned(load(t.splat[4])),     pinned(load(t.splat[5])),
            pinned(load(t.splat[6])),      pinned(load(t.splat[7])),     pinned(load(t.splat[8])),
            pinned(load(t.splat[9])),      pinned(load(t.oneInLane)),    pinned(load(t.pack)),
            pinned(load(kLayout3.idx[0])), pinned(load(kLayout3.idx[1]))};
  }
}

/// encode32's 3-byte path for the 16 units of half h (lanes: the live ones among them): vpermt2b
/// lays each out as a 32-bit lane [lead, w0, w1, 0], vpcompressb keeps its real bytes. Returns
/// them packed at the start of the vector and their number in `count`.
NETBUF_AVX512 __attribute__((always_inline)) inline __m512i encodeHalf3(const U16Consts& k,
                                                                        __m512i lead3,
                                                                        __m512i words, int h,
                                                                        Mask32 lanes,
                                                                        unsigned& count) noexcept {
  const __m512i bytes = _mm512_maskz_permutex2var_epi8(0x7777777777777777ull, lead3,
                                                       h == 0 ? k.layout0 : k.layout1, words);
  // Kept bytes are exactly the non-zero ones, plus w0 of every lane (an ASCII NUL).
  const __m512i marks = _mm512_or_si512(bytes, k.oneInLane);
  Mask64 keep = _mm512_test_epi8_mask(marks, marks);
  if (lanes != 0xFFFF) keep &= _pdep_u64(lanes, 0x1111111111111111ull) * 15;
  count = popcount64(keep);
  return _mm512_maskz_compress_epi8(keep, bytes);
}

/// Encodes the units of `v` selected by `live` (32 units, none a surrogate; `ascii` marks those
/// below 0x80) to d; returns the new end. Stores may write scratch bytes past the new end, never
/// past dEnd: when `roomy` (the block's at most 112 bytes of stores fit the bound and d's page:
/// roomyAt) they are plain 64-byte stores, otherwise storeFirst's.
// Always inlined: an out-of-line copy would take the constants through memory, and every call
// would store all of them to the stack first.
NETBUF_AVX512 __attribute__((always_inline)) inline u8* encode32(const U16Consts& k, __m512i v,
                                                                 Mask32 ascii, Mask32 live, u8* d,
                                                                 const u8* dEnd,
                                                                 bool roomy) noexcept {
  if ((ascii & live) == live) {
    if (live == ~Mask32{0})
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(d),
          _mm512_castsi512_si256(_mm512_permutexvar_epi64(k.pack, _mm512_packus_epi16(v, v))));
    else
      _mm256_mask_storeu_epi8(d, live, _mm512_cvtepi16_epi8(v));
    return d + popcount32(live);
  }
  const Mask32 below800 = _mm512_cmplt_epu16_mask(v, k.twoByte);
  // The last byte of a 2-byte unit in the high half of a word, C0 in the low half: (a & b) | c.
  const __m512i tail2 =
      _mm512_ternarylogic_epi32(_mm512_slli_epi16(v, 8), k.sixBitsHigh, k.cont2, 0xEA);
  if ((below800 & live) == live) {
    // One or two bytes per unit, as a little-endian word: [lead 110xxxxx | cont 10xxxxxx]
    // (v < 0x800 keeps v >> 6 within the lead's five bits).
    const __m512i words =
        _mm512_mask_blend_epi16(ascii, _mm512_or_si512(_mm512_srli_epi16(v, 6), tail2), v);
    // Every byte of a 2-byte unit is non-zero; an ASCII unit keeps its low byte only (which may be
    // NUL, hence the forced 1 in the copy that is tested).
    const __m512i marks = _mm512_or_si512(words, k.oneInWord);
    Mask64 keep = _mm512_test_epi8_mask(marks, marks);
    if (live != ~Mask32{0}) keep &= _pdep_u64(live, 0x5555555555555555ull) * 3;
    const __m512i packed = _mm512_maskz_compress_epi8(keep, words);
    const unsigned count = popcount64(keep);
    if (roomy)
      store(d, packed);
    else
      storeFirst(d, packed, count, dEnd - d);
    return d + count;
  }
  // Up to three bytes per unit. Computed on all 32 units at once as a lead byte (3-byte units
  // only, else 0) and a little-endian word holding the last one or two bytes; then one vpermt2b
  // per 16 units lays them out as 32-bit lanes [lead, w0, w1, 0] for vpcompressb.
  const Mask32 three = ~below800;
  const __m512i lead3 =
      _mm512_maskz_mov_epi16(three, _mm512_or_si512(_mm512_srli_epi16(v, 12), k.lead3));
  const __m512i tail3 =
      _mm512_ternarylogic_epi32(_mm512_slli_epi16(v, 8), k.sixBitsHigh, k.cont3, 0xEA);
  // [ (v >> 6) & 3F | C0-or-80 , v & 3F | 80 ]
  const __m512i tail = _mm512_ternarylogic_epi32(_mm512_srli_epi16(v, 6), k.sixBits,
                                                 _mm512_mask_mov_epi16(tail2, three, tail3), 0xEA);
  const __m512i words = _mm512_mask_mov_epi16(tail, ascii, v);
  unsigned count0 = 0;
  const __m512i packed0 = encodeHalf3(k, lead3, words, 0, live & 0xFFFF, count0);
  if ((live >> 16) == 0) {  // a short partial block: no second half
    storeFirst(d, packed0, count0, dEnd - d);
    return d + count0;
  }
  unsigned count1 = 0;
  const __m512i packed1 = encodeHalf3(k, lead3, words, 1, live >> 16, count1);
  if (roomy) {
    store(d, packed0);
    store(d + count0, packed1);
  } else {
    storeFirst(d, packed0, count0, dEnd - d);
    storeFirst(d + count0, packed1, count1, dEnd - (d + count0));
  }
  return d + count0 + count1;
}

/// Loads the 32 units at s when they cross a 4 KiB page boundary, as two masked loads that each
/// stay within their page, joined by one permute. On this AMD CPU a load that straddles a page
/// cost about 7 ns more per call for Netty's 128-unit string (several times a plain load, more
/// when it 4K-aliases recent stores); this way, about 1 ns. About 1 in 16 heap strings of 256
/// bytes straddles a page.
NETBUF_AVX512 inline __m512i loadAcrossPage(const char16_t* s) noexcept {
  // Units before the boundary: 1..31 (a char16_t is 2-byte aligned, and s + 32 crosses).
  const std::size_t head = toPageEnd(s) / 2;
  const char16_t* page = s + head;
  const Mask32 afterLanes = lowBits32(32 - head);
  const __m512i before = _mm512_maskz_loadu_epi16(~afterLanes, page - 32);  // lanes 32 - head..
  const __m512i after = _mm512_maskz_loadu_epi16(afterLanes, page);         // lanes ..31 - head
  const __m512i iota = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17,
                                        16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  return _mm512_permutex2var_epi16(
      before, _mm512_add_epi16(iota, _mm512_set1_epi16(static_cast<short>(32 - head))), after);
}

/// The 32 units at s (all inside the input), split into two loads if they cross a page.
NETBUF_AVX512 inline __m512i loadUnits(const char16_t* s) noexcept {
  return toPageEnd(s) < 64 ? loadAcrossPage(s) : load(s);
}

/// The 64 units at s (all inside the input) as two blocks; one page check for both.
NETBUF_AVX512 inline void loadTwoBlocks(const char16_t* s, __m512i& a, __m512i& b) noexcept {
  if (toPageEnd(s) >= 128) [[likely]] {
    a = load(s);
    b = load(s + 32);
  } else {
    a = loadUnits(s);
    b = loadUnits(s + 32);
  }
}

/// encodeUtf8U16 from unit i on, where d = dst + the bytes written for the units before i. Pin:
/// keep every constant in a register (chosen when 64 or more units are left).
template <bool Pin>
NETBUF_AVX512 std::size_t encodeUtf8U16From(const char16_t* s, std::size_t n, std::size_t i,
                                            u8* dst, u8* d) noexcept {
  const U16Consts k = makeU16Consts<Pin>();
  const u8* const dEnd = dst + 3 * n;
  std::uintptr_t roomyUntil = roomyLimit(d, dEnd);
  for (;;) {
    // Mixed text, 32 units per step, until a surrogate, the tail, or an ASCII block. Full blocks
    // advance i by a constant (a popcount of a mask derived from i would put the mask arithmetic
    // on the loop-carried path).
    Mask32 surrogate = 0;
    __m512i v;
    while (i + 32 <= n) {
      v = loadUnits(s + i);
      surrogate = _mm512_cmpeq_epi16_mask(_mm512_and_si512(v, k.highFive), k.surrogateBase);
      if (surrogate != 0) break;
      const Mask32 ascii = _mm512_cmplt_epu16_mask(v, k.ascii);
      i += 32;
      if (reinterpret_cast<std::uintptr_t>(d) > roomyUntil) roomyUntil = roomyLimit(d, dEnd);
      d = encode32(k, v, ascii, ~Mask32{0}, d, dEnd,
                   reinterpret_cast<std::uintptr_t>(d) <= roomyUntil);
      if (ascii == ~Mask32{0}) break;
    }
    if (i >= n) break;
    if (surrogate == 0) {
      if (i + 32 <= n) {
        // After an ASCII block: ASCII runs, 64 units per step.
        while (i + 64 <= n) {
          __m512i a, b;
          loadTwoBlocks(s + i, a, b);
          if (_mm512_cmpge_epu16_mask(_mm512_or_si512(a, b), k.ascii) != 0) break;
          store(d, _mm512_permutexvar_epi64(k.pack, _mm512_packus_epi16(a, b)));
          d += 64;
          i += 64;
        }
        continue;
      }
      // The tail (masked; runs once unless it holds a surrogate).
      const Mask32 live = lowBits32(n - i);
      v = _mm512_maskz_loadu_epi16(live, s + i);
      surrogate = surrogateUnits(v, live, k.highFive, k.surrogateBase);
      if (surrogate == 0) {
        d = encode32(k, v, _mm512_cmplt_epu16_mask(v, k.ascii), live, d, dEnd, roomyAt(d, dEnd));
        break;
      }
    }
    // Vector up to the first surrogate, then the scalar step for that one unit (or pair).
    const unsigned first = static_cast<unsigned>(__builtin_ctz(surrogate));
    if (first != 0)
      d = encode32(k, v, _mm512_cmplt_epu16_mask(v, k.ascii), lowBits32(first), d, dEnd,
                   roomyAt(d, dEnd));
    std::size_t j = i + first;
    u8* e = d;
    encodeU16Step(s, j, j + 1, n, e);
    i = j;
    d = e;
  }
  return static_cast<std::size_t>(d - dst);
}

NETBUF_AVX512 std::size_t encodeUtf8U16(const char16_t* s, std::size_t n, u8* dst) noexcept {
  if (n <= 32) {
    // One block without surrogates: straight-line code, only the constants it needs. (With a
    // surrogate: the general loop with unpinned constants.)
    const Mask32 live = lowBits32(n);
    const __m512i v = _mm512_maskz_loadu_epi16(live, s);
    const U16Consts k = makeU16Consts<false>();
    if (surrogateUnits(v, live, k.highFive, k.surrogateBase) == 0)
      return static_cast<std::size_t>(
          encode32(k, v, _mm512_cmplt_epu16_mask(v, k.ascii), live, dst, dst + 3 * n, false) - dst);
    return encodeUtf8U16From<false>(s, n, 0, dst, dst);
  }
  // Leading ASCII, 64 units per step (the last one masked), before the general loop sets up its
  // constants: an ASCII string, the most common input, pays for nothing else. The general loop
  // starts at the first step that is not all ASCII.
  const __m512i ascii = _mm512_set1_epi16(0x80);
  const __m512i pack = load(kU16Table.pack);
  std::size_t i = 0;
  while (i + 64 <= n) {
    __m512i a, b;
    loadTwoBlocks(s + i, a, b);
    if (_mm512_cmpge_epu16_mask(_mm512_or_si512(a, b), ascii) != 0)
      return encodeUtf8U16From<true>(s, n, i, dst, dst + i);
    store(dst + i, _mm512_permutexvar_epi64(pack, _mm512_packus_epi16(a, b)));
    i += 64;
  }
  if (i == n) return n;
  // Fewer than 64 units left: one masked step.
  const __m512i a = _mm512_maskz_loadu_epi16(lowBits32(n - i), s + i);
  const __m512i b = n - i > 32 ? _mm512_maskz_loadu_epi16(lowBits32(n - i - 32), s + i + 32)
                               : _mm512_setzero_si512();
  if (_mm512_cmpge_epu16_mask(_mm512_or_si512(a, b), ascii) == 0) {
    storeFirst(dst + i, _mm512_permutexvar_epi64(pack, _mm512_packus_epi16(a, b)),
               static_cast<unsigned>(n - i), static_cast<std::ptrdiff_t>(3 * n - i));
    return n;
  }
  // Up to two blocks left: set up only the constants they use.
  return encodeUtf8U16From<false>(s, n, i, dst, dst + i);
}

NETBUF_AVX512 std::size_t utf8BytesU16(const char16_t* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::size_t total = 0;
  const __m512i surrogateHigh5 = _mm512_set1_epi16(-2048);
  const __m512i surrogateBase = _mm512_set1_epi16(-10240);
  while (i < n) {
    const bool full = i + 32 <= n;
    const Mask32 live = full ? ~Mask32{0} : lowBits32(n - i);
    const __m512i v = full ? load(s + i) : _mm512_maskz_loadu_epi16(live, s + i);
    const Mask32 surrogate = surrogateUnits(v, live, surrogateHigh5, surrogateBase);
    if (surrogate == 0 && full) {
      total += 32 + popcount32(_mm512_cmpge_epu16_mask(v, _mm512_set1_epi16(0x80))) +
               popcount32(_mm512_cmpge_epu16_mask(v, _mm512_set1_epi16(0x800)));
      i += 32;
      continue;
    }
    const Mask32 prefix =
        surrogate == 0 ? live : lowBits32(static_cast<unsigned>(__builtin_ctz(surrogate)));
    const Mask32 ge80 = _mm512_mask_cmpge_epu16_mask(prefix, v, _mm512_set1_epi16(0x80));
    const Mask32 ge800 = _mm512_mask_cmpge_epu16_mask(prefix, v, _mm512_set1_epi16(0x800));
    total += popcount32(prefix) + popcount32(ge80) + popcount32(ge800);
    i += popcount32(prefix);
    if (surrogate != 0) total += countU16Step(s, i, i + 1, n);
  }
  return total;
}

// ---------------------------------------------------------------- UTF-32 -> UTF-8

NETBUF_AVX512 std::size_t utf8BytesU32(const char32_t* s, std::size_t n) noexcept {
  std::size_t i = 0;
  std::size_t total = 0;
  const __m512i surrogateHigh = _mm512_set1_epi32(-2048);
  const __m512i surrogateBase = _mm512_set1_epi32(0xD800);
  while (i < n) {
    const bool full = i + 16 <= n;
    const __mmask16 live = full ? __mmask16{0xFFFF} : static_cast<__mmask16>(lowBits32(n - i));
    const __m512i v = full ? load(s + i) : _mm512_maskz_loadu_epi32(live, s + i);
    const __mmask16 invalid = static_cast<__mmask16>(
        _mm512_mask_cmpeq_epi32_mask(live, _mm512_and_si512(v, surrogateHigh), surrogateBase) |
        _mm512_mask_cmpgt_epu32_mask(live, v, _mm512_set1_epi32(0x10FFFF)));
    const unsigned ge80 = _mm512_mask_cmpgt_epu32_mask(live, v, _mm512_set1_epi32(0x7F));
    const unsigned ge800 = _mm512_mask_cmpgt_epu32_mask(live, v, _mm512_set1_epi32(0x7FF));
    const unsigned ge10000 = _mm512_mask_cmpgt_epu32_mask(live, v, _mm512_set1_epi32(0xFFFF));
    const unsigned ok = static_cast<unsigned>(~invalid) & 0xFFFF;
    total += popcount32(live) + popcount32(ge80 & ok) + popcount32(ge800 & ok) +
             popcount32(ge10000 & ok);
    i += full ? 16 : n - i;
  }
  return total;
}

/// Encodes up to 16 code points (all valid, all below U+10000) selected by `lanes`.
NETBUF_AVX512 inline u8* encode16x32(__m512i w, __mmask16 lanes, u8* d, const u8* dEnd) noexcept {
  const __mmask16 a = _mm512_cmplt_epu32_mask(w, _mm512_set1_epi32(0x80));
  if ((a & lanes) == lanes) {
    if (lanes == 0xFFFF)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d),
                       _mm512_castsi512_si128(_mm512_permutexvar_epi8(
                           _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3C383430,
                                            0x2C282420, 0x1C181410, 0x0C080400),
                           w)));
    else
      _mm_mask_storeu_epi8(d, lanes, _mm512_cvtepi32_epi8(w));
    return d + popcount32(lanes);
  }
  const __mmask16 b = _mm512_cmplt_epu32_mask(w, _mm512_set1_epi32(0x800));
  const __m512i t = _mm512_ternarylogic_epi32(_mm512_slli_epi32(w, 2), _mm512_set1_epi32(0x3F00),
                                              _mm512_srli_epi32(w, 12), 0xEA);
  const __m512i u = _mm512_ternarylogic_epi32(_mm512_slli_epi32(w, 16), _mm512_set1_epi32(0x3F0000),
                                              _mm512_set1_epi32(0x8080E0), 0xEA);
  const __m512i three = _mm512_or_si512(t, u);
  const __m512i two =
      _mm512_or_si512(_mm512_srli_epi32(w, 6),
                      _mm512_ternarylogic_epi32(_mm512_slli_epi32(w, 8), _mm512_set1_epi32(0x3F00),
                                                _mm512_set1_epi32(0x80C0), 0xEA));
  __m512i bytes = _mm512_mask_mov_epi32(three, b, two);
  bytes = _mm512_mask_mov_epi32(bytes, a, w);
  const __m512i marks = _mm512_or_si512(bytes, _mm512_set1_epi32(1));
  const Mask64 keep =
      _mm512_test_epi8_mask(marks, marks) & _pdep_u64(lanes, 0x1111111111111111ull) * 15;
  const __m512i packed = _mm512_maskz_compress_epi8(keep, bytes);
  const unsigned count = popcount64(keep);
  storeFirst(d, packed, count, dEnd - d);
  return d + count;
}

NETBUF_AVX512 std::size_t encodeUtf8U32(const char32_t* s, std::size_t n, u8* dst) noexcept {
  std::size_t i = 0;
  u8* d = dst;
  const u8* const dEnd = dst + 4 * n;
  const __m512i surrogateHigh = _mm512_set1_epi32(-2048);
  const __m512i surrogateBase = _mm512_set1_epi32(0xD800);
  while (i < n) {
    const bool full = i + 16 <= n;
    const __mmask16 live = full ? __mmask16{0xFFFF} : static_cast<__mmask16>(lowBits32(n - i));
    const __m512i v = full ? load(s + i) : _mm512_maskz_loadu_epi32(live, s + i);
    // Lanes the vector form cannot take: 4-byte values, surrogates, values above U+10FFFF.
    const unsigned other = static_cast<unsigned>(
        _mm512_mask_cmpgt_epu32_mask(live, v, _mm512_set1_epi32(0xFFFF)) |
        _mm512_mask_cmpeq_epi32_mask(live, _mm512_and_si512(v, surrogateHigh), surrogateBase));
    if (other == 0) {
      if (full) {
        d = encode16x32(v, 0xFFFF, d, dEnd);
        i += 16;
        continue;
      }
      d = encode16x32(v, live, d, dEnd);
      break;
    }
    const unsigned k = static_cast<unsigned>(__builtin_ctz(other));
    if (k != 0) d = encode16x32(v, static_cast<__mmask16>(lowBits32(k)), d, dEnd);
    d = encodeU32One(s[i + k], d);
    i += k + 1;
  }
  return static_cast<std::size_t>(d - dst);
}

// ---------------------------------------------------------------- UTF-8 validation

// The block kernel (Validator, blockErrors, openAtEnd) is shared with the JSON parser's stage 1:
// netbuf/buffer/detail/utf8_validate_avx512.hpp.
using avx512::blockErrors;
using avx512::makeValidator;
using avx512::openAtEnd;
using avx512::Validator;

/// Shared driver of the validating kernels (same protocol as the AVX2 tier's): `block(i, input,
/// len)` for each well-formed block (len < 64 only for the masked final block), `rewind(b, i)` to
/// drop the bytes [b, i) of an open sequence already accepted, `scalar(i, stop)` over ill-formed
/// regions (returns false to stop early).
template <class Policy>
NETBUF_AVX512 inline void validateDriver(const u8* s, std::size_t n, Policy& policy) noexcept {
  const Validator v = makeValidator();
  std::size_t i = 0;
  std::size_t floor = 0;
  __m512i prev = _mm512_setzero_si512();
  bool open = false;  // the previous block ended inside a sequence
  while (i < n) {
    if (!open) {
      // ASCII fast path: 256 bytes per test.
      while (i + 256 <= n) {
        const __m512i a = load(s + i);
        const __m512i b = load(s + i + 64);
        const __m512i c = load(s + i + 128);
        const __m512i e = load(s + i + 192);
        const __m512i any = _mm512_ternarylogic_epi32(_mm512_or_si512(a, b), c, e, 0xFE);
        if (_mm512_movepi8_mask(any) != 0) break;
        policy.ascii4(i, a, b, c, e);
        prev = e;
        i += 256;
      }
      if (i >= n) break;
    }
    const bool full = i + 64 <= n;
    const std::size_t len = full ? 64 : n - i;
    const __m512i input = full ? load(s + i) : _mm512_maskz_loadu_epi8(lowBits64(len), s + i);
    bool ok;
    if (_mm512_movepi8_mask(input) == 0) {
      ok = !open;
      open = false;
    } else {
      // In a short final block the zero padding after an open sequence is itself an error.
      ok = blockErrors(v, input, prev) == 0;
      open = len == 64 && openAtEnd(v, input);
    }
    if (ok) {
      if (full) {
        policy.block(i, input, 64);
        prev = input;
        i += 64;
        continue;
      }
      policy.block(i, input, len);
      i = n;
      break;
    }
    const std::size_t b = backToBoundary(s, i, floor);
    policy.rewind(b, i);
    std::size_t j = b;
    if (!policy.scalar(j, i + len)) return;
    i = floor = j;
    prev = _mm512_setzero_si512();
    open = false;
  }
  if (open) {  // the input ends inside a sequence
    const std::size_t b = backToBoundary(s, n, floor);
    policy.rewind(b, n);
    std::size_t j = b;
    policy.scalar(j, n);
  }
}

struct CopyPolicy {
  const u8* s;
  std::size_t n;
  u8* d;
  NETBUF_AVX512 void ascii4(std::size_t, __m512i a, __m512i b, __m512i c, __m512i e) noexcept {
    store(d, a);
    store(d + 64, b);
    store(d + 128, c);
    store(d + 192, e);
    d += 256;
  }
  NETBUF_AVX512 void block(std::size_t, __m512i input, std::size_t len) noexcept {
    if (len == 64)
      store(d, input);
    else
      _mm512_mask_storeu_epi8(d, lowBits64(len), input);
    d += len;
  }
  void rewind(std::size_t b, std::size_t i) noexcept { d -= i - b; }
  bool scalar(std::size_t& i, std::size_t stop) noexcept {
    copyReplacingStep(s, i, stop, n, d);
    return true;
  }
};

NETBUF_AVX512 std::size_t copyReplacing(const u8* s, std::size_t n, u8* dst) noexcept {
  CopyPolicy p{s, n, dst};
  validateDriver(s, n, p);
  return static_cast<std::size_t>(p.d - dst);
}

struct CountReplacingPolicy {
  const u8* s;
  std::size_t n;
  std::size_t total = 0;
  NETBUF_AVX512 void ascii4(std::size_t, __m512i, __m512i, __m512i, __m512i) noexcept {
    total += 256;
  }
  NETBUF_AVX512 void block(std::size_t, __m512i, std::size_t len) noexcept { total += len; }
  void rewind(std::size_t b, std::size_t i) noexcept { total -= i - b; }
  bool scalar(std::size_t& i, std::size_t stop) noexcept {
    total += countReplacingStep(s, i, stop, n);
    return true;
  }
};

NETBUF_AVX512 std::size_t replacingBytes(const u8* s, std::size_t n) noexcept {
  CountReplacingPolicy p{s, n};
  validateDriver(s, n, p);
  return p.total;
}

struct FirstInvalidPolicy {
  const u8* s;
  std::size_t n;
  std::size_t result = static_cast<std::size_t>(-1);
  NETBUF_AVX512 void ascii4(std::size_t, __m512i, __m512i, __m512i, __m512i) noexcept {}
  NETBUF_AVX512 void block(std::size_t, __m512i, std::size_t) noexcept {}
  void rewind(std::size_t, std::size_t) noexcept {}
  bool scalar(std::size_t& i, std::size_t stop) noexcept {
    result = firstInvalidStep(s, i, stop, n);
    return result == static_cast<std::size_t>(-1);
  }
};

NETBUF_AVX512 std::size_t firstInvalid(const u8* s, std::size_t n) noexcept {
  FirstInvalidPolicy p{s, n};
  validateDriver(s, n, p);
  return p.result;
}

struct Utf16LengthPolicy {
  const u8* s;
  std::size_t n;
  std::size_t total = 0;
  NETBUF_AVX512 void ascii4(std::size_t, __m512i, __m512i, __m512i, __m512i) noexcept {
    total += 256;
  }
  // Well-formed block: one unit per non-continuation byte, one more per 4-byte lead.
  NETBUF_AVX512 void block(std::size_t, __m512i input, std::size_t len) noexcept {
    const Mask64 live = lowBits64(len);
    const Mask64 cont = _mm512_mask_cmplt_epi8_mask(live, input, _mm512_set1_epi8(-64));
    const Mask64 four =
        _mm512_mask_cmpge_epu8_mask(live, input, _mm512_set1_epi8(static_cast<char>(0xF0)));
    total += len - popcount64(cont) + popcount64(four);
  }
  void rewind(std::size_t b, std::size_t i) noexcept {
    if (b < i) total -= s[b] >= 0xF0 ? 2 : 1;
  }
  bool scalar(std::size_t& i, std::size_t stop) noexcept {
    total += countUtf16Step(s, i, stop, n);
    return true;
  }
};

NETBUF_AVX512 std::size_t utf16Length(const u8* s, std::size_t n) noexcept {
  Utf16LengthPolicy p{s, n};
  validateDriver(s, n, p);
  return p.total;
}

// ---------------------------------------------------------------- UTF-8 -> UTF-16

/// vpermb indices that place byte (base + j + k) of a 64-byte register in the low byte of 16-bit
/// lane j (the high byte is zeroed by the write mask).
struct WidenIndex {
  alignas(64) u8 idx[6][64];
  constexpr WidenIndex() : idx{} {
    for (int half = 0; half < 2; ++half)
      for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 32; ++j) {
          idx[3 * half + k][2 * j] = static_cast<u8>((32 * half + j + k) & 63);
          idx[3 * half + k][2 * j + 1] = 0;
        }
  }
};
constexpr WidenIndex kWiden{};

/// Decodes the well-formed 1-3 byte sequences whose leads are the bits of `leads` (all within the
/// 64-byte window `in`, every sequence complete inside it) and stores the units at d.
NETBUF_AVX512 inline char16_t* decodeWindow(__m512i in, Mask64 leads, char16_t* d,
                                            const char16_t* dEnd) noexcept {
  constexpr Mask64 kLowBytes = 0x5555555555555555ull;
  for (int half = 0; half < 2; ++half) {
    const Mask32 l = static_cast<Mask32>(leads >> (32 * half));
    if (l == 0) continue;
    const __m512i x0 = _mm512_maskz_permutexvar_epi8(kLowBytes, load(kWiden.idx[3 * half]), in);
    const __m512i x1 = _mm512_maskz_permutexvar_epi8(kLowBytes, load(kWiden.idx[3 * half + 1]), in);
    const __m512i x2 = _mm512_maskz_permutexvar_epi8(kLowBytes, load(kWiden.idx[3 * half + 2]), in);
    const __m512i low6 = _mm512_set1_epi16(0x3F);
    const __m512i cont1 = _mm512_slli_epi16(_mm512_and_si512(x1, low6), 6);
    // 3-byte lead: x0 << 12 keeps the lead's low nibble; 2-byte: (x0 & 1F) << 6.
    const __m512i three = _mm512_ternarylogic_epi32(_mm512_slli_epi16(x0, 12), cont1,
                                                    _mm512_and_si512(x2, low6), 0xFE);  // a|b|c
    const __m512i two = _mm512_ternarylogic_epi32(
        _mm512_slli_epi16(x0, 6), _mm512_set1_epi16(0x7C0), _mm512_and_si512(x1, low6), 0xEA);
    const Mask32 ascii = _mm512_cmplt_epu16_mask(x0, _mm512_set1_epi16(0x80));
    const Mask32 lead2 = _mm512_cmplt_epu16_mask(x0, _mm512_set1_epi16(0xE0));
    __m512i units = _mm512_mask_mov_epi16(three, lead2, two);
    units = _mm512_mask_mov_epi16(units, ascii, x0);
    const __m512i packed = _mm512_maskz_compress_epi16(l, units);
    const unsigned count = popcount32(l);
    if (dEnd - d >= 32)
      store(d, packed);
    else
      _mm512_mask_storeu_epi16(d, lowBits32(count), packed);
    d += count;
  }
  return d;
}

NETBUF_AVX512 std::size_t utf8ToUtf16(const u8* s, std::size_t n, char16_t* dst) noexcept {
  const Validator v = makeValidator();
  std::size_t i = 0;
  char16_t* d = dst;
  const char16_t* const dEnd = dst + n;
  const __m512i zero = _mm512_setzero_si512();
  while (i < n) {
    const std::size_t len = n - i < 64 ? n - i : 64;
    const Mask64 live = lowBits64(len);
    const __m512i in = len == 64 ? load(s + i) : _mm512_maskz_loadu_epi8(live, s + i);
    if (_mm512_movepi8_mask(in) == 0) {  // ASCII: widen
      if (len == 64) {                   // d - dst <= i: 64 units fit
        store(d, _mm512_cvtepu8_epi16(_mm512_castsi512_si256(in)));
        store(d + 32, _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(in, 1)));
        d += 64;
        i += 64;
        continue;
      }
      _mm512_mask_storeu_epi16(d, lowBits32(len), _mm512_cvtepu8_epi16(_mm512_castsi512_si256(in)));
      if (len > 32)
        _mm512_mask_storeu_epi16(d + 32, lowBits32(len - 32),
                                 _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(in, 1)));
      d += len;
      i += len;
      continue;
    }
    // i is a code point boundary and everything before it was well-formed (or replaced), so the
    // window validates on its own: "previous bytes" are ASCII.
    const Mask64 ge0 = _mm512_cmpge_epu8_mask(in, _mm512_set1_epi8(static_cast<char>(0xC0)));
    const Mask64 geE0 = _mm512_cmpge_epu8_mask(in, _mm512_set1_epi8(static_cast<char>(0xE0)));
    const Mask64 geF0 = _mm512_cmpge_epu8_mask(in, _mm512_set1_epi8(static_cast<char>(0xF0)));
    // A lead in the last three live bytes whose sequence would run past the window.
    Mask64 crossing = (ge0 >> (len - 1) & 1) << (len - 1);
    if (len >= 2) crossing |= (geE0 >> (len - 2) & 1) << (len - 2);
    if (len >= 3) crossing |= (geF0 >> (len - 3) & 1) << (len - 3);
    const std::size_t end = crossing != 0 ? ctz64(crossing) : len;
    // A sequence cut short by `end` is flagged at `end` itself (the byte there is not a
    // continuation), so checking errors through `end` proves [0, end) well-formed.
    const Mask64 errors = blockErrors(v, in, zero) & lowBits64(end < len ? end + 1 : len);
    Utf16Sink sink{d};
    if (errors == 0) {
      // Vector decode up to the first 4-byte lead (or the window's last boundary).
      const Mask64 four = geF0 & lowBits64(end);
      const std::size_t stop = four != 0 ? ctz64(four) : end;
      if (stop != 0) {
        const Mask64 cont = _mm512_cmplt_epi8_mask(in, _mm512_set1_epi8(-64));
        d = decodeWindow(in, ~cont & lowBits64(stop), d, dEnd);
        i += stop;
        if (stop == end) continue;
      }
      // A 4-byte sequence (a surrogate pair), or a sequence truncated by the end of the input:
      // one code point (or maximal subpart) through the scalar decoder.
      sink.d = d;
      decodeStep(s, i, i + 1, n, sink);
      d = sink.d;
      continue;
    }
    // Ill-formed bytes: the scalar decoder replaces them over this window and stops on a
    // boundary; the next window validates afresh from there.
    decodeStep(s, i, i + len, n, sink);
    d = sink.d;
  }
  return static_cast<std::size_t>(d - dst);
}

// ---------------------------------------------------------------- ASCII-run kernels

NETBUF_AVX512 bool isAscii512(const u8* s, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    const __m512i any = _mm512_ternarylogic_epi32(_mm512_or_si512(load(s + i), load(s + i + 64)),
                                                  load(s + i + 128), load(s + i + 192), 0xFE);
    if (_mm512_movepi8_mask(any) != 0) return false;
  }
  for (; i < n; i += 64) {
    const std::size_t len = n - i < 64 ? n - i : 64;
    if (_mm512_movepi8_mask(_mm512_maskz_loadu_epi8(lowBits64(len), s + i)) != 0) return false;
  }
  return true;
}

/// Units with any bit of highMask set become '?', then narrowed; 32 units per step.
NETBUF_AVX512 inline void narrowU16(const char16_t* s, std::size_t n, u8* d,
                                    short highMask) noexcept {
  const __m512i mask = _mm512_set1_epi16(highMask);
  const __m512i question = _mm512_set1_epi16('?');
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i a = load(s + i);
    const __m512i b = load(s + i + 32);
    const __m512i na = _mm512_mask_mov_epi16(a, _mm512_test_epi16_mask(a, mask), question);
    const __m512i nb = _mm512_mask_mov_epi16(b, _mm512_test_epi16_mask(b, mask), question);
    // vpackuswb works per 128-bit lane; vpermq puts the eight 8-byte groups back in order.
    store(d + i, _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),
                                          _mm512_packus_epi16(na, nb)));
  }
  for (; i < n; i += 32) {
    const Mask32 live = lowBits32(n - i);
    const __m512i v = _mm512_maskz_loadu_epi16(live, s + i);
    const Mask32 bad = _mm512_test_epi16_mask(v, mask);
    _mm256_mask_storeu_epi8(d + i, live,
                            _mm512_cvtepi16_epi8(_mm512_mask_mov_epi16(v, bad, question)));
  }
}

NETBUF_AVX512 void encodeAsciiU16(const char16_t* s, std::size_t n, u8* d) noexcept {
  narrowU16(s, n, d, -128);
}
NETBUF_AVX512 void encodeLatin1(const char16_t* s, std::size_t n, u8* d) noexcept {
  narrowU16(s, n, d, -256);
}

NETBUF_AVX512 void encodeAscii8(const u8* s, std::size_t n, u8* d) noexcept {
  const __m512i question = _mm512_set1_epi8('?');
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i v = load(s + i);
    store(d + i, _mm512_mask_mov_epi8(v, _mm512_movepi8_mask(v), question));
  }
  for (; i < n; i += 64) {
    const Mask64 live = lowBits64(n - i);
    const __m512i v = _mm512_maskz_loadu_epi8(live, s + i);
    _mm512_mask_storeu_epi8(d + i, live, _mm512_mask_mov_epi8(v, _mm512_movepi8_mask(v), question));
  }
}

NETBUF_AVX512 void encodeUtf16(const char16_t* s, std::size_t n, u8* d, bool bigEndian) noexcept {
  if (!bigEndian) {
    std::memcpy(d, s, 2 * n);
    return;
  }
  const __m512i swap = _mm512_set4_epi32(0x0E0F0C0D, 0x0A0B0809, 0x06070405, 0x02030001);
  for (std::size_t i = 0; i < n; i += 32) {
    const Mask32 live = lowBits32(n - i);
    _mm512_mask_storeu_epi16(d + 2 * i, live,
                             _mm512_shuffle_epi8(_mm512_maskz_loadu_epi16(live, s + i), swap));
  }
}

// Decoders to Latin-1 and to UTF-16 bytes: the AVX2 tier's kernels are already ASCII-run based;
// reuse them (one extra indirect call per call, not per byte).
std::size_t utf8ToLatin1(const u8* s, std::size_t n, u8* dst) noexcept {
  return kAvx2Kernels.utf8ToLatin1(s, n, dst);
}
std::size_t utf8ToUtf16Bytes(const u8* s, std::size_t n, u8* dst, bool bigEndian) noexcept {
  return kAvx2Kernels.utf8ToUtf16Bytes(s, n, dst, bigEndian);
}

}  // namespace

const Kernels kAvx512Kernels = {
    utf8BytesU16, utf8BytesU32, replacingBytes,   encodeUtf8U16, encodeUtf8U32, copyReplacing,
    firstInvalid, isAscii512,   encodeAsciiU16,   encodeAscii8,  encodeLatin1,  encodeUtf16,
    utf8ToLatin1, utf8ToUtf16,  utf8ToUtf16Bytes, utf16Length,
};

}  // namespace netbuf::utf8::detail

#endif  // __x86_64__
