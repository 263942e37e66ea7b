#pragma once
// PoolCore: everything a PooledByteBufAllocator owns, behind its one pointer. Its operations are
// spread by concept: arenas in pool_arena.cpp, thread caches in thread_cache.cpp, leak tracking in
// leak_record.cpp, allocation, release and teardown in pooled_byte_buf_allocator.cpp.
//
// Locking (the order is registry -> arena -> leaks; no path takes two arenas):
//  - registryMutex(): the set of thread caches of every allocator, cache creation, thread exit,
//    stats snapshots and allocator destruction.
//  - PoolArena::mutex: the arena's chunks, subpages and control-block free list.
//  - PoolCore::leakMutex: the list of tracked allocations.
// Lock-free: a thread's own cache (only its thread touches it), the arenas' return stacks (MPSC:
// any thread pushes with a CAS, a drainer takes the whole list with one exchange, so no ABA), and
// every counter (relaxed atomics; single-writer ones are updated with load + store).

#include "leak_record.hpp"
#include "pool_arena.hpp"
#include "shared_counter.hpp"
#include "size_classes.hpp"
#include "thread_cache.hpp"

#include <netbuf/buffer/detail/pool_fast_path.hpp>
#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace netbuf::detail {

struct PoolCore {
  std::uint64_t id = 0;  // identity: immutable, never 0, never reused
  // The id under which threads memoise their cache of this allocator (tPoolMemo.id) and, while the
  // inline path is on, the allocator's fast-path id. A fresh one from the same counter as `id` at
  // construction and at every change of the leak detection level: every thread's memo then goes
  // stale, so its next allocation takes cacheSlow, which sets its bins' sampling for the new level
  // (syncSampling). Released after the level is stored, acquired before it is read.
  std::atomic<std::uint64_t> memoId{0};
  PooledByteBufAllocator* facade = nullptr;
  PooledAllocatorOptions options;
  SizeClasses classes;
  std::vector<std::unique_ptr<PoolArena>> arenas;
  std::vector<ThreadCache*> caches;  // guarded by registryMutex()
  std::atomic<LeakDetectionLevel> leakLevel{LeakDetectionLevel::Disabled};
  SharedCounter totalChunks, hugeAllocs, hugeLive, hugeLiveBytes, fallbacks, doubleReleases;
  // Leak tracking, all guarded by leakMutex: the live records, spare records for reuse (at most
  // kMaxFreeRecords, linked through `next`), and at simple the backtrace of each caller seen
  // (at most kMaxLeakSites).
  std::mutex leakMutex;
  LeakRecord* leakHead = nullptr;
  std::uint64_t leakSequence = 0;
  LeakRecord* freeRecords = nullptr;
  std::size_t freeRecordCount = 0;
  std::unordered_map<void*, std::unique_ptr<LeakTrace>> siteTraces;

  ~PoolCore();

  ThreadCache* cacheSlow(bool create);
  PooledStorage* allocateMiss(ThreadCache* tc, unsigned cls);
  PooledStorage* allocateDirectly(unsigned cls);
  PooledStorage* allocateHuge(std::size_t n, bool fallback);
  void release(PooledStorage* s) noexcept;
  void releaseToCache(ThreadCache* tc, ThreadCache::Bin& bin, PooledStorage* s) noexcept;
  void returnOldest(PoolArena& a, ThreadCache::Bin& b, std::uint32_t n) noexcept;
  static bool growCap(ThreadCache* tc, ThreadCache::Bin& b, std::uint32_t want) noexcept;
  PooledStorage* takeRemote(ThreadCache* tc, unsigned cls) noexcept;
  void returnRemoteLocked(ThreadCache* tc) noexcept;
  static void flushPending(ThreadCache* tc) noexcept;
  void drainLocked(PoolArena& a) noexcept;
  void sweep(ThreadCache* tc) noexcept;
  void flushCache(ThreadCache* tc) noexcept;
  void detachCache(ThreadCache* tc) noexcept;
  void track(PooledStorage* s, std::size_t requested, void* caller, bool ownTrace) noexcept;
  void untrack(PooledStorage* s) noexcept;
  void syncSampling(ThreadCache* tc) noexcept;

  // Arena internals; the arena mutex is held.
  PooledStorage* allocateInArena(PoolArena& a, unsigned cls);
  void freeInArena(PoolArena& a, PooledStorage* s) noexcept;
  std::size_t allocateRun(PoolArena& a, std::size_t pages, PoolChunk*& chunkOut);
  void freeRun(PoolArena& a, PoolChunk* c, std::size_t first) noexcept;
  PooledStorage* takeBlock(PoolArena& a);
  void destroyChunk(PoolArena& a, PoolChunk* c) noexcept;
};

/// The control block's `destroy` for every pooled block: the release fast path, else
/// PoolCore::release.
void destroyPooled(Storage* s) noexcept;

/// The allocator a block belongs to (see PooledStorage's invariants).
inline PoolCore* coreOf(const PooledStorage* s) noexcept {
  return s->isDirect() ? s->core : s->chunk->arena->core;
}

/// The calling thread's cache of `core` (its memo when current), created when `create` and none
/// exists yet; nullptr without one.
inline ThreadCache* cacheFor(PoolCore* core, bool create) {
  if (tPoolMemo.id == core->memoId.load(std::memory_order_relaxed)) [[likely]]
    return tPoolMemo.cache;
  return core->cacheSlow(create);
}

}  // namespace netbuf::detail
