#pragma once
// Helpers shared by the PooledByteBufAllocator test programs.

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include <doctest/doctest.h>

#include <cstddef>

namespace netbuf::test {

/// A pool of its own for one test: `arenas` arenas, leak detection off.
inline PooledAllocatorOptions testPool(std::size_t arenas) {
  PooledAllocatorOptions o;
  o.numArenas = arenas;
  o.leakDetection = LeakDetectionLevel::Disabled;
  return o;
}

/// Every statistic of live memory is zero, in total and in each arena.
inline void checkNothingLive(const PooledByteBufAllocator& a) {
  const PoolStats s = a.totalStats();
  CHECK(s.liveBuffers == 0);
  CHECK(s.liveBytes == 0);
  CHECK(s.hugeLiveBytes == 0);
  for (const PoolStats& arena : a.stats().arenas) {
    CHECK(arena.liveBuffers == 0);
    CHECK(arena.liveBytes == 0);
  }
}

}  // namespace netbuf::test
