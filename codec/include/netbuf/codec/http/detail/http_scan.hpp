#pragma once
// The byte scans of the HTTP decoders, vectorised (AVX2 or SSE2, picked once at startup from the
// CPU's features, as the text fast paths do) with a scalar fallback. Each returns the index of the
// first byte that stops the scan, or n when none does.

#include <cstddef>
#include <cstdint>

namespace netbuf::detail::http_scan {

/// First byte that may not appear in a field value or reason phrase: a control character other
/// than HTAB (CR and LF included), or DEL. Bytes 0x80-0xFF (obs-text) are allowed.
std::size_t findInvalidValueByte(const char* p, std::size_t n) noexcept;
/// The first LF in [p, p + n), or n; and, when firstBad is npos on entry, the index of the first
/// byte before that LF that may not appear in a field line (a control character other than HTAB,
/// CR included, or DEL), left npos when there is none. One pass finds a line's end and checks
/// its bytes (the decoder calls it again from where it stopped while a line arrives in pieces).
std::size_t findLineEnd(const char* p, std::size_t n, std::size_t& firstBad) noexcept;
inline constexpr std::size_t npos = static_cast<std::size_t>(-1);
/// First byte that ends a request target: SP, a control character or DEL.
std::size_t findTargetEnd(const char* p, std::size_t n) noexcept;
/// The name of the implementation in use ("avx2", "sse2" or "scalar"), for benchmarks.
const char* implementation() noexcept;

/// RFC 9110 tchar: ! # $ % & ' * + - . ^ _ ` | ~ DIGIT ALPHA.
extern const bool kTchar[256];

}  // namespace netbuf::detail::http_scan
