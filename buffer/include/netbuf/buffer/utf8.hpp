#pragma once
// Text kernels behind ByteBuf's writeUtf8 / writeAscii / readUtf8 family: transcoding, validation
// and length computation over raw pointers. No allocation, no exceptions, no dependency on ByteBuf.
//
// Contract shared by every writer below ("size once, then write unchecked"):
//   * the caller reserves the documented bound for `dst` (for example utf8MaxBytes(n)); the kernel
//     performs no bounds checks and may store anywhere inside [dst, dst + bound) while it works,
//     but only the first `return value` bytes/units hold output.
//   * the return value is the exact number of bytes (or units) written.
//   * `dst` must not overlap the source.
//
// Replacement policy (identical on every instruction set, verified by tests):
//   * UTF-16 -> UTF-8: an unpaired surrogate becomes '?' and the following unit is processed
//     normally (Java's String.getBytes(UTF_8)).
//   * UTF-32 -> UTF-8: surrogate values and values above U+10FFFF become '?'.
//   * UTF-8 input is decoded with the Unicode "best practice": each maximal subpart of an
//   ill-formed
//     subsequence (Unicode 3.9, "U+FFFD Substitution of Maximal Subparts") becomes one U+FFFD
//     (or one '?' when the target is Latin-1).
//
// Instruction sets: every kernel exists as a portable scalar version, an SSE2 version (the x86-64
// baseline), an AVX2 version and an AVX-512 version (the best one the CPU supports is chosen at run
// time from CPUID). The choice is made once per call
// by one indirect call through a table, never per byte. forceIsa() lets tests and benchmarks pin a
// path.

#include <cstddef>
#include <string_view>

namespace netbuf::utf8 {

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

/// Instruction-set tiers. Sse2 uses SSE2 only (no pshufb), so its multi-byte paths are limited to
/// arithmetic-only cases (pure 2-byte blocks); Avx2 adds shuffle-based compaction and the
/// lookup-table UTF-8 validator; Avx512 (F, BW, VL, VBMI and VBMI2 together) uses masked tails,
/// vpcompressb/w compaction and 64-byte validation and decoding windows. Tiers are ordered: each
/// one implies the CPU also runs every tier before it.
enum class Isa { Scalar, Sse2, Avx2, Avx512 };

/// Best tier this CPU supports (CPUID, computed once). Always Scalar on non-x86-64 builds.
Isa detectedIsa() noexcept;
/// Tier used by the kernels now: detectedIsa() unless forceIsa() pinned another.
Isa activeIsa() noexcept;
/// Pins the tier (clamped to detectedIsa()). Process-wide; meant for tests and benchmarks, not for
/// concurrent use with kernels running on other threads that expect a particular tier.
void forceIsa(Isa isa) noexcept;
/// Undoes forceIsa().
void resetIsa() noexcept;
/// "Scalar", "SSE2", "AVX2" or "AVX-512".
const char* isaName(Isa isa) noexcept;

/// Worst-case UTF-8 bytes for `utf16Units` UTF-16 units (a BMP unit needs at most 3 bytes, a
/// surrogate pair 4 bytes for 2 units).
constexpr std::size_t utf8MaxBytes(std::size_t utf16Units) noexcept { return utf16Units * 3; }

/// Exact length of encodeUtf8(s) output (a lone surrogate counts 1 byte, for its '?').
std::size_t utf8Bytes(std::u16string_view s) noexcept;
/// Exact length of encodeUtf8(s) output (an invalid code point counts 1 byte, for its '?').
std::size_t utf8Bytes(std::u32string_view s) noexcept;
/// Exact length of copyUtf8Replacing(s) output.
std::size_t utf8ReplacingBytes(std::string_view s) noexcept;

/// UTF-16 -> UTF-8. dst bound: 3 * src.size().
std::size_t encodeUtf8(std::u16string_view src, std::byte* dst) noexcept;
/// UTF-32 -> UTF-8. dst bound: 4 * src.size().
std::size_t encodeUtf8(std::u32string_view src, std::byte* dst) noexcept;
/// Copies supposedly-UTF-8 input, replacing each maximal ill-formed subpart by EF BF BD.
/// dst bound: 3 * src.size(). Output is always well-formed; equals the input when it was.
std::size_t copyUtf8Replacing(std::string_view src, std::byte* dst) noexcept;

/// Offset of the first byte of the first ill-formed subsequence, npos if [p, p+n) is well-formed.
/// A sequence truncated by the end of the range is ill-formed at its lead byte.
std::size_t firstInvalidUtf8(const std::byte* p, std::size_t n) noexcept;
bool isValidUtf8(const std::byte* p, std::size_t n) noexcept;
/// True when every byte is below 0x80.
bool isAscii(const std::byte* p, std::size_t n) noexcept;

/// One byte per unit; a unit above 0x7F becomes '?'. dst bound: src.size().
std::size_t encodeAscii(std::u16string_view src, std::byte* dst) noexcept;
/// One byte per byte; a byte above 0x7F becomes '?'. dst bound: src.size().
std::size_t encodeAscii(std::string_view src, std::byte* dst) noexcept;
/// One byte per unit; a unit above 0xFF becomes '?'. dst bound: src.size().
std::size_t encodeLatin1(std::u16string_view src, std::byte* dst) noexcept;
/// The units as bytes in the requested byte order (no validation). dst bound: 2 * src.size().
std::size_t encodeUtf16(std::u16string_view src, std::byte* dst, bool bigEndian) noexcept;

/// UTF-8 -> Latin-1; an ill-formed subpart or a code point above U+00FF becomes '?'.
/// dst bound: utf8.size().
std::size_t utf8ToLatin1(std::string_view utf8, std::byte* dst) noexcept;
/// UTF-8 -> UTF-16 units, replacing (U+FFFD per maximal subpart). dst bound: utf8.size() units;
/// dst must be aligned for char16_t.
std::size_t utf8ToUtf16(std::string_view utf8, char16_t* dst) noexcept;
/// UTF-8 -> UTF-16 bytes in the requested order, replacing. dst bound: 2 * utf8.size() bytes.
std::size_t utf8ToUtf16Bytes(std::string_view utf8, std::byte* dst, bool bigEndian) noexcept;
/// Exact number of units utf8ToUtf16(utf8, ...) writes.
std::size_t utf16Length(std::string_view utf8) noexcept;
/// Bytes to chars; a byte above 0x7F becomes '?'. dst bound: n.
std::size_t decodeAscii(const std::byte* p, std::size_t n, char* dst) noexcept;

}  // namespace netbuf::utf8
