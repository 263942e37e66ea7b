#pragma once
// Capacity limits shared by every buffer type and allocator.

#include <cstddef>
#include <cstdint>

namespace netbuf {

/// Netty's default maximum capacity (Integer.MAX_VALUE).
inline constexpr std::size_t kDefaultMaxCapacity = 0x7fffffff;
/// No ByteBuf or CompositeByteBuf may be larger than this (4 GiB - 1): ByteBuf keeps its indices in
/// 32 bits. index + length of any validated pair, computed in std::size_t, never overflows.
inline constexpr std::size_t kMaxCapacityLimit = UINT32_MAX;

}  // namespace netbuf
