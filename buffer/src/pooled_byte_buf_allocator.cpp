// PooledByteBufAllocator: chunks, arenas, thread caches, the cross-thread return path, statistics
// and leak detection. See docs/allocator.md for the picture. The size-class table is in
// detail/size_classes.hpp, the leak detection levels in leak_detection_level.cpp, the choice of the
// default allocator in default_allocator.cpp.
//
// Locking (the order is registry → arena → leaks; no path takes two arenas):
//  - registryMutex(): the set of thread caches of every allocator, cache creation, thread exit,
//    stats snapshots and allocator destruction.
//  - PoolArena::mutex: the arena's chunks, subpages and control-block free list.
//  - PoolCore::leakMutex: the list of tracked allocations.
// Lock-free: a thread's own cache (only its thread touches it), the arenas' return stacks (MPSC:
// any thread pushes with a CAS, a drainer takes the whole list with one exchange, so no ABA), and
// every counter (relaxed atomics; single-writer ones are updated with load + store).

#include <netbuf/buffer/pooled_byte_buf_allocator.hpp>

#include "detail/size_classes.hpp"

#include <cxxabi.h>
#include <execinfo.h>
#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <span>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace netbuf {
namespace detail {
namespace {

/// A counter any thread may update.
struct SharedCounter {
  std::atomic<std::uint64_t> v{0};
  void add(std::uint64_t n) noexcept { v.fetch_add(n, std::memory_order_relaxed); }
  void sub(std::uint64_t n) noexcept { v.fetch_sub(n, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept { return v.load(std::memory_order_relaxed); }
};

constexpr std::size_t kDirectHeader = 128;  // room for the control block, keeps data 64-aligned
constexpr std::align_val_t kDirectAlign{64};
constexpr int kMaxFrames = 32;

}  // namespace

struct PoolChunk;
struct PoolArena;
struct ThreadCache;

/// A backtrace, innermost frame first.
struct LeakTrace {
  int depth = 0;
  void* frames[kMaxFrames];
};

/// One tracked live buffer. At paranoid it owns its trace; at simple `trace` is its caller's
/// shared one (PoolCore::siteTraces, which outlives every record) or null. Records are recycled
/// through PoolCore::freeRecords, so a sample at simple allocates nothing once warm.
struct LeakRecord {
  LeakRecord* prev = nullptr;
  LeakRecord* next = nullptr;
  std::size_t size = 0;
  std::uint64_t sequence = 0;
  void* caller = nullptr;
  const LeakTrace* trace = nullptr;
  bool ownsTrace = false;
};

void destroyPooled(Storage* s) noexcept;


/// A small run: equal slots, a bitmap (1 = in use), on its arena's per-class list while it has a
/// free slot. Guarded by the arena mutex.
struct Subpage {
  PoolChunk* chunk = nullptr;
  std::uint32_t firstPage = 0;
  std::uint32_t slotSize = 0;
  std::uint32_t numSlots = 0;
  std::uint32_t numFree = 0;
  std::uint32_t searchWord = 0;
  std::uint16_t sizeClass = 0;
  Subpage* prev = nullptr;
  Subpage* next = nullptr;
  bool listed = false;
  std::vector<std::uint64_t> bitmap;

  std::uint32_t take() noexcept {
    const std::size_t words = bitmap.size();
    for (std::size_t k = 0; k < words; ++k) {
      const std::size_t w = (searchWord + k) % words;
      const std::uint64_t free = ~bitmap[w];
      if (free == 0) continue;
      const unsigned bit = static_cast<unsigned>(std::countr_zero(free));
      const std::uint32_t slot = static_cast<std::uint32_t>(w * 64 + bit);
      if (slot >= numSlots) continue;  // padding bits of the last word are never free
      bitmap[w] |= std::uint64_t{1} << bit;
      searchWord = static_cast<std::uint32_t>(w);
      --numFree;
      return slot;
    }
    return UINT32_MAX;  // unreachable while numFree > 0
  }
  void give(std::uint32_t slot) noexcept {
    bitmap[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
    ++numFree;
  }
};

/// A chunk of numPages pages from mmap. Guarded by its arena's mutex.
struct PoolChunk {
  PoolArena* arena = nullptr;
  std::byte* memory = nullptr;
  std::uint32_t numPages = 0;
  std::uint32_t freePages = 0;
  std::uint64_t emptySince = 0;     // PoolArena::runAllocations when the chunk last became empty
  std::vector<std::uint64_t> used;  // bit per page
  std::vector<std::uint32_t> runLength;  // at a run's first page: its length in pages
  std::vector<Subpage*> subpageOf;       // every page of a small run: its subpage

  bool isUsed(std::size_t p) const noexcept { return (used[p / 64] >> (p % 64)) & 1; }
  void mark(std::size_t first, std::size_t n, bool on) noexcept {
    // A word at a time (a 1 MiB run is 128 pages: 2 words, not 128 bit operations).
    for (std::size_t p = first, end = first + n; p < end;) {
      const std::size_t bit = p % 64, k = std::min<std::size_t>(64 - bit, end - p);
      const std::uint64_t m = (k == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1) << bit;
      if (on)
        used[p / 64] |= m;
      else
        used[p / 64] &= ~m;
      p += k;
    }
  }
  /// Best fit: the first page of the shortest maximal free span of at least n pages (the lowest
  /// such span on ties), its length in `spanLength`; SIZE_MAX if no span is long enough. Filling
  /// the tightest hole keeps long spans, and the tails of chunks, whole for long runs; first fit
  /// (lowest address) breaks them up, and leaves a long-lived mixed workload holding about 13 % of
  /// its chunk bytes as page holes too short for the runs it asks for.
  std::size_t bestRun(std::size_t n, std::size_t& spanLength) const noexcept {
    std::size_t best = SIZE_MAX, bestLength = SIZE_MAX;
    std::size_t p = 0;
    while (p < numPages) {
      // Skip used pages a word at a time.
      const std::uint64_t w = used[p / 64] >> (p % 64);
      if (w & 1) {
        const std::uint64_t freeBits = ~w;
        p += freeBits == 0 ? 64 - p % 64 : static_cast<std::size_t>(std::countr_zero(freeBits));
        continue;
      }
      std::size_t q = p;
      while (q < numPages && !isUsed(q)) {
        const std::uint64_t u = used[q / 64] >> (q % 64);
        q += u == 0 ? 64 - q % 64 : static_cast<std::size_t>(std::countr_zero(u));
      }
      q = std::min(q, std::size_t{numPages});
      const std::size_t length = q - p;
      if (length >= n && length < bestLength) {
        best = p;
        bestLength = length;
        if (length == n) break;
      }
      p = q;
    }
    spanLength = bestLength;
    return best;
  }
};

namespace {
/// Arena tags are unique in the process and never reused, so a block's tag names its arena even
/// after that arena is gone and another is made at the same address. Neither 0 (direct blocks)
/// nor kDetachedTag (detached caches) is ever issued.
std::atomic<std::uint32_t> gNextArenaTag{1};
constexpr std::uint32_t kDetachedTag = UINT32_MAX;
}  // namespace

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
  static std::uint32_t nextTag() {
    std::uint32_t t = gNextArenaTag.load(std::memory_order_relaxed);
    do {
      if (t == kDetachedTag)
        throw std::overflow_error(
            "netbuf: PooledByteBufAllocator: every arena tag has been used in this process");
    } while (!gNextArenaTag.compare_exchange_weak(t, t + 1, std::memory_order_relaxed));
    return t;
  }
  /// Pushes the chain first..last (linked through `next`) with one CAS.
  void pushReturn(PooledStorage* first, PooledStorage* last) noexcept {
    PooledStorage* head = returnHead.load(std::memory_order_relaxed);
    do {
      last->next = head;
    } while (!returnHead.compare_exchange_weak(head, first, std::memory_order_release,
                                               std::memory_order_relaxed));
  }
};

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

// Control blocks (other than direct ones) live in slabs of kSlabBlocks blocks, each slab aligned
// to its size. kSlabHeaderBlocks blocks' worth of a slab is its header: the size class of each
// block of the slab, a copy of PooledStorage::sizeClass that the release fast path reads instead
// of the block's own field. Its address follows from the block's address alone, and the headers
// of all slabs (256 bytes each) stay in the core's caches, whereas the block's line is a cache
// miss when blocks are released in random order: a class read from the block would make the
// release's push wait for that miss to learn its bin, and the next allocation, which pops the same
// bin, wait with it.
// The header's place in the slab depends on the slab's address (its "colour"): headers all at the
// same offset of 8 KiB-aligned slabs would fall into the same few sets of the L1 cache (which
// repeats every 4 KiB) and evict one another; 16 colours of 256 bytes cover all its sets. The
// colour mixes two groups of address bits, because glibc places 8 KiB-aligned 8 KiB blocks made
// one after another 16 KiB apart: the slab number's low bits alone would give every other colour.
// Invariant: slabClassOf(s) == s->sizeClass for every block in a slab (set together by
// allocateInArena, the only place a slab block's class changes). Locking: an entry is written
// under its arena's mutex, and only while its block is not live; it is read without a lock only
// by the thread releasing the block's last handle, which got the block through whatever
// synchronisation handed it over, so the write happens before the read. Entries of other blocks
// are other memory locations.
constexpr std::size_t kSlabBlocks = 128;
constexpr std::size_t kSlabBytes = kSlabBlocks * sizeof(PooledStorage);  // 8 KiB
struct SlabHeader {
  std::uint16_t sizeClass[kSlabBlocks];  // the header's own kSlabHeaderBlocks entries unused
};
constexpr std::size_t kSlabHeaderBlocks = sizeof(SlabHeader) / sizeof(PooledStorage);
constexpr std::size_t kSlabColours = kSlabBlocks / kSlabHeaderBlocks / 2;  // headers in 4 KiB
static_assert(sizeof(SlabHeader) % sizeof(PooledStorage) == 0 && kSlabColours == 16);
static_assert(std::has_single_bit(kSlabBytes), "slabs are found by masking a block's address");

/// The block index at which the header of the slab starting at `slab` begins.
inline std::size_t slabHeaderIndex(std::uintptr_t slab) noexcept {
  const std::uintptr_t n = slab / kSlabBytes;
  return ((n ^ (n / kSlabColours)) % kSlabColours) * kSlabHeaderBlocks;
}

/// The header entry of a slab block (not for direct blocks).
inline std::uint16_t& slabClassOf(PooledStorage* s) noexcept {
  const auto addr = reinterpret_cast<std::uintptr_t>(s);
  const std::uintptr_t slab = addr & ~(kSlabBytes - 1);
  auto* header =
      reinterpret_cast<SlabHeader*>(slab + slabHeaderIndex(slab) * sizeof(PooledStorage));
  return header->sizeClass[(addr - slab) / sizeof(PooledStorage)];
}

/// The allocator a block belongs to (see PooledStorage's invariants).
inline PoolCore* coreOf(const PooledStorage* s) noexcept {
  return s->isDirect() ? s->core : s->chunk->arena->core;
}

// The thread's memo (pool_fast_path.hpp): set by cacheSlow, cleared at thread exit and when its
// allocator is destroyed on this thread (other threads' stale memos never match: ids are unique).
constinit thread_local PoolThreadMemo tPoolMemo{0, nullptr, nullptr};

namespace {

std::mutex& registryMutex() {
  static auto* m = new std::mutex();  // never destroyed: thread exits may follow static teardown
  return *m;
}

std::atomic<std::uint64_t> gNextId{1};

thread_local bool tCachesGone = false;  // this thread's caches have been torn down (thread exit)
thread_local std::uint64_t tSampleLeft = 0;  // allocations outside bins up to the next sample
thread_local std::uint64_t tSampleRng = 0;   // xorshift64 state; 0 = not seeded yet
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

inline ThreadCache* cacheFor(PoolCore* core, bool create) {
  if (tPoolMemo.id == core->memoId.load(std::memory_order_relaxed)) [[likely]]
    return tPoolMemo.cache;
  return core->cacheSlow(create);
}

// Leak detection `simple` tracks one allocation in options.leakSamplingInterval (I) on average:
// per size class of a thread cache (PoolBin::sampleAt) and, for allocations served outside the
// bins, per thread (tSampleLeft, shared by the thread's allocators). The distance to the next
// sample is drawn uniformly from [1, 2I - 1] (mean I), as Netty draws one random number per
// allocation: a fixed distance would never sample a thread or class with fewer than I allocations,
// and would sample the same position of every periodic pattern (say, the second buffer of every
// request) forever.
inline std::uint64_t nextSampleDistance(std::uint64_t interval) noexcept {
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

/// `base + n`, saturating at UINT64_MAX (counters that never wrap in practice, and "never").
constexpr std::uint64_t addSaturating(std::uint64_t base, std::uint64_t n) noexcept {
  return base + std::min(n, UINT64_MAX - base);
}

/// Recomputes b.slowAt from the sweep's schedule (cacheTrimInterval hits after the last sweep)
/// and the next leak sample.
inline void setSlowAt(PoolBin& b, std::uint64_t trimInterval) noexcept {
  b.slowAt = std::min(addSaturating(b.popsAtSweep, trimInterval), b.sampleAt);
}

template <class T>
void listRemove(T*& head, T* n) noexcept {
  if (n->prev != nullptr)
    n->prev->next = n->next;
  else
    head = n->next;
  if (n->next != nullptr) n->next->prev = n->prev;
  n->prev = n->next = nullptr;
}
template <class T>
void listPush(T*& head, T* n) noexcept {
  n->prev = nullptr;
  n->next = head;
  if (head != nullptr) head->prev = n;
  head = n;
}

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

std::string symbolize(void* const* frames, int depth) {
  std::string out;
  char** symbols = backtrace_symbols(frames, depth);
  for (int i = 0; i < depth; ++i) {
    std::string line = symbols != nullptr ? symbols[i] : fmt::format("{}", frames[i]);
    // "module(mangled+0x1f) [0xaddr]": demangle the name when there is one.
    const auto open = line.find('(');
    const auto plus = line.find('+', open == std::string::npos ? 0 : open);
    if (open != std::string::npos && plus != std::string::npos && plus > open + 1) {
      const std::string mangled = line.substr(open + 1, plus - open - 1);
      int status = 0;
      char* demangled = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
      if (status == 0 && demangled != nullptr) line.replace(open + 1, mangled.size(), demangled);
      std::free(demangled);
    }
    out += fmt::format("    #{} {}\n", i, line);
  }
  std::free(static_cast<void*>(symbols));
  return out;
}

}  // namespace

// ------------------------------------------------------------------ thread caches

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

void PoolCore::drainLocked(PoolArena& a) noexcept {
  PooledStorage* s = a.returnHead.exchange(nullptr, std::memory_order_acquire);
  while (s != nullptr) {
    PooledStorage* next = s->next;
    freeInArena(a, s);  // counted as freed by its releaser
    s = next;
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

PooledStorage* PoolCore::allocateDirectly(unsigned cls) {
  PoolArena& a = *arenas[std::hash<std::thread::id>{}(std::this_thread::get_id()) % arenas.size()];
  std::lock_guard lock(a.mutex);
  drainLocked(a);
  PooledStorage* s = allocateInArena(a, cls);
  if (s != nullptr) {
    a.allocs.add(1);
    a.allocBytes.add(s->size);
  }
  return s;
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

// ------------------------------------------------------------------ arenas (mutex held)

PooledStorage* PoolCore::takeBlock(PoolArena& a) {
  if (a.freeBlocks == nullptr) {
    if (a.slabs.size() == a.slabs.capacity())  // so that the push_back below cannot throw
      a.slabs.reserve(std::max<std::size_t>(16, 2 * a.slabs.size()));
    void* slab = ::operator new (kSlabBytes, std::align_val_t{kSlabBytes});
    a.slabs.push_back(slab);
    a.slabBytes.add(kSlabBytes);
    const std::size_t header = slabHeaderIndex(reinterpret_cast<std::uintptr_t>(slab));
    new (static_cast<std::byte*>(slab) + header * sizeof(PooledStorage)) SlabHeader{};
    for (std::size_t i = 0; i < kSlabBlocks; ++i) {
      if (i >= header && i < header + kSlabHeaderBlocks) continue;  // the header's blocks
      auto* s = new (static_cast<std::byte*>(slab) + i * sizeof(PooledStorage)) PooledStorage();
      s->chunk = &a.detached;
      s->arenaTag = a.tag;
      s->next = a.freeBlocks;
      a.freeBlocks = s;
    }
  }
  PooledStorage* s = a.freeBlocks;
  a.freeBlocks = s->next;
  return s;
}

/// Bounds of a thread's pending batch of other arenas' blocks (ThreadCache::pendingHead).
constexpr std::uint32_t kReturnBatch = 32;
constexpr std::size_t kReturnBatchBytes = 64 * 1024;

/// Run allocations after which an empty chunk kept by its arena is unmapped if still unused.
constexpr std::uint64_t kEmptyChunkIdleRuns = 4096;

std::size_t PoolCore::allocateRun(PoolArena& a, std::size_t pages, PoolChunk*& out) {
  // Best fit over the arena's chunks: the shortest free span that holds the run; on equal spans
  // the fullest chunk, so that nearly empty chunks drain and can be unmapped (the role of
  // Netty's PoolChunkList usage quartiles). An empty chunk is taken only when nothing else fits.
  PoolChunk* best = nullptr;
  PoolChunk* idle = nullptr;
  std::size_t bestFirst = 0, bestLength = SIZE_MAX;
  ++a.runAllocations;
  for (PoolChunk* c : a.chunks) {
    if (c->freePages == c->numPages && a.runAllocations - c->emptySince > kEmptyChunkIdleRuns)
      idle = c;
    if (c->freePages < pages) continue;
    if (best != nullptr && bestLength == pages && c->freePages >= best->freePages) continue;
    std::size_t length = 0;
    const std::size_t p = c->bestRun(pages, length);
    if (p == SIZE_MAX) continue;
    if (length < bestLength || (length == bestLength && c->freePages < best->freePages)) {
      best = c;
      bestFirst = p;
      bestLength = length;
    }
  }
  if (idle != nullptr && idle != best) {
    // The empty chunk kept to absorb churn has not been needed for a while: best fit takes an
    // empty chunk only when no other has room, so in a steady state it would stay idle for good.
    --a.emptyChunks;
    destroyChunk(a, idle);
  }
  if (best != nullptr) {
    PoolChunk* c = best;
    const std::size_t p = bestFirst;
    if (c->freePages == c->numPages) --a.emptyChunks;
    c->mark(p, pages, true);
    c->freePages -= static_cast<std::uint32_t>(pages);
    c->runLength[p] = static_cast<std::uint32_t>(pages);
    out = c;
    return p;
  }
  // A new chunk, within maxChunks. Its bookkeeping is allocated first, so that a std::bad_alloc
  // leaves neither a mapping nor a count behind.
  auto c = std::make_unique<PoolChunk>();
  c->arena = &a;
  c->numPages = static_cast<std::uint32_t>(classes.numPages);
  c->freePages = c->numPages;
  c->used.assign((classes.numPages + 63) / 64, 0);
  c->runLength.assign(classes.numPages, 0);
  c->subpageOf.assign(classes.numPages, nullptr);
  if (a.chunks.size() == a.chunks.capacity())
    a.chunks.reserve(std::max<std::size_t>(4, 2 * a.chunks.size()));
  if (options.maxChunks != 0) {
    std::uint64_t n = totalChunks.get();
    do {
      if (n >= options.maxChunks) return SIZE_MAX;
    } while (!totalChunks.v.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  } else {
    totalChunks.add(1);
  }
  void* mem = ::mmap(nullptr, classes.chunkSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    totalChunks.sub(1);
    throw std::bad_alloc();
  }
  c->memory = static_cast<std::byte*>(mem);
  poison(mem, classes.chunkSize);
  a.chunkCount.add(1);
  a.chunks.push_back(c.get());
  PoolChunk* chunk = c.release();
  chunk->mark(0, pages, true);
  chunk->freePages -= static_cast<std::uint32_t>(pages);
  chunk->runLength[0] = static_cast<std::uint32_t>(pages);
  out = chunk;
  return 0;
}

void PoolCore::destroyChunk(PoolArena& a, PoolChunk* c) noexcept {
  unpoison(c->memory, classes.chunkSize);
  ::munmap(c->memory, classes.chunkSize);
  std::erase(a.chunks, c);
  a.chunkCount.sub(1);
  totalChunks.sub(1);
  delete c;
}

void PoolCore::freeRun(PoolArena& a, PoolChunk* c, std::size_t first) noexcept {
  const std::size_t pages = c->runLength[first];
  c->runLength[first] = 0;
  c->mark(first, pages, false);
  c->freePages += static_cast<std::uint32_t>(pages);
  if (c->freePages == c->numPages) {
    // Keep one empty chunk per arena to absorb churn; return the others to the OS at once, which
    // bounds what a burst leaves behind.
    if (a.emptyChunks >= 1) {
      destroyChunk(a, c);
    } else {
      ++a.emptyChunks;
      c->emptySince = a.runAllocations;
    }
  }
}

// Strongly exception-safe: the control block and a new run's Subpage are made before a slot or
// run is taken, so a std::bad_alloc (a new slab, a new chunk) leaves the arena as it was.
PooledStorage* PoolCore::allocateInArena(PoolArena& a, unsigned cls) {
  PooledStorage* s = takeBlock(a);
  // Back onto the slab free list unless it gets a slot (nothing, or an exception, below).
  struct GiveBack {
    PoolArena& a;
    PooledStorage* s;
    ~GiveBack() {
      if (s != nullptr) {
        s->next = a.freeBlocks;
        a.freeBlocks = s;
      }
    }
  } giveBack{a, s};
  PoolChunk* chunk = nullptr;
  std::size_t offset = 0;
  if (cls < classes.numSmall) {
    Subpage* sp = a.partial[cls];
    if (sp == nullptr) {
      auto fresh = std::make_unique<Subpage>();
      fresh->bitmap.assign((classes.slotsPerRun[cls] + 63) / 64, 0);
      const std::size_t first = allocateRun(a, classes.runPages[cls], chunk);
      if (first == SIZE_MAX) return nullptr;
      sp = fresh.get();
      sp->chunk = chunk;
      sp->firstPage = static_cast<std::uint32_t>(first);
      sp->slotSize = classes.sizes[cls];
      sp->numSlots = classes.slotsPerRun[cls];
      sp->numFree = sp->numSlots;
      sp->sizeClass = static_cast<std::uint16_t>(cls);
      for (std::size_t p = first; p < first + classes.runPages[cls]; ++p) chunk->subpageOf[p] = sp;
      listPush(a.partial[cls], fresh.release());
      sp->listed = true;
    }
    const std::uint32_t slot = sp->take();
    if (sp->numFree == 0) {
      listRemove(a.partial[cls], sp);
      sp->listed = false;
    }
    chunk = sp->chunk;
    offset = (std::size_t{sp->firstPage} << classes.pageShift) + std::size_t{slot} * sp->slotSize;
  } else {
    const std::size_t first = allocateRun(a, classes.runPages[cls], chunk);
    if (first == SIZE_MAX) return nullptr;
    offset = first << classes.pageShift;
  }
  giveBack.s = nullptr;
  s->refs.store(0, std::memory_order_relaxed);
  s->kind = StorageKind::Pooled;
  s->data = chunk->memory + offset;
  s->size = classes.sizes[cls];
  s->allocator = facade;
  s->destroy = &destroyPooled;
  s->chunk = chunk;
  s->sizeClass = static_cast<std::uint16_t>(cls);
  slabClassOf(s) = s->sizeClass;
  return s;
}

void PoolCore::freeInArena(PoolArena& a, PooledStorage* s) noexcept {
  PoolChunk* c = s->chunk;
  const std::size_t offset = static_cast<std::size_t>(s->data - c->memory);
  const std::size_t page = offset >> classes.pageShift;
  if (s->sizeClass < classes.numSmall) {
    Subpage* sp = c->subpageOf[page];
    const std::uint32_t slot = static_cast<std::uint32_t>(
        (offset - (std::size_t{sp->firstPage} << classes.pageShift)) / sp->slotSize);
    sp->give(slot);
    const unsigned cls = sp->sizeClass;
    if (!sp->listed) {
      listPush(a.partial[cls], sp);
      sp->listed = true;
    }
    // An empty run goes back to its chunk unless it is the class's only partial run (Netty keeps
    // one so that a class in use does not rebuild its run on every allocation).
    if (sp->numFree == sp->numSlots && (sp->prev != nullptr || sp->next != nullptr)) {
      listRemove(a.partial[cls], sp);
      for (std::size_t p = sp->firstPage; p < sp->firstPage + classes.runPages[cls]; ++p)
        c->subpageOf[p] = nullptr;
      const std::size_t first = sp->firstPage;
      delete sp;
      freeRun(a, c, first);
    }
  } else {
    freeRun(a, c, page);
  }
  s->chunk = &a.detached;
  s->next = a.freeBlocks;
  a.freeBlocks = s;
}

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

// ------------------------------------------------------------------ leak detection

namespace {
constexpr std::size_t kMaxFreeRecords = 1024;

LeakTrace* captureTrace() noexcept {
  auto* t = new (std::nothrow) LeakTrace();
  if (t != nullptr) t->depth = backtrace(t->frames, kMaxFrames);
  return t;
}
}  // namespace

// What a sample costs is what makes `simple` cheap or not: glibc's backtrace() takes microseconds
// (about 0.5 us plus 0.15 us per frame), so at simple it runs once per caller, and a sample
// otherwise costs a lock, a hash lookup and a recycled record.
void PoolCore::track(PooledStorage* s, std::size_t requested, void* caller,
                     bool ownTrace) noexcept {
  LeakTrace* own = ownTrace ? captureTrace() : nullptr;
  std::unique_lock lock(leakMutex);
  const LeakTrace* trace = own;
  if (!ownTrace) {
    auto it = siteTraces.find(caller);
    if (it != siteTraces.end()) {
      trace = it->second.get();
    } else if (siteTraces.size() < kMaxLeakSites) {
      lock.unlock();  // the backtrace is slow: other threads' samples need not wait for it
      std::unique_ptr<LeakTrace> fresh(captureTrace());
      lock.lock();
      if (fresh != nullptr) {
        try {
          // Another thread may have added this caller meanwhile: its trace stays.
          trace = siteTraces.try_emplace(caller, std::move(fresh)).first->second.get();
        } catch (...) {  // out of memory: the record names its caller only
        }
      }
    }
  }
  LeakRecord* r = freeRecords;
  if (r != nullptr) {
    freeRecords = r->next;
    --freeRecordCount;
  } else {
    r = new (std::nothrow) LeakRecord();
    if (r == nullptr) {
      delete own;
      return;  // out of memory: this buffer goes untracked
    }
  }
  r->size = requested;
  r->caller = caller;
  r->trace = trace;
  r->ownsTrace = own != nullptr;
  r->sequence = ++leakSequence;
  listPush(leakHead, r);
  s->leak = r;
  s->state.store(kStateLiveSlow, std::memory_order_relaxed);
}

void PoolCore::untrack(PooledStorage* s) noexcept {
  LeakRecord* r = s->leak;
  const LeakTrace* own = r->ownsTrace ? r->trace : nullptr;
  {
    std::lock_guard lock(leakMutex);
    listRemove(leakHead, r);
    if (freeRecordCount < kMaxFreeRecords) {
      r->trace = nullptr;
      r->ownsTrace = false;
      r->next = freeRecords;
      freeRecords = r;
      ++freeRecordCount;
      r = nullptr;
    }
  }
  delete own;
  delete r;
  s->leak = nullptr;
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
