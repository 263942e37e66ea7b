#pragma once
// PoolArena: one arena of the pool (its chunks, subpages, slabs of control blocks and the stack of
// blocks other threads returned), and the tags that name arenas. The operations on an arena are
// PoolCore's (pool_arena.cpp); everything but returnHead and the counters is guarded by `mutex`.

#include "pool_chunk.hpp"
#include "shared_counter.hpp"

#include <netbuf/buffer/detail/pool_fast_path.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace netbuf::detail {

struct PoolCore;
struct Subpage;

/// Arena tags are unique in the process and never reused, so a block's tag names its arena even
/// after that arena is gone and another is made at the same address. Neither 0 (direct blocks)
/// nor kDetachedTag (detached caches) is ever issued.
inline constexpr std::uint32_t kDetachedTag = UINT32_MAX;

struct PoolArena {
  PoolCore* core = nullptr;
  unsigned index = 0;
  // Unique, never reused (gNextArenaTag); every block of this arena's slabs carries it.
  const std::uint32_t tag = nextTag();
  PoolChunk detached;  // the `chunk` of blocks on the slab free list (detached.arena == this)
  std::mutex mutex;
  std::vector<PoolChunk*> chunks;       // creation order
  std::vector<Subpage*> partial;        // per small class: subpages with a free slot
  PooledStorage* freeBlocks = nullptr;  // control blocks without a slot
  std::vector<void*> slabs;             // kSlabBytes each, aligned to kSlabBytes (see SlabHeader)
  std::size_t emptyChunks = 0;
  std::uint64_t runAllocations = 0;  // runs taken from chunks (the clock of emptySince)
  std::atomic<PooledStorage*> returnHead{nullptr};
  std::atomic<std::uint32_t> threads{0};
  // Work not done through a thread cache, and counters folded in from exited threads.
  SharedCounter allocs, allocBytes, frees, freeBytes, hits, misses;
  SharedCounter chunkCount, slabBytes;

  PoolArena() { detached.arena = this; }
  /// The next unused tag. Never wraps: once 2^32 - 2 arenas have been made in the process, making
  /// another (a new allocator) throws instead of repeating a tag.
  static std::uint32_t nextTag();

  /// Pushes the chain first..last (linked through `next`) with one CAS.
  void pushReturn(PooledStorage* first, PooledStorage* last) noexcept {
    PooledStorage* head = returnHead.load(std::memory_order_relaxed);
    do {
      last->next = head;
    } while (!returnHead.compare_exchange_weak(head, first, std::memory_order_release,
                                               std::memory_order_relaxed));
  }
};

}  // namespace netbuf::detail
