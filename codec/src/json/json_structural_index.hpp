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
// It fails (returns false) on a string that is not closed, or a byte below 0x20 inside a string,
// and, where it validates UTF-8 (the AVX-512 tier: each block with a byte above 0x7F goes through
// the text kernels' block validator), on ill-formed UTF-8 anywhere; every other error is stage
// 2's, which then validates each string that has bytes above 0x7F itself. Failing is only a
// verdict: the exact error (what, where) comes from the byte-at-a-time parser, which the caller
// runs on failure.
//
// Tiers, chosen once per call from utf8::activeIsa() (so tests can pin each): AVX-512 (BW, VL,
// VBMI, VBMI2: the text kernels' AVX-512 tier), AVX2
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

/// Indexes [p, p + n) (n < 2^32). On success, structurals holds the positions followed by one
/// sentinel equal to n (stage 2 stops there), and bits kWordsPerBlock words per 64-byte block
/// (the last block padded with whitespace); utf8Validated says whether the whole input was found
/// to be valid UTF-8 (false: not checked here). Both vectors are reused: they keep their capacity
/// across calls.
bool indexJson(const char* p, std::size_t n, std::vector<std::uint32_t>& structurals,
               std::vector<std::uint64_t>& bits, bool& utf8Validated);

}  // namespace netbuf::detail
