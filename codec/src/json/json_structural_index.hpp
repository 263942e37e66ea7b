#pragma once
// Stage 1 of the JSON parser (json_parser.cpp): one pass over the input, 64 bytes at a time,
// that finds where every token starts, so that stage 2 walks tokens instead of bytes. Private,
// not installed.
//
// Per 64-byte block it classifies the bytes into bit masks (quote, backslash, the six structural
// characters {}[]:, whitespace, control bytes, bytes above 0x7F), works out which quotes are
// escaped (a quote after an odd run of backslashes), which bytes lie inside strings (the prefix
// XOR of the unescaped quotes, a carry-less multiply by all ones, carried across blocks), and
// records:
//   - the structural positions: each of {}[]:, outside strings, each opening quote, and the first
//     byte of every run of other bytes outside strings (a number, a literal, or garbage that
//     stage 2 rejects). Whitespace is never recorded, so stage 2 never skips it.
//   - per block, three bit masks that stage 2 reads per string: the unescaped quotes (the closing
//     quote of a string is the next one after its opening quote), the backslashes, and the bytes
//     that are a backslash or above 0x7F ("special": a string without any is a plain ASCII view).
// It fails (returns false) on a string that is not closed, or a byte below 0x20 inside a string;
// every other error is stage 2's. Failing is only a verdict: the exact error (what, where) comes
// from the byte-at-a-time parser, which the caller runs on failure.
//
// Tiers, chosen once per call from utf8::activeIsa() (so tests can pin each): AVX-512BW, AVX2
// (both with PCLMULQDQ for the prefix XOR), and a portable scalar one. Positions are 32-bit: the
// caller keeps inputs of 4 GiB and more on the byte-at-a-time parser.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace netbuf::detail {

// Stage 1's per-block masks are stored three words a block, in this order.
enum JsonBlockWord : std::size_t {
  kQuoteWord = 0,      // unescaped quotes
  kSpecialWord = 1,    // backslashes and bytes above 0x7F
  kBackslashWord = 2,  // backslashes
  kWordsPerBlock = 3,
};

/// Indexes [p, p + n) (n < 2^32). On success, structurals holds count positions followed by
/// one sentinel equal to n, and bits kWordsPerBlock words per 64-byte block (the last block
/// padded with whitespace). Both vectors are reused: they keep their capacity across calls.
bool indexJson(const char* p, std::size_t n, std::vector<std::uint32_t>& structurals,
               std::size_t& count, std::vector<std::uint64_t>& bits);

/// Whether [from, to) holds any bit set in the blocks' `Word` masks.
template <JsonBlockWord Word>
inline bool anyBit(const std::uint64_t* bits, std::size_t from, std::size_t to) noexcept {
  if (from >= to) return false;
  std::size_t k = from >> 6;
  const std::size_t last = (to - 1) >> 6;
  std::uint64_t w = bits[k * kWordsPerBlock + Word] & (~std::uint64_t{0} << (from & 63));
  while (k != last) {
    if (w != 0) return true;
    ++k;
    w = bits[k * kWordsPerBlock + Word];
  }
  const unsigned top = static_cast<unsigned>(to & 63);
  if (top != 0) w &= (std::uint64_t{1} << top) - 1;
  return w != 0;
}

/// The first unescaped quote at or after `from` (one exists: stage 1 saw every string closed).
inline std::size_t nextQuote(const std::uint64_t* bits, std::size_t from) noexcept {
  std::size_t k = from >> 6;
  std::uint64_t w = bits[k * kWordsPerBlock + kQuoteWord] & (~std::uint64_t{0} << (from & 63));
  while (w == 0) {
    ++k;
    w = bits[k * kWordsPerBlock + kQuoteWord];
  }
  return (k << 6) + static_cast<std::size_t>(__builtin_ctzll(w));
}

}  // namespace netbuf::detail
