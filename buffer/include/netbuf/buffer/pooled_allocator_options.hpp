#pragma once
// PooledAllocatorOptions: the configuration of a PooledByteBufAllocator.

#include <cstddef>
#include <netbuf/buffer/leak_detection_level.hpp>
#include <optional>

namespace netbuf {

/// Configuration. Every limit has a default; the constructor validates the set and throws
/// IllegalArgumentError naming the bad value.
struct PooledAllocatorOptions {
  /// Power of two in [4 KiB, 1 MiB].
  std::size_t pageSize = 8192;
  /// pageSize times a power of two, at most 1 GiB. Requests above it are "huge".
  std::size_t chunkSize = std::size_t{4} << 20;
  /// 0: 2 x std::thread::hardware_concurrency() (at least 1).
  std::size_t numArenas = 0;
  /// Most free slots a thread caches per small size class (below pageSize).
  std::size_t smallCacheSize = 256;
  /// Most free runs a thread caches per normal size class up to maxCachedBufferCapacity; a class
  /// also gets no more entries than a quarter of maxCachedBytesPerThread holds (at least one).
  std::size_t normalCacheSize = 64;
  /// Larger normal sizes are never cached in threads (they go back to their arena at once).
  std::size_t maxCachedBufferCapacity = std::size_t{1} << 20;
  /// Bound on the bytes one thread's cache holds for this allocator, kept by reservation: each size
  /// class reserves entries from it. A release into a class at its reservation that cannot reserve
  /// more returns the class's older half to the arena (or, for a class with none reserved, goes
  /// back itself).
  std::size_t maxCachedBytesPerThread = std::size_t{4} << 20;
  /// When one size class has had this many cache hits, or the thread this many misses, since the
  /// last trim, the thread trims from each size class the entries it did not use since then and
  /// the reservation it does not hold (Netty's freeSweepAllocationThreshold, with hits counted per
  /// class). 0: never.
  std::size_t cacheTrimInterval = 8192;
  /// Bound on chunks held by all arenas together (0: unbounded). When a new chunk would exceed
  /// it, the request is served outside the pool, as a huge allocation is (direct memory, freed on
  /// release), and counted in PoolStats::fallbackAllocations.
  std::size_t maxChunks = 0;
  /// false: no thread caches at all (every allocation and release takes its arena's lock).
  bool useThreadCache = true;
  /// Leak detection for this allocator; unset: the process default (see
  /// PooledByteBufAllocator::defaultLeakDetectionLevel()).
  std::optional<LeakDetectionLevel> leakDetection;
  /// At leak detection `simple`, one allocation in this many is tracked on average (Netty's
  /// io.netty.leakDetection.samplingInterval, also 128 by default): each size class of a thread's
  /// cache, and separately the thread's allocations outside the caches (huge ones, threads
  /// without a cache), count down to their next sample, drawn uniformly from
  /// [1, 2 x interval - 1]; 1 tracks every allocation. A tracked
  /// allocation records a backtrace, which costs microseconds (docs/allocator.md), so the
  /// interval sets what `simple` costs. In [1, 2^30].
  std::size_t leakSamplingInterval = 128;
};

}  // namespace netbuf
