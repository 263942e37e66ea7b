#pragma once
// PoolStats and AllocatorStats: the counters PooledByteBufAllocator::stats() reports.

#include <cstdint>
#include <vector>

namespace netbuf {

/// Counters for one arena, or for the whole allocator.
struct PoolStats {
  std::uint64_t liveBuffers = 0;  ///< Buffers handed out and not yet released (incl. huge).
  std::uint64_t liveBytes = 0;    ///< Their usable bytes (slot / run / huge sizes).
  std::uint64_t chunkBytes = 0;   ///< Bytes held in chunks (mapped from the OS).
  std::uint64_t chunks = 0;
  std::uint64_t cachedBytes = 0;          ///< Free bytes parked in thread caches.
  std::uint64_t allocations = 0;          ///< Every allocation ever (incl. huge and fallback).
  std::uint64_t cacheHits = 0;            ///< Allocations served by a thread cache.
  std::uint64_t cacheMisses = 0;          ///< Thread-cache lookups that found the class empty.
  std::uint64_t hugeAllocations = 0;      ///< Ever; only in the total.
  std::uint64_t hugeLiveBytes = 0;        ///< Live huge and fallback bytes; only in the total.
  std::uint64_t fallbackAllocations = 0;  ///< Served outside the pool because of maxChunks.
  std::uint64_t doubleReleases = 0;       ///< Blocks released twice (detected and ignored).
  std::uint64_t controlBlockBytes = 0;    ///< Memory holding control blocks (slabs).
};

struct AllocatorStats {
  PoolStats total;
  std::vector<PoolStats> arenas;
};

}  // namespace netbuf
