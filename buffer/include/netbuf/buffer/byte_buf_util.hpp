#pragma once
// Free functions over plain byte ranges that every buffer type forwards to (Netty's ByteBufUtil):
// hex dumps, search, comparison and hashing. Keeping them here means ByteBuf, ByteBufView and
// CompositeByteBuf share one implementation instead of three copies.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace netbuf::byte_buf_util {

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

/// Lower-case hex of every byte, no separators: {0x0a, 0xff} -> "0aff".
std::string hexDump(std::span<const std::byte> bytes);

/// Netty's table: 16 bytes a row, an offset column and an ASCII column ('.' for non-printables).
/// Offsets are relative to bytes[0].
std::string prettyHexDump(std::span<const std::byte> bytes);

/// Index of the first byte equal to value in bytes, or npos.
std::size_t firstIndexOf(std::span<const std::byte> bytes, std::byte value) noexcept;

/// Index of the last byte equal to value in bytes, or npos.
std::size_t lastIndexOf(std::span<const std::byte> bytes, std::byte value) noexcept;

/// Unsigned lexicographic comparison; a proper prefix compares less. Returns <0, 0 or >0.
int compare(std::span<const std::byte> a, std::span<const std::byte> b) noexcept;

/// A 64-bit hash of the bytes' values (not their location): equal ranges hash equally.
std::size_t hash(std::span<const std::byte> bytes) noexcept;

/// The same hash computed incrementally over pieces: feeding a range in any split gives the value
/// hash() gives for the whole, so segmented buffers hash like contiguous ones.
class Hasher {
 public:
  /// totalLength: the number of bytes that will be fed (it seeds the hash, as in hash()).
  explicit Hasher(std::size_t totalLength) noexcept;
  void update(std::span<const std::byte> bytes) noexcept;
  std::size_t finish() noexcept;

 private:
  std::uint64_t h_;
  std::uint64_t pending_ = 0;     // bytes not yet forming a whole 8-byte word
  std::size_t pendingCount_ = 0;  // how many of them (0..7)
};

}  // namespace netbuf::byte_buf_util
