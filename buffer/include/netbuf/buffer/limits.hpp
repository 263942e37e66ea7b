#pragma once
// Capacity limits shared by every buffer type and allocator.

#include <cstddef>

namespace netbuf {

/// Netty's default maximum capacity (Integer.MAX_VALUE).
inline constexpr std::size_t kDefaultMaxCapacity = 0x7fffffff;
/// No buffer may be larger than this, so index + length of any validated pair never overflows.
inline constexpr std::size_t kMaxCapacityLimit = static_cast<std::size_t>(-1) >> 2;

}  // namespace netbuf
