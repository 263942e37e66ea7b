// PooledByteBufAllocator: the public allocator and its statistics, and PoolCore's allocation and
// release paths (kept in one file: the release fast path, PoolCore::release and the allocation
// slow path are the hot code). See docs/allocator.md for the picture and detail/pool_core.hpp for
// the locking; arenas, thread caches and leak records have files of their own.

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include "detail/intrusive_list.hpp"
#include "detail/pool_core.hpp"
#include "detail/slab_header.hpp"
#include "detail/subpage.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace netbuf {
namespace detail {
namespace {

constexpr std::size_t kDirectHeader = 128;  // room for the control block, keeps data 64-aligned
constexpr std::align_val_t kDirectAlign{64};

/// Bounds of a thread's pending batch of other arenas' blocks (ThreadCache::pendingHead).
constexpr std::uint32_t kReturnBatch = 32;
constexpr std::size_t kReturnBatchBytes = 64 * 1024;

std::atomic<std::uint64_t> gNextId{1};  // PoolCore ids and memo ids: never 0, never reused

thread_local std::uint64_t tSampleLeft = 0;  // allocations outside bins up to the next sample

std::atomic<int> gDefaultLeakLevel{-1};

LeakDetectionLevel levelFromEnvironment() {
  const char* env = std::getenv("NETBUF_LEAK_DETECTION");
  if (env == nullptr || *env == '\0') return LeakDetectionLevel::Simple;
  try {
    return parseLeakDetectionLevel(env);
  } catch (const Error&) {
    std::fprintf(stderr,
                 "netbuf: ignoring NETBUF_LEAK_DETECTION=%s (expected disabled, simple or "
                 "paranoid)\n",
                 env);
    return LeakDetectionLevel::Simple;
  }
}

}  // namespace

// ------------------------------------------------------------------ huge and direct

PooledStorage* PoolCore::allocateHuge(std::size_t n, bool fallback) {
  if (n > kMaxCapacityLimit) throw std::bad_alloc();  // so n + header cannot overflow
  void* raw = ::operator new(kDirectHeader + n, kDirectAlign);
  static_assert(sizeof(PooledStorage) <= kDirectHeader);
  auto* s = new (raw) PooledStorage();
  s->kind = StorageKind::Pooled;
  s->data = static_cast<std::byte*>(raw) + kDirectHeader;
  s->size = n;
  s->allocator = facade;
  s->destroy = &destroyPooled;
  s->core = this;
  s->sizeClass = kDirectClass;
  hugeAllocs.add(fallback ? 0 : 1);
  fallbacks.add(fallback ? 1 : 0);
  hugeLive.add(1);
  hugeLiveBytes.add(n);
  return s;
}

// ------------------------------------------------------------------ release

// The release fast path: a live, untracked pooled block (state kStateLive; tracked and direct
// blocks are kStateLiveSlow) released on a thread whose most recently used cache belongs to the
// block's arena goes onto that cache's stack. It reads the block's one cache line (the arena tag
// included, so no pointer chain to the arena) and the thread's memo; everything else (direct
// blocks, tracked blocks, double releases, another arena, a full bin) takes PoolCore::release.
void destroyPooled(Storage* storage) noexcept {
  auto* s = static_cast<PooledStorage*>(storage);
  ThreadCache* tc = tPoolMemo.cache;
  if (s->state.load(std::memory_order_relaxed) == kStateLive && tc != nullptr &&
      tc->releaseTag.load(std::memory_order_relaxed) == s->arenaTag) [[likely]] {
    // Same arena, hence same allocator: the block's class indexes this cache's bins. It is read
    // from the slab header (see SlabHeader), not from the block's own line. The push is the whole
    // of the accounting (see ThreadCache); cap is within the thread's byte budget.
    assert(slabClassOf(s) == s->sizeClass);
    ThreadCache::Bin& b = tPoolMemo.bins[slabClassOf(s)];
    const std::uint32_t n = b.count;
    if (n < b.cap) [[likely]] {
      s->state.store(kStateFree, std::memory_order_relaxed);
      poison(s->data, s->size);
      b.items[n] = s;
      b.count = n + 1;
      return;
    }
  }
  coreOf(s)->release(s);
}

void PoolCore::release(PooledStorage* s) noexcept {
  if (s->state.load(std::memory_order_relaxed) == kStateFree) [[unlikely]] {
    // The count went to zero twice (a retain after the last release): returning the slot again
    // would hand it to two owners. Ignore it, count it, say so.
    doubleReleases.add(1);
    std::fprintf(stderr, "netbuf: pooled buffer %p released twice (ignored)\n",
                 static_cast<void*>(s->data));
    return;
  }
  s->state.store(kStateFree, std::memory_order_relaxed);
  if (s->leak != nullptr) [[unlikely]]
    untrack(s);
  if (s->isDirect()) [[unlikely]] {
    hugeLive.sub(1);
    hugeLiveBytes.sub(s->size);
    s->~PooledStorage();
    ::operator delete(static_cast<void*>(s), kDirectAlign);
    return;
  }
  poison(s->data, s->size);
  // A thread that releases other arenas' blocks gets a cache too: it counts those releases.
  ThreadCache* tc = nullptr;
  try {
    tc = cacheFor(this, true);
  } catch (...) {  // out of memory: count on the arena instead
  }
  PoolArena* arena = s->chunk->arena;
  if (tc != nullptr && tc->arena == arena) [[likely]] {
    releaseToCache(tc, tc->bins[s->sizeClass], s);
    return;
  }
  // Another arena's slot (or no cache on this thread): onto the arena's return stack, no lock.
  // The arena's threads take the whole stack on their next cache miss; stats() and trim() drain
  // it too. The release is counted here (by this thread's cache when it has one), not by whoever
  // drains. With a cache, blocks are batched per arena: one CAS per kReturnBatch blocks instead of
  // one per block (a consumer thread releasing everything a producer allocates spends its time
  // there and on the block's cache miss).
  if (tc != nullptr) {
    tc->remoteFrees[arena->index].add(1);
    tc->remoteFreeBytes[arena->index].add(s->size);
    if (tc->pendingArena != arena) {
      flushPending(tc);
      tc->pendingArena = arena;
      tc->pendingTail = s;
    }
    s->next = tc->pendingHead;
    tc->pendingHead = s;
    tc->pendingBytes += s->size;
    if (++tc->pendingCount >= kReturnBatch || tc->pendingBytes >= kReturnBatchBytes)
      flushPending(tc);
    return;
  }
  arena->frees.add(1);
  arena->freeBytes.add(s->size);
  arena->pushReturn(s, s);
}

// ------------------------------------------------------------------ teardown

PoolCore::~PoolCore() {
  for (auto& a : arenas) {
    for (PoolChunk* c : a->chunks) {
      for (std::size_t p = 0; p < c->numPages; ++p) {
        Subpage* sp = c->subpageOf[p];
        // Each subpage covers consecutive pages: delete it at the first (pointers compared only).
        if (sp != nullptr && (p == 0 || c->subpageOf[p - 1] != sp)) delete sp;
      }
      unpoison(c->memory, classes.chunkSize);
      ::munmap(c->memory, classes.chunkSize);
      delete c;
    }
    for (void* slab : a->slabs) ::operator delete (slab, std::align_val_t{kSlabBytes});
  }
  for (LeakRecord* list : {leakHead, freeRecords}) {
    while (list != nullptr) {
      LeakRecord* r = list;
      list = r->next;
      if (r->ownsTrace) delete r->trace;
      delete r;
    }
  }
}

}  // namespace detail

// ================================================================== public API

using detail::PoolCore;
using detail::PooledStorage;

LeakDetectionLevel PooledByteBufAllocator::defaultLeakDetectionLevel() noexcept {
  int v = detail::gDefaultLeakLevel.load(std::memory_order_acquire);
  if (v < 0) {
    int expected = -1;
    v = static_cast<int>(detail::levelFromEnvironment());
    if (!detail::gDefaultLeakLevel.compare_exchange_strong(expected, v)) v = expected;
  }
  return static_cast<LeakDetectionLevel>(v);
}

void PooledByteBufAllocator::setDefaultLeakDetectionLevel(LeakDetectionLevel level) noexcept {
  detail::gDefaultLeakLevel.store(static_cast<int>(level), std::memory_order_release);
}

PooledByteBufAllocator::PooledByteBufAllocator()
    : PooledByteBufAllocator(PooledAllocatorOptions{}) {}

PooledByteBufAllocator::PooledByteBufAllocator(const PooledAllocatorOptions& o) {
  auto bad = [](const char* what, std::size_t value, const char* expected) {
    throw IllegalArgumentError(
        fmt::format("PooledByteBufAllocator: {}: {} (expected: {})", what, value, expected));
  };
  if (!std::has_single_bit(o.pageSize) || o.pageSize < 4096 || o.pageSize > (std::size_t{1} << 20))
    bad("pageSize", o.pageSize, "a power of two in [4096, 1 MiB]");
  if (o.chunkSize < o.pageSize || o.chunkSize > (std::size_t{1} << 30) ||
      !std::has_single_bit(o.chunkSize))
    bad("chunkSize", o.chunkSize, "pageSize times a power of two, at most 1 GiB");
  if (o.smallCacheSize > (1u << 20) || o.normalCacheSize > (1u << 20))
    bad("cache size", std::max(o.smallCacheSize, o.normalCacheSize), "at most 2^20 entries");
  if (o.numArenas > 1024) bad("numArenas", o.numArenas, "at most 1024");
  if (o.leakSamplingInterval == 0 || o.leakSamplingInterval > (std::size_t{1} << 30))
    bad("leakSamplingInterval", o.leakSamplingInterval, "in [1, 2^30]");
  auto core = std::make_unique<PoolCore>();
  core->id = detail::gNextId.fetch_add(1, std::memory_order_relaxed);
  core->memoId.store(core->id, std::memory_order_relaxed);
  core->facade = this;
  core->options = o;
  if (core->options.cacheTrimInterval == 0) core->options.cacheTrimInterval = SIZE_MAX;
  core->classes.init(o.pageSize, o.chunkSize);
  std::size_t n = o.numArenas;
  if (n == 0) n = std::max(1u, std::thread::hardware_concurrency()) * std::size_t{2};
  for (std::size_t i = 0; i < n; ++i) {
    auto a = std::make_unique<detail::PoolArena>();
    a->core = core.get();
    a->index = static_cast<unsigned>(i);
    a->partial.assign(core->classes.numSmall, nullptr);
    core->arenas.push_back(std::move(a));
  }
  core->leakLevel.store(o.leakDetection.value_or(defaultLeakDetectionLevel()));
  core_ = core.release();
  fastPath_.lookup = core_->classes.smallLookup.data();
  fastPath_.limit = core_->classes.smallLimit;
  updateFastPath();
}

// The inline path (ByteBufAllocator::buffer) serves hits while threads have caches and leak
// detection is `disabled` or `simple` (whose samples are due at a bin's slowAt, so they take the
// slow path); at `paranoid` it is off and every allocation comes here. Code built without ASan
// cannot unpoison the slots this library poisons when it is built with ASan: for such code the
// path stays off.
void PooledByteBufAllocator::updateFastPath() noexcept {
  const bool on = core_->options.useThreadCache &&
                  core_->leakLevel.load(std::memory_order_relaxed) != LeakDetectionLevel::Paranoid;
  constexpr std::uint64_t kOff = detail::PoolFastPath::kOff;
  const std::uint64_t id = on ? core_->memoId.load(std::memory_order_relaxed) : kOff;
  fastPath_.ids[1].store(id, std::memory_order_relaxed);
  fastPath_.ids[0].store(detail::kPoolAsan == 0 ? id : kOff, std::memory_order_relaxed);
}

PooledByteBufAllocator::~PooledByteBufAllocator() {
  PoolCore* c = core_;
  {
    std::lock_guard lock(detail::registryMutex());
    const std::vector<detail::ThreadCache*> caches = c->caches;
    for (detail::ThreadCache* tc : caches) c->detachCache(tc);
    if (detail::tPoolMemo.cache != nullptr && detail::tPoolMemo.cache->coreId == c->id)
      detail::tPoolMemo = {0, nullptr, nullptr};
  }
  for (auto& a : c->arenas) {
    std::lock_guard lock(a->mutex);
    c->drainLocked(*a);
  }
  const PoolStats s = totalStats();
  if (s.liveBuffers != 0) {
    // Keep the memory: the leaked buffers still point into it, and their release must not touch
    // freed memory. Say what leaked.
    std::fprintf(stderr,
                 "netbuf: PooledByteBufAllocator destroyed with %llu live buffer(s), %llu bytes; "
                 "its memory is kept\n%s",
                 static_cast<unsigned long long>(s.liveBuffers),
                 static_cast<unsigned long long>(s.liveBytes), reportLeaks().c_str());
    return;
  }
  delete c;
}

namespace detail {

/// Everything but a cache hit: huge requests, misses, no cache yet, sweeps, leak tracking.
/// `caller` is the return address into the code that asked for the buffer (the leak site).
[[gnu::noinline]] Storage* allocateSlow(PoolCore* c, std::size_t n, void* caller) {
  PooledStorage* s;
  // Leak sampling at `simple`: an allocation through a sampling bin is sampled by the bin's
  // schedule (binSampling, sampled); any other by the thread's count.
  bool binSampling = false, sampled = false;
  if (n > c->classes.chunkSize) [[unlikely]] {
    s = c->allocateHuge(n, false);
  } else {
    const unsigned cls = c->classes.classOf(n);
    ThreadCache* tc = cacheFor(c, true);
    if (tc != nullptr) [[likely]] {
      ThreadCache::Bin& b = tc->bins[cls];
      const std::uint64_t interval = c->options.cacheTrimInterval;
      binSampling = b.sampleAt != UINT64_MAX;
      if (b.count != 0) {
        s = b.items[--b.count];
        const std::uint64_t pops = b.pops.get() + 1;
        b.pops.set(pops);
        if (pops >= b.sampleAt) {
          sampled = true;
          b.sampleAt = addSaturating(pops, nextSampleDistance(c->options.leakSamplingInterval));
        }
        if (pops >= addSaturating(b.popsAtSweep, interval)) [[unlikely]]
          c->sweep(tc);  // sets slowAt
        else
          setSlowAt(b, interval);
      } else {
        // A miss counts towards the bin's sample as a hit does: it brings sampleAt one closer.
        if (binSampling) {
          if (b.sampleAt <= b.pops.get() + 1) {
            sampled = true;
            b.sampleAt =
                addSaturating(b.pops.get(), nextSampleDistance(c->options.leakSamplingInterval));
          } else {
            --b.sampleAt;
          }
          setSlowAt(b, interval);
        }
        try {
          s = c->allocateMiss(tc, cls);
          if (s == nullptr) {
            s = c->allocateHuge(c->classes.sizes[cls], true);
            tc->direct.add(1);
          } else {
            tc->missBytes.add(s->size);
          }
        } catch (...) {
          tc->misses.sub(1);  // allocateMiss counted it, but nothing was allocated
          throw;
        }
        if (++tc->missesSinceSweep >= c->options.cacheTrimInterval) [[unlikely]]
          c->sweep(tc);
      }
    } else {
      s = c->allocateDirectly(cls);
      if (s == nullptr) s = c->allocateHuge(c->classes.sizes[cls], true);
    }
  }
  unpoison(s->data, s->size);
  s->refs.store(1, std::memory_order_relaxed);
  // Direct blocks never take the release fast path; track() marks tracked ones the same way.
  s->state.store(s->isDirect() ? kStateLiveSlow : kStateLive, std::memory_order_relaxed);
  s->leak = nullptr;
  const LeakDetectionLevel level = c->leakLevel.load(std::memory_order_relaxed);
  if (level != LeakDetectionLevel::Disabled) [[unlikely]] {
    if (!binSampling && level == LeakDetectionLevel::Simple) {
      // tSampleLeft counts this allocation too; 0 (after a sample, or never drawn): draw.
      if (tSampleLeft == 0) tSampleLeft = nextSampleDistance(c->options.leakSamplingInterval);
      sampled = --tSampleLeft == 0;
    }
    if (level == LeakDetectionLevel::Paranoid || sampled)
      c->track(s, n, caller, level == LeakDetectionLevel::Paranoid);
  }
  return s;
}

}  // namespace detail

namespace detail {

// The out-of-line fast path, for allocateStorage when buffer()'s inline path did
// not serve the request (a size above its limit, another allocator's memo, leak detection at
// paranoid, an empty bin, a sweep or sample due): a cache hit while the allocator's fast-path id is
// on (fastId: see updateFastPath). nullptr sends the caller to allocateSlow, which handles
// everything else.
inline PooledStorage* popCached(PoolCore* c, std::uint64_t fastId, std::size_t n) noexcept {
  if (n <= c->classes.chunkSize && tPoolMemo.id == fastId) [[likely]]
    return popBin(tPoolMemo.bins[c->classes.classOf(n)]);  // the hit that reaches slowAt: slow
  return nullptr;
}

}  // namespace detail

// Never inlined, so that its return address is the caller's code (buffer() is inline there): the
// allocation site that leak detection records.
[[gnu::noinline]] detail::Storage* PooledByteBufAllocator::allocateStorage(std::size_t n) {
  if (PooledStorage* s = detail::popCached(
          core_, fastPath_.ids[detail::kPoolAsan].load(std::memory_order_relaxed), n)) [[likely]]
    return s;
  return detail::allocateSlow(core_, n, __builtin_return_address(0));
}

AllocatorStats PooledByteBufAllocator::stats() const {
  PoolCore* c = core_;
  for (auto& a : c->arenas) {
    std::lock_guard lock(a->mutex);
    c->drainLocked(*a);
  }
  AllocatorStats out;
  out.arenas.resize(c->arenas.size());
  std::vector<std::uint64_t> allocs(c->arenas.size()), frees(c->arenas.size()),
      allocBytes(c->arenas.size()), freeBytes(c->arenas.size());
  std::lock_guard lock(detail::registryMutex());
  for (std::size_t i = 0; i < c->arenas.size(); ++i) {
    const detail::PoolArena& a = *c->arenas[i];
    PoolStats& p = out.arenas[i];
    allocs[i] = a.allocs.get();
    frees[i] = a.frees.get();
    allocBytes[i] = a.allocBytes.get();
    freeBytes[i] = a.freeBytes.get();
    p.cacheHits = a.hits.get();
    p.cacheMisses = a.misses.get();
    p.chunks = a.chunkCount.get();
    p.chunkBytes = p.chunks * c->classes.chunkSize;
    p.controlBlockBytes = a.slabBytes.get();
  }
  for (const detail::ThreadCache* tc : c->caches) {
    const std::size_t i = tc->arena->index;
    PoolStats& p = out.arenas[i];
    const detail::ThreadCache::Totals t = tc->totals();
    const std::uint64_t misses = tc->misses.get();
    p.cacheHits += t.hits;
    p.cacheMisses += misses;
    p.cachedBytes += t.cachedBytes;
    allocs[i] += t.hits + misses - tc->direct.get();
    allocBytes[i] += t.allocBytes;
    frees[i] += t.frees;
    freeBytes[i] += t.freeBytes;
    for (std::size_t j = 0; j < c->arenas.size(); ++j) {
      frees[j] += tc->remoteFrees[j].get();
      freeBytes[j] += tc->remoteFreeBytes[j].get();
    }
  }
  PoolStats& t = out.total;
  for (std::size_t i = 0; i < c->arenas.size(); ++i) {
    PoolStats& p = out.arenas[i];
    p.allocations = allocs[i];
    p.liveBuffers = allocs[i] >= frees[i] ? allocs[i] - frees[i] : 0;
    p.liveBytes = allocBytes[i] >= freeBytes[i] ? allocBytes[i] - freeBytes[i] : 0;
    t.liveBuffers += p.liveBuffers;
    t.liveBytes += p.liveBytes;
    t.chunkBytes += p.chunkBytes;
    t.chunks += p.chunks;
    t.cachedBytes += p.cachedBytes;
    t.allocations += p.allocations;
    t.cacheHits += p.cacheHits;
    t.cacheMisses += p.cacheMisses;
    t.controlBlockBytes += p.controlBlockBytes;
  }
  t.hugeAllocations = c->hugeAllocs.get();
  t.fallbackAllocations = c->fallbacks.get();
  t.hugeLiveBytes = c->hugeLiveBytes.get();
  t.liveBuffers += c->hugeLive.get();
  t.liveBytes += c->hugeLiveBytes.get();
  t.allocations += t.hugeAllocations + t.fallbackAllocations;
  t.doubleReleases = c->doubleReleases.get();
  return out;
}

void PooledByteBufAllocator::trimCurrentThreadCache() {
  detail::ThreadCache* tc = detail::cacheFor(core_, false);
  if (tc != nullptr) core_->flushCache(tc);
}

std::size_t PooledByteBufAllocator::trim() {
  trimCurrentThreadCache();
  PoolCore* c = core_;
  std::size_t freed = 0;
  for (auto& a : c->arenas) {
    std::lock_guard lock(a->mutex);
    c->drainLocked(*a);
    // Empty runs kept for their class (see freeInArena) hold chunks: release them first.
    for (detail::Subpage*& head : a->partial) {
      detail::Subpage* sp = head;
      while (sp != nullptr) {
        detail::Subpage* next = sp->next;
        if (sp->numFree == sp->numSlots) {
          detail::listRemove(head, sp);
          detail::PoolChunk* chunk = sp->chunk;
          const std::size_t first = sp->firstPage;
          for (std::size_t p = first; p < first + c->classes.runPages[sp->sizeClass]; ++p)
            chunk->subpageOf[p] = nullptr;
          delete sp;
          c->freeRun(*a, chunk, first);
        }
        sp = next;
      }
    }
    const std::vector<detail::PoolChunk*> chunks = a->chunks;
    for (detail::PoolChunk* chunk : chunks) {
      if (chunk->freePages == chunk->numPages) {
        c->destroyChunk(*a, chunk);
        freed += c->classes.chunkSize;
      }
    }
    a->emptyChunks = 0;
  }
  return freed;
}

LeakDetectionLevel PooledByteBufAllocator::leakDetectionLevel() const noexcept {
  return core_->leakLevel.load(std::memory_order_relaxed);
}

void PooledByteBufAllocator::setLeakDetectionLevel(LeakDetectionLevel level) noexcept {
  // Under the leak mutex, so that concurrent calls leave the last level with the last memo id.
  std::lock_guard lock(core_->leakMutex);
  core_->leakLevel.store(level, std::memory_order_relaxed);
  // Every thread's memo goes stale: its next allocation takes cacheSlow, which re-derives its
  // bins' sampling for this level.
  core_->memoId.store(detail::gNextId.fetch_add(1, std::memory_order_relaxed),
                      std::memory_order_release);
  updateFastPath();
}

std::vector<LeakReport> PooledByteBufAllocator::leaks() const {
  std::vector<LeakReport> out;
  {
    std::lock_guard lock(core_->leakMutex);
    for (const detail::LeakRecord* r = core_->leakHead; r != nullptr; r = r->next) {
      LeakReport rep;
      rep.size = r->size;
      rep.sequence = r->sequence;
      rep.caller = r->caller;
      if (r->trace != nullptr)
        rep.frames.assign(r->trace->frames, r->trace->frames + r->trace->depth);
      rep.sharedFrames = !r->ownsTrace && r->trace != nullptr;
      out.push_back(std::move(rep));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const LeakReport& a, const LeakReport& b) { return a.sequence < b.sequence; });
  for (LeakReport& rep : out) {
    void* caller[1] = {rep.caller};
    rep.site = "  caller:\n" + detail::symbolize(caller, 1);
    if (!rep.frames.empty()) {
      rep.site += rep.sharedFrames
                      ? "  call path (of the first sampled allocation from this caller; "
                        "NETBUF_LEAK_DETECTION=paranoid records each one's):\n"
                      : "  call path:\n";
      rep.site += detail::symbolize(rep.frames.data(), static_cast<int>(rep.frames.size()));
    }
  }
  return out;
}

std::string PooledByteBufAllocator::reportLeaks() const {
  const std::vector<LeakReport> tracked = leaks();
  const PoolStats s = totalStats();
  std::string out;
  for (const LeakReport& r : tracked) {
    out += fmt::format(
        "LEAK: pooled ByteBuf of {} bytes (allocation #{}) was not released; "
        "allocated at:\n{}",
        r.size, r.sequence, r.site);
  }
  if (s.liveBuffers > tracked.size()) {
    out += fmt::format(
        "LEAK: {} live pooled buffer(s) in all ({} bytes), {} with a recorded site; set "
        "NETBUF_LEAK_DETECTION=paranoid to record every allocation site\n",
        s.liveBuffers, s.liveBytes, tracked.size());
  }
  return out;
}

void PooledByteBufAllocator::checkLive(const detail::Storage* storage) const {
  if (storage == nullptr) throw EmptyBufferError("checkLive: ByteBuf handle is empty");
  if (storage->destroy != &detail::destroyPooled ||
      detail::coreOf(static_cast<const PooledStorage*>(storage)) != core_) {
    throw WrongAllocatorError(
        fmt::format("storage {} ({}) does not belong to this PooledByteBufAllocator",
                    static_cast<const void*>(storage->data), toString(storage->kind)));
  }
  if (static_cast<const PooledStorage*>(storage)->state.load(std::memory_order_acquire) ==
      detail::kStateFree) {
    throw UseAfterFreeError(
        fmt::format("pooled storage {} ({} bytes) was already returned to its pool",
                    static_cast<const void*>(storage->data), storage->size));
  }
}

void PooledByteBufAllocator::release(detail::Storage* storage) {
  if (storage == nullptr) throw IllegalArgumentError("release: null storage");
  try {
    checkLive(storage);
  } catch (const UseAfterFreeError& e) {
    throw DoubleReleaseError(fmt::format("release: {}", e.what()));
  }
  storage->release();
}

std::size_t PooledByteBufAllocator::sizeClassCount() const noexcept {
  return core_->classes.sizes.size();
}
std::size_t PooledByteBufAllocator::sizeClassSize(std::size_t index) const noexcept {
  return index < core_->classes.sizes.size() ? core_->classes.sizes[index] : 0;
}
std::size_t PooledByteBufAllocator::smallSizeClassCount() const noexcept {
  return core_->classes.numSmall;
}
std::size_t PooledByteBufAllocator::normalizeSize(std::size_t n) const {
  return n > core_->classes.chunkSize ? n : core_->classes.sizes[core_->classes.classOf(n)];
}
const PooledAllocatorOptions& PooledByteBufAllocator::options() const noexcept {
  return core_->options;
}

}  // namespace netbuf
