// PoolCore's thread-cache operations: creating a thread's cache, misses and refills, the sorting
// of blocks other threads returned, the byte budget, sweeps, flushes and detaching at thread exit.

#include "detail/pool_core.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace netbuf::detail {

// The thread's memo (pool_fast_path.hpp): set by cacheSlow, cleared at thread exit and when its
// allocator is destroyed on this thread (other threads' stale memos never match: ids are unique).
constinit thread_local PoolThreadMemo tPoolMemo{0, nullptr, nullptr};

std::mutex& registryMutex() {
  static auto* m = new std::mutex();  // never destroyed: thread exits may follow static teardown
  return *m;
}

namespace {

thread_local bool tCachesGone = false;  // this thread's caches have been torn down (thread exit)
thread_local std::uint64_t tSampleRng = 0;  // xorshift64 state; 0 = not seeded yet
// Seeds for the threads' generators: the same sequence in every process (reproducible runs).
std::atomic<std::uint64_t> gSampleSeed{0x9E3779B97F4A7C15ULL};

/// Owns the calling thread's caches; its destructor (thread exit) returns them to their arenas.
struct TlsCaches {
  std::vector<ThreadCache*> list;
  ~TlsCaches() {
    tCachesGone = true;
    tPoolMemo = {0, nullptr, nullptr};
    std::lock_guard lock(registryMutex());
    for (ThreadCache* tc : list) {
      if (PoolCore* core = tc->core.load(std::memory_order_relaxed)) core->detachCache(tc);
      delete tc;
    }
    list.clear();
  }
};
thread_local TlsCaches tCaches;

}  // namespace

std::uint64_t nextSampleDistance(std::uint64_t interval) noexcept {
  if (interval <= 1) return 1;
  std::uint64_t x = tSampleRng;
  if (x == 0) [[unlikely]]
    x = gSampleSeed.fetch_add(0x9E3779B97F4A7C15ULL, std::memory_order_relaxed) | 1;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  tSampleRng = x;
  return 1 + x % (2 * interval - 1);
}

ThreadCache* PoolCore::cacheSlow(bool create) {
  if (tCachesGone || !options.useThreadCache) return nullptr;
  // Acquire: the leak level syncSampling reads is at least the one stored before this id.
  const std::uint64_t memo = memoId.load(std::memory_order_acquire);
  for (ThreadCache* tc : tCaches.list) {
    if (tc->coreId == id && tc->core.load(std::memory_order_relaxed) == this) {
      // A thread that alternates between allocators comes here at every switch: the bins are
      // walked only when the level has changed since.
      if (tc->sampledFor != memo) {
        syncSampling(tc);
        tc->sampledFor = memo;
      }
      tPoolMemo = {memo, tc, tc->bins.data()};
      return tc;
    }
  }
  if (!create) return nullptr;
  std::lock_guard lock(registryMutex());
  // Drop caches orphaned by allocators destroyed since (they hold nothing any more). The memo may
  // name one of them: clear it first, so that it never points at a deleted cache (the release
  // fast path reads it), even when the allocation below throws.
  std::erase_if(tCaches.list, [](ThreadCache* tc) {
    if (tc->core.load(std::memory_order_relaxed) != nullptr) return false;
    if (tPoolMemo.cache == tc) tPoolMemo = {0, nullptr, nullptr};
    delete tc;
    return true;
  });
  // Everything that can throw (std::bad_alloc) comes first; the cache is registered (the arena's
  // thread count, the lists) only once it is whole.
  auto tc = std::make_unique<ThreadCache>();
  tc->coreId = id;
  tc->core.store(this, std::memory_order_relaxed);
  tc->binStore.reset(new ThreadCache::Bin[classes.sizes.size()]);
  tc->bins = {tc->binStore.get(), classes.sizes.size()};
  tc->remoteFrees = std::make_unique<OwnedCounter[]>(arenas.size());
  tc->remoteFreeBytes = std::make_unique<OwnedCounter[]>(arenas.size());
  caches.reserve(caches.size() + 1);
  tCaches.list.reserve(tCaches.list.size() + 1);
  const std::uint64_t interval = options.cacheTrimInterval;
  for (std::size_t c = 0; c < classes.sizes.size(); ++c) {
    // Normal classes: at most normalCacheSize entries and at most a quarter of the thread's byte
    // budget per class (so 1 MiB buffers get 2 entries by default, 64 KiB ones 32), at least 1.
    std::size_t cap = 0;
    if (c < classes.numSmall)
      cap = options.smallCacheSize;
    else if (classes.sizes[c] <= options.maxCachedBufferCapacity && options.normalCacheSize != 0)
      cap = std::clamp<std::size_t>(options.maxCachedBytesPerThread / 4 / classes.sizes[c], 1,
                                    options.normalCacheSize);
    tc->bins[c].maxCap = static_cast<std::uint32_t>(std::min<std::size_t>(cap, 1u << 20));
    tc->bins[c].size = classes.sizes[c];
    setSlowAt(tc->bins[c], interval);
  }
  syncSampling(tc.get());
  tc->sampledFor = memo;
  tc->maxCachedBytes = options.maxCachedBytesPerThread;
  PoolArena* best = arenas.front().get();
  for (auto& a : arenas)
    if (a->threads.load(std::memory_order_relaxed) < best->threads.load(std::memory_order_relaxed))
      best = a.get();
  best->threads.fetch_add(1, std::memory_order_relaxed);
  tc->arena = best;
  tc->releaseTag.store(best->tag, std::memory_order_relaxed);
  caches.push_back(tc.get());
  tCaches.list.push_back(tc.get());
  tPoolMemo = {memo, tc.get(), tc->bins.data()};
  return tc.release();
}

// Sets the bins' leak sampling for the allocator's level: on at `simple` (a bin that was sampling
// keeps its schedule; one that was not draws the distance to its first sample), off otherwise
// (`paranoid` tracks every allocation on the slow path, which it takes every time).
void PoolCore::syncSampling(ThreadCache* tc) noexcept {
  const bool sampling = leakLevel.load(std::memory_order_relaxed) == LeakDetectionLevel::Simple;
  for (ThreadCache::Bin& b : tc->bins) {
    if (!sampling)
      b.sampleAt = UINT64_MAX;
    else if (b.sampleAt == UINT64_MAX)
      b.sampleAt = addSaturating(b.pops.get(), nextSampleDistance(options.leakSamplingInterval));
    setSlowAt(b, options.cacheTrimInterval);
  }
}

// Sorts tc->remote into the bins until a block of class `cls` turns up (returned, not binned) or
// the list ends. Blocks that do not fit their bin go back to the arena under one lock.
PooledStorage* PoolCore::takeRemote(ThreadCache* tc, unsigned cls) noexcept {
  PooledStorage* overflow = nullptr;
  PooledStorage* found = nullptr;
  while (tc->remote != nullptr) {
    PooledStorage* s = tc->remote;
    tc->remote = s->next;
    if (s->sizeClass == cls) {
      // The next block was written by the releasing core: start fetching its line now, so that
      // the miss overlaps with the caller's work instead of stalling the next allocation.
      if (tc->remote != nullptr) __builtin_prefetch(tc->remote, 1);
      found = s;
      break;
    }
    ThreadCache::Bin& b = tc->bins[s->sizeClass];
    if (b.count < b.cap || growCap(tc, b, 1)) {
      b.items[b.count++] = s;
      b.inflow.add(1);
    } else {
      s->next = overflow;
      overflow = s;
    }
  }
  tc->remoteUsed = true;
  if (overflow != nullptr) {
    PoolArena& a = *tc->arena;
    std::lock_guard lock(a.mutex);
    while (overflow != nullptr) {
      PooledStorage* next = overflow->next;
      freeInArena(a, overflow);
      overflow = next;
    }
  }
  return found;
}

// tc's arena mutex is held.
void PoolCore::returnRemoteLocked(ThreadCache* tc) noexcept {
  while (tc->remote != nullptr) {
    PooledStorage* next = tc->remote->next;
    freeInArena(*tc->arena, tc->remote);
    tc->remote = next;
  }
}

PooledStorage* PoolCore::allocateMiss(ThreadCache* tc, unsigned cls) {
  tc->misses.add(1);
  ++tc->missesSinceReclaim;
  ThreadCache::Bin& b = tc->bins[cls];
  PoolArena& a = *tc->arena;
  if (tc->remote == nullptr && a.returnHead.load(std::memory_order_relaxed) != nullptr)
    tc->remote = a.returnHead.exchange(nullptr, std::memory_order_acquire);
  if (tc->remote != nullptr) {
    if (PooledStorage* s = takeRemote(tc, cls)) return s;
    if (b.count != 0) {
      PooledStorage* s = b.items[--b.count];
      b.inflow.sub(1);  // leaves the bin, but as a miss
      return s;
    }
  }
  // Refill small classes in a batch under one lock; the batch is bounded in bytes so that rarely
  // used large slots are not hoarded, and by what the bin can reserve.
  std::size_t batch = 1;
  if (cls < classes.numSmall && b.maxCap > 1) {
    const auto want = static_cast<std::uint32_t>(std::min<std::size_t>(
        {b.maxCap / 2, std::max<std::size_t>(1, 16384 / classes.sizes[cls]), 64}));
    if (want > 1 && b.cap - b.count < want - 1) growCap(tc, b, want - 1);
    batch = 1 + std::min<std::size_t>(want - 1, b.cap - b.count);
  }
  PooledStorage* first = nullptr;
  {
    std::lock_guard lock(a.mutex);
    first = allocateInArena(a, cls);  // may throw: the caller uncounts the miss
    if (first == nullptr) return nullptr;
    try {
      for (std::size_t i = 1; i < batch; ++i) {
        PooledStorage* s = allocateInArena(a, cls);
        if (s == nullptr) break;
        b.items[b.count++] = s;
        b.inflow.add(1);
      }
    } catch (const std::bad_alloc&) {  // out of memory for the refill: `first` still serves
    }
  }
  return first;
}

// Reserves room for more entries in b: `want` of them, or about 16 KiB of them for small classes,
// fewer when maxCap or the thread's byte budget leaves less; allocates the entry array on first
// use. False when not even one more entry fits.
//
// The budget may be held by reservations of bins that no longer hold their entries (a burst of one
// class, then a working set of another, with no hits to trigger a sweep). So when it runs out and
// the thread has missed kReclaimMisses times since the last such reclaim, every bin gives back the
// reservation it does not use (cap down to count; no block moves) and this bin tries again.
bool PoolCore::growCap(ThreadCache* tc, ThreadCache::Bin& b, std::uint32_t want) noexcept {
  constexpr std::uint32_t kReclaimMisses = 64;
  if (b.cap >= b.maxCap) return false;
  if (b.items == nullptr) {
    b.items = new (std::nothrow) PooledStorage*[b.maxCap];
    if (b.items == nullptr) return false;
  }
  const std::size_t step = std::max<std::size_t>({want, 16384 / b.size, 1});
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::size_t budget = tc->maxCachedBytes - tc->reservedBytes;
    const auto add = static_cast<std::uint32_t>(
        std::min<std::size_t>({step, b.maxCap - b.cap, budget / b.size}));
    if (add != 0) {
      b.cap += add;
      tc->reservedBytes += std::size_t{add} * b.size;
      return true;
    }
    if (tc->missesSinceReclaim < kReclaimMisses) return false;
    tc->missesSinceReclaim = 0;
    for (ThreadCache::Bin& other : tc->bins) tc->releaseUnusedReservation(other);
  }
  return false;
}

// Returns b's n oldest entries (the bottom of the stack) to arena a, whose mutex is held.
void PoolCore::returnOldest(PoolArena& a, ThreadCache::Bin& b, std::uint32_t n) noexcept {
  if (n == 0) return;  // (a bin never used has no items array: memmove must not see null)
  for (std::uint32_t i = 0; i < n; ++i) freeInArena(a, b.items[i]);
  std::memmove(b.items, b.items + n, (b.count - n) * sizeof(PooledStorage*));
  b.count -= n;
  b.inflow.sub(n);
}

// A release of this thread's arena's block that the release fast path did not take: into the bin
// when it has room or can reserve more; when the bin is at its bound, its older half goes back to
// the arena in one go and the hot half stays; a class that cannot be cached at all goes straight
// back.
void PoolCore::releaseToCache(ThreadCache* tc, ThreadCache::Bin& b, PooledStorage* s) noexcept {
  if (b.count < b.cap || growCap(tc, b, 1)) {
    b.items[b.count++] = s;
    return;
  }
  PoolArena& a = *tc->arena;
  std::lock_guard lock(a.mutex);
  if (b.cap != 0 && b.count == b.cap) {
    returnOldest(a, b, (b.count + 1) / 2);  // at least one, so the push below has room
    b.items[b.count++] = s;
    return;
  }
  tc->slowFrees.add(1);
  tc->slowFreeBytes.add(s->size);
  freeInArena(a, s);
}

// After cacheTrimInterval hits of one class, or misses of the thread: each bin gives back the
// entries it did not use since the last sweep (the oldest ones) and the reservation beyond what it
// holds.
void PoolCore::sweep(ThreadCache* tc) noexcept {
  std::lock_guard lock(tc->arena->mutex);
  if (!tc->remoteUsed) returnRemoteLocked(tc);
  tc->remoteUsed = false;
  tc->missesSinceSweep = 0;
  const std::uint64_t interval = options.cacheTrimInterval;
  for (ThreadCache::Bin& b : tc->bins) {
    const std::uint64_t pops = b.pops.get();
    const std::uint64_t used = pops - b.popsAtSweep;
    if (b.count > used) returnOldest(*tc->arena, b, static_cast<std::uint32_t>(b.count - used));
    tc->releaseUnusedReservation(b);
    b.popsAtSweep = pops;
    setSlowAt(b, interval);
  }
}

void PoolCore::flushPending(ThreadCache* tc) noexcept {
  if (tc->pendingHead == nullptr) return;
  tc->pendingArena->pushReturn(tc->pendingHead, tc->pendingTail);
  tc->pendingHead = tc->pendingTail = nullptr;
  tc->pendingArena = nullptr;
  tc->pendingCount = 0;
  tc->pendingBytes = 0;
}

void PoolCore::flushCache(ThreadCache* tc) noexcept {
  flushPending(tc);  // lock-free: the blocks' arena is drained by its own threads or by callers
  std::lock_guard lock(tc->arena->mutex);
  returnRemoteLocked(tc);
  for (ThreadCache::Bin& b : tc->bins) {
    returnOldest(*tc->arena, b, b.count);
    delete[] b.items;
    b.items = nullptr;
    b.cap = 0;
  }
  tc->reservedBytes = 0;
}

// registryMutex() is held.
void PoolCore::detachCache(ThreadCache* tc) noexcept {
  flushCache(tc);
  PoolArena& a = *tc->arena;
  const ThreadCache::Totals t = tc->totals();
  a.hits.add(t.hits);
  a.misses.add(tc->misses.get());
  // Cache allocations are hits + misses; fold them into the arena's own counters.
  a.allocs.add(t.hits + tc->misses.get() - tc->direct.get());
  a.allocBytes.add(t.allocBytes);
  a.frees.add(t.frees);
  a.freeBytes.add(t.freeBytes);
  for (std::size_t i = 0; i < arenas.size(); ++i) {
    arenas[i]->frees.add(tc->remoteFrees[i].get());
    arenas[i]->freeBytes.add(tc->remoteFreeBytes[i].get());
  }
  a.threads.fetch_sub(1, std::memory_order_relaxed);
  tc->releaseTag.store(kDetachedTag, std::memory_order_relaxed);
  std::erase(caches, tc);
  tc->core.store(nullptr, std::memory_order_relaxed);
}

}  // namespace netbuf::detail
