#pragma once
// Ready-made byte processors for ByteBuf::forEachByte / forEachByteDesc, in the spirit of Netty's
// ByteProcessor constants. A processor is any callable `bool(std::byte)` that returns true to keep
// going and false to stop at the current byte; forEachByte returns the index where it stopped.
// They are plain function objects (no virtual call), so the scan loop inlines them.

#include <cstddef>

namespace netbuf::processors {

/// Stops at the first byte equal to `value`.
struct FindByte {
  std::byte value;
  constexpr bool operator()(std::byte b) const noexcept { return b != value; }
};

/// Stops at the first byte not equal to `value`.
struct FindNonByte {
  std::byte value;
  constexpr bool operator()(std::byte b) const noexcept { return b == value; }
};

/// Stops at CR or LF.
struct FindCrlf {
  constexpr bool operator()(std::byte b) const noexcept {
    return b != std::byte{'\r'} && b != std::byte{'\n'};
  }
};

/// Stops at anything that is neither CR nor LF.
struct FindNonCrlf {
  constexpr bool operator()(std::byte b) const noexcept {
    return b == std::byte{'\r'} || b == std::byte{'\n'};
  }
};

/// Stops at a linear whitespace byte (space or horizontal tab, as in HTTP's LWS).
struct FindLinearWhitespace {
  constexpr bool operator()(std::byte b) const noexcept {
    return b != std::byte{' '} && b != std::byte{'\t'};
  }
};

/// Stops at the first byte that is not space or horizontal tab.
struct FindNonLinearWhitespace {
  constexpr bool operator()(std::byte b) const noexcept {
    return b == std::byte{' '} || b == std::byte{'\t'};
  }
};

/// Stops at any ASCII whitespace: space, \t, \n, \v, \f, \r.
struct FindWhitespace {
  constexpr bool operator()(std::byte b) const noexcept {
    return !(b == std::byte{' '} || (b >= std::byte{'\t'} && b <= std::byte{'\r'}));
  }
};

inline constexpr FindByte findNul{std::byte{0}};
inline constexpr FindNonByte findNonNul{std::byte{0}};
inline constexpr FindByte findCr{std::byte{'\r'}};
inline constexpr FindNonByte findNonCr{std::byte{'\r'}};
inline constexpr FindByte findLf{std::byte{'\n'}};
inline constexpr FindNonByte findNonLf{std::byte{'\n'}};
inline constexpr FindCrlf findCrlf{};
inline constexpr FindNonCrlf findNonCrlf{};
inline constexpr FindByte findSemicolon{std::byte{';'}};
inline constexpr FindByte findComma{std::byte{','}};
inline constexpr FindByte findAsciiSpace{std::byte{' '}};
inline constexpr FindLinearWhitespace findLinearWhitespace{};
inline constexpr FindNonLinearWhitespace findNonLinearWhitespace{};
inline constexpr FindWhitespace findWhitespace{};

}  // namespace netbuf::processors
