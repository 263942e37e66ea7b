#pragma once
// The pooled allocator's allocation fast path, inline in ByteBufAllocator::buffer(): a thread-cache
// hit for a small size is a few loads and stores in the caller, with no call. This header holds the
// pool internals that path reads (the control block, one size class of a thread cache, the
// thread's memo of its cache, the allocator's switch for the path); everything else about the pool
// is in buffer/src/ (detail/pool_core.hpp documents the accounting and the invariants in full).
// Internal: not a public API.

#include <netbuf/buffer/detail/storage.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__)
#define NETBUF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NETBUF_ASAN 1
#endif
#endif
#ifdef NETBUF_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace netbuf::detail {

/// 1 in a translation unit built with AddressSanitizer, 0 otherwise. The pool poisons free slots
/// when the library is built with ASan; an inline pop compiled without ASan could not unpoison
/// them, so such code uses a fast-path id the library leaves off (PoolFastPath::ids).
#ifdef NETBUF_ASAN
inline constexpr int kPoolAsan = 1;
#else
inline constexpr int kPoolAsan = 0;
#endif

struct PoolChunk;
struct PoolCore;
struct LeakRecord;
struct ThreadCache;

// The inline functions whose bodies depend on ASan get distinct names in the two builds (an inline
// namespace), so a program mixing instrumented and plain code keeps one definition of each.
#ifdef NETBUF_ASAN
inline namespace pool_asan {
#else
inline namespace pool_plain {
#endif

// Freed slots are poisoned under ASan so that a use after free through a stale view or pointer is
// reported at the faulting access.
inline void poison([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) noexcept {
#ifdef NETBUF_ASAN
  ASAN_POISON_MEMORY_REGION(p, n);
#endif
}
inline void unpoison([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) noexcept {
#ifdef NETBUF_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
}

}  // inline namespace

/// A counter written by one thread (load + store, no locked instruction) and read by any.
struct OwnedCounter {
  std::atomic<std::uint64_t> v{0};
  void add(std::uint64_t n) noexcept {
    v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void sub(std::uint64_t n) noexcept {
    v.store(v.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
  }
  std::uint64_t get() const noexcept { return v.load(std::memory_order_relaxed); }
  void set(std::uint64_t n) noexcept { v.store(n, std::memory_order_relaxed); }
};

/// A 32-bit count written by one thread and read by any (plain loads and stores in the code).
struct OwnedCount {
  std::atomic<std::uint32_t> v{0};
  operator std::uint32_t() const noexcept { return v.load(std::memory_order_relaxed); }
  OwnedCount& operator=(std::uint32_t n) noexcept {
    v.store(n, std::memory_order_relaxed);
    return *this;
  }
  OwnedCount& operator-=(std::uint32_t n) noexcept { return *this = *this - n; }
  std::uint32_t operator++(int) noexcept {
    const std::uint32_t old = *this;
    *this = old + 1;
    return old;
  }
  std::uint32_t operator--() noexcept {
    const std::uint32_t n = *this - 1;
    *this = n;
    return n;
  }
};

// A block's state. Live blocks are kStateLive when the release fast path may take them (untracked,
// in a chunk) and kStateLiveSlow when it must not (tracked by leak detection, or direct), so that
// path tests one byte.
inline constexpr std::uint8_t kStateFree = 0;
inline constexpr std::uint8_t kStateLive = 1;
inline constexpr std::uint8_t kStateLiveSlow = 2;
inline constexpr std::uint16_t kDirectClass = 0xffff;  // huge or fallback: not in any chunk

/// The index of n bytes (n <= the small limit, 4 pages) in the pool's small-class lookup table:
/// one entry per 16-byte quantum.
constexpr std::size_t smallClassIndex(std::size_t n) noexcept { return (n + 15) >> 4; }

/// The control block of a pooled buffer. Lives in an arena slab (or in front of a direct
/// allocation) and stays attached to its slot while the slot is cached, so reuse costs no malloc.
/// Exactly one cache line (64 bytes, 64-aligned): a release or an allocation touches one line,
/// which matters when blocks are reached in random order or handed between threads.
/// Invariants: state is not Free exactly while a handle may exist (refs > 0); it is LiveSlow when
/// `leak` is set or the block is direct. sizeClass is kDirectClass for direct (huge/fallback)
/// blocks, whose `core` names their allocator; every other block has a `chunk` (a real chunk while
/// it owns a slot, its arena's `detached` sentinel while it sits on the slab free list), so
/// chunk->arena->core always names the allocator. `leak` is meaningful only while the block is
/// live, `next` only while it is on a return stack or a free list. `arenaTag` is the tag of the
/// arena whose slab holds the block, for its whole life (0, which no arena has, for direct
/// blocks).
struct alignas(64) PooledStorage : Storage {
  union {
    PoolChunk* chunk;
    PoolCore* core;  // direct blocks only
  };
  union {
    LeakRecord* leak;
    PooledStorage* next;
  };
  std::uint16_t sizeClass = 0;  // also in its slab's header (SlabHeader)
  std::atomic<std::uint8_t> state{kStateFree};
  // The tag of the arena whose slab holds this block (PoolArena::tag; 0 for direct blocks). Fixed
  // for the block's life: a block is only ever paired with chunks of its own arena. The release
  // fast path compares it with its thread cache's: no pointer chain (chunk -> arena) to follow.
  std::uint32_t arenaTag = 0;

  PooledStorage() : chunk(nullptr), leak(nullptr) {}
  bool isDirect() const noexcept { return sizeClass == kDirectClass; }
};
static_assert(sizeof(PooledStorage) == 64, "one cache line per control block");

/// One size class of a thread cache (ThreadCache::Bin, which documents the accounting): a LIFO
/// stack of free blocks of that class, touched only by the cache's thread (other threads read the
/// counters for stats()).
struct alignas(64) PoolBin {
  PooledStorage** items = nullptr;  // maxCap entries once a push needs them
  OwnedCount count;                 // entries held (the top is the most recently released)
  std::uint32_t cap = 0;            // entries reserved: count <= cap <= maxCap
  std::uint32_t maxCap = 0;         // configured bound; 0 = this class is never cached
  std::uint32_t size = 0;           // the class's slot size
  OwnedCounter pops;                // cache hits in this class
  OwnedCounter inflow;              // blocks in other than by a release, minus out other than a hit
  // The hit that brings pops to slowAt takes the slow path: slowAt = min(the sweep's pops,
  // sampleAt). So the fast paths test one value for both the cache's sweep and leak sampling.
  std::uint64_t slowAt = 0;
  std::uint64_t popsAtSweep = 0;  // pops at the last sweep (hits since = pops - this)
  // Leak detection `simple`: the allocation of this class that is sampled next is the one whose
  // hit brings pops to sampleAt (a miss brings it one closer, see allocateSlow); UINT64_MAX when
  // this cache does not sample.
  std::uint64_t sampleAt = UINT64_MAX;
};
static_assert(sizeof(PoolBin) == 64, "one cache line per size class");

/// The calling thread's most recently used thread cache: `id` is the memo id its allocator had when
/// the memo was set (ids are never reused, and 0 is no allocator; an allocator takes a new one when
/// its leak detection level changes, so each thread's memo goes stale), `bins` its bins. Trivially
/// constructed and destroyed, so reading it costs one thread-local load and no guard. Set and
/// cleared by the pool only.
struct PoolThreadMemo {
  std::uint64_t id;
  ThreadCache* cache;
  PoolBin* bins;  // cache's bins, one load less on the fast paths
};
extern constinit thread_local PoolThreadMemo tPoolMemo;

/// The switch and the tables of buffer()'s inline path, a member of every ByteBufAllocator (only
/// the pool turns it on). While an id is not kOff, it is the id under which the thread caches of
/// the allocator are memoised now (tPoolMemo.id; never 0, never reused; a new one at every leak
/// level change), and a request of n <= limit bytes whose thread memo matches pops a block from bin
/// lookup[smallClassIndex(n)] of the memo's cache. ids[kPoolAsan] is the one a caller's code
/// reads: [0] for code built without AddressSanitizer, which the pool leaves off when the library
/// itself poisons free slots. An allocator that leaves both at kOff (which no memo holds) is never
/// served inline.
struct PoolFastPath {
  static constexpr std::uint64_t kOff = UINT64_MAX;
  std::atomic<std::uint64_t> ids[2] = {kOff, kOff};
  const std::uint16_t* lookup = nullptr;
  std::size_t limit = 0;
};

#ifdef NETBUF_ASAN
inline namespace pool_asan {
#else
inline namespace pool_plain {
#endif

/// A cache hit: pops the bin's top block and makes it live (count 1, untracked), or returns
/// nullptr when the bin is empty or this hit is due to sweep the cache or to be sampled for leak
/// detection (the slow path does all three).
inline PooledStorage* popBin(PoolBin& b) noexcept {
  const std::uint32_t count = b.count;
  const std::uint64_t pops = b.pops.get() + 1;
  if (count != 0 && pops < b.slowAt) [[likely]] {
    PooledStorage* s = b.items[count - 1];
    b.count = count - 1;
    b.pops.set(pops);
    unpoison(s->data, s->size);
    s->refs.store(1, std::memory_order_relaxed);
    s->state.store(kStateLive, std::memory_order_relaxed);
    s->leak = nullptr;
    return s;
  }
  return nullptr;
}

/// buffer()'s inline path: the calling thread's cache hit for n bytes when `path` is on for this
/// thread's memo and n is small, else nullptr (the caller then calls allocateStorage).
[[gnu::always_inline]] inline Storage* popFast(const PoolFastPath& path, std::size_t n) noexcept {
  if (n <= path.limit && tPoolMemo.id == path.ids[kPoolAsan].load(std::memory_order_relaxed))
    return popBin(tPoolMemo.bins[path.lookup[smallClassIndex(n)]]);
  return nullptr;
}

}  // inline namespace

}  // namespace netbuf::detail
