#pragma once
// ThreadCache: one thread's cache of free blocks for one allocator, and the scheduling of its bins
// (sweeps and leak samples). The operations on a cache are PoolCore's (thread_cache.cpp).

#include "pool_arena.hpp"

#include <netbuf/buffer/detail/pool_fast_path.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

namespace netbuf::detail {

struct PoolCore;

/// Per-thread, per-allocator cache. Only its own thread touches bins (except the allocator
/// destructor, which requires that thread to be done with the allocator); counters are read by
/// stats() from any thread.
//
// Accounting. The fast paths (a hit, a release into the bin) update only the bin: `count` and, for
// a hit, `pops`. Everything else stats() needs is derived from them and from counters the slow
// paths keep. Each bin conserves its blocks:
//   count = pushes + inflow - pops
// where pushes are this thread's releases into the bin (the fast path's, and the slow paths' that
// end in the bin) and `inflow` counts the blocks that entered the bin any other way (batch
// refills, sorted remote returns) minus those that left it other than by a hit (trims, returns
// to the arena, the pop that serves a miss). So pushes = count + pops - inflow, and every slot of
// a bin has the bin's size, so bytes are counts times `size`.
//
// The bound on cached bytes is kept by reservation: `cap` entries of the bin are reserved from
// the thread's budget, sum(cap * size) = reservedBytes <= maxCachedBytes, and count <= cap. The
// release fast path then only compares count with cap; the slow path reserves more (growCap) and
// a sweep gives back what a bin does not hold.
struct ThreadCache {
  using Bin = PoolBin;

  std::uint64_t coreId = 0;              // immutable; compared without a lock
  std::atomic<PoolCore*> core{nullptr};  // null once the allocator is gone (orphan)
  PoolArena* arena = nullptr;
  // `arena->tag` while attached, kDetachedTag before and after: the release fast path compares a
  // block's arenaTag with it (tags are never reused, so no later arena can match a stale memo's
  // cache, and kDetachedTag is no block's).
  std::atomic<std::uint32_t> releaseTag{kDetachedTag};
  std::size_t maxCachedBytes = 0;  // options.maxCachedBytesPerThread
  // Blocks taken from the arena's return stack and not yet sorted into bins (mixed classes, linked
  // through `next`). Sorted lazily, a few per miss, so the walk over blocks just written by other
  // threads overlaps with the caller's work instead of stalling on one miss after another.
  PooledStorage* remote = nullptr;
  bool remoteUsed = false;  // popped from since the last sweep
  // Blocks of another arena (one at a time) this thread released and has not pushed yet: linked
  // through `next` and pushed onto that arena's return stack as one chain, one CAS per batch
  // (flushPending). Bounded by kReturnBatch blocks and kReturnBatchBytes; pushed when the thread
  // releases into another arena, flushes its cache (trim, thread exit, allocator destruction).
  PooledStorage* pendingHead = nullptr;
  PooledStorage* pendingTail = nullptr;
  PoolArena* pendingArena = nullptr;
  std::uint32_t pendingCount = 0;
  std::size_t pendingBytes = 0;
  // Releases this thread made of other arenas' blocks, per arena index (counted by the releaser,
  // so that a block on a return stack or a `remote` list is already free in stats()).
  std::unique_ptr<OwnedCounter[]> remoteFrees, remoteFreeBytes;
  std::unique_ptr<Bin[]> binStore;  // (Bin holds atomics: not movable, so not in a vector)
  std::span<Bin> bins;
  std::size_t reservedBytes = 0;  // sum of cap * size over the bins
  // Misses since the last sweep (a thread that only misses sweeps too) and since the last time the
  // bins gave back their unused reservation (growCap). Owner only.
  std::uint64_t missesSinceSweep = 0;
  std::uint32_t missesSinceReclaim = 0;
  // Allocations through this cache are hits (sum of pops) + misses; `direct` of the misses were
  // served outside the pool (maxChunks fallback) and are counted by the huge counters instead.
  // missBytes: the other misses' bytes. slowFrees / slowFreeBytes: this arena's blocks the thread
  // released that did not end in a bin.
  OwnedCounter misses, direct, missBytes, slowFrees, slowFreeBytes;
  std::uint64_t sampledFor = 0;  // the memo id the bins' leak sampling was set for (owner only)

  /// Gives back b's reservation beyond what it holds (cap down to count; no block moves).
  void releaseUnusedReservation(Bin& b) noexcept {
    reservedBytes -= std::size_t{b.cap - b.count} * b.size;
    b.cap = b.count;
  }

  /// What stats() reports for this cache, derived as described above.
  struct Totals {
    std::uint64_t hits = 0, allocBytes = 0, frees = 0, freeBytes = 0, cachedBytes = 0;
  };
  Totals totals() const noexcept {
    Totals t;
    for (const Bin& b : bins) {
      const std::uint64_t count = b.count, pops = b.pops.get();
      // Read without stopping the owner: the three values may be from slightly different
      // moments, so a transiently negative difference reads as zero.
      const auto pushes = static_cast<std::int64_t>(count + pops - b.inflow.get());
      const std::uint64_t p = pushes > 0 ? static_cast<std::uint64_t>(pushes) : 0;
      t.hits += pops;
      t.allocBytes += pops * b.size;
      t.frees += p;
      t.freeBytes += p * b.size;
      t.cachedBytes += count * b.size;
    }
    t.allocBytes += missBytes.get();
    t.frees += slowFrees.get();
    t.freeBytes += slowFreeBytes.get();
    return t;
  }

  ~ThreadCache() {
    for (Bin& b : bins) delete[] b.items;
  }
};

/// `base + n`, saturating at UINT64_MAX (counters that never wrap in practice, and "never").
constexpr std::uint64_t addSaturating(std::uint64_t base, std::uint64_t n) noexcept {
  return base + std::min(n, UINT64_MAX - base);
}

/// Recomputes b.slowAt from the sweep's schedule (cacheTrimInterval hits after the last sweep)
/// and the next leak sample.
inline void setSlowAt(PoolBin& b, std::uint64_t trimInterval) noexcept {
  b.slowAt = std::min(addSaturating(b.popsAtSweep, trimInterval), b.sampleAt);
}

// Leak detection `simple` tracks one allocation in options.leakSamplingInterval (I) on average:
// per size class of a thread cache (PoolBin::sampleAt) and, for allocations served outside the
// bins, per thread (tSampleLeft, shared by the thread's allocators). The distance to the next
// sample is drawn uniformly from [1, 2I - 1] (mean I), as Netty draws one random number per
// allocation: a fixed distance would never sample a thread or class with fewer than I allocations,
// and would sample the same position of every periodic pattern (say, the second buffer of every
// request) forever.
// The calling thread's generator; the same seed sequence in every process (reproducible runs).
std::uint64_t nextSampleDistance(std::uint64_t interval) noexcept;

/// Guards the set of thread caches of every allocator: cache creation, thread exit, stats()
/// snapshots and allocator destruction. Never destroyed (thread exits may follow static teardown).
std::mutex& registryMutex();

}  // namespace netbuf::detail
