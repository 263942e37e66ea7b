#pragma once
// PooledByteBufAllocator: a jemalloc/Netty-style pool of ByteBuf memory. The design, with a
// diagram, is in docs/allocator.md; in short:
//
//   allocator ─► arenas (default 2 x cores; each thread bound to the least-used one)
//     arena ─► chunks (default 4 MiB, mmap'd) ─► pages (default 8 KiB) ─► runs of pages
//       small size classes (< page): a run split into equal slots, tracked by a bitmap
//       normal size classes (page .. chunk): a run of whole pages
//       huge (> chunk): allocated directly and freed on release, never cached
//   thread cache (per thread, per allocator): a bounded LIFO stack of free slots per size class,
//     used without any lock by its own thread
//   cross-thread release: one CAS onto the slot's arena's lock-free return stack, drained by that
//     arena's threads the next time their cache misses
//
// Buffers from the pool are ordinary ByteBufs (StorageKind::Pooled). Their control block (the
// detail::Storage) is not a separate malloc: blocks are carved from per-arena slabs and stay
// attached to their slot while the slot sits in a thread cache, so a cache hit touches no lock and
// no malloc.
//
// Thread-safety: every member function may be called from any thread, concurrently, except the
// destructor, which requires that no other thread uses the allocator any more. Buffers may be
// released on any thread. stats() is exact when the allocator is quiescent and approximate (each
// counter is read atomically, not the set) while other threads allocate.
//
// Lifetime: the allocator must outlive the buffers it made. If buffers are still live at
// destruction, it reports them (see leak detection) and deliberately keeps its memory: a later
// release of such a buffer is then harmless (it is parked, never reused) instead of a use after
// free.

#include <netbuf/buffer/byte_buf.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/errors.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf {

namespace detail {
struct PoolCore;
}  // namespace detail

/// Leak detection levels, as Netty's ResourceLeakDetector.
enum class LeakDetectionLevel : std::uint8_t {
  Disabled,  ///< Nothing is tracked (only the live counters in stats()).
  Simple,    ///< About one allocation in leakSamplingInterval (128) records its backtrace.
  Paranoid,  ///< Every allocation records its backtrace; misuse checks are on.
};

std::string_view toString(LeakDetectionLevel level) noexcept;
/// Parses "disabled", "simple" or "paranoid" (any case; Netty's "advanced" means simple). Throws
/// IllegalArgumentError for anything else.
LeakDetectionLevel parseLeakDetectionLevel(std::string_view text);

/// Base of the errors that report a misuse of pooled memory.
class PoolMisuseError : public Error {
 public:
  using Error::Error;
};
/// A storage block released when it had already been returned to its pool.
class DoubleReleaseError : public PoolMisuseError {
 public:
  using PoolMisuseError::PoolMisuseError;
};
/// A storage block released into, or checked against, an allocator that did not make it.
class WrongAllocatorError : public PoolMisuseError {
 public:
  using PoolMisuseError::PoolMisuseError;
};
/// Access through a handle whose storage has already been returned to its pool.
class UseAfterFreeError : public PoolMisuseError {
 public:
  using PoolMisuseError::PoolMisuseError;
};

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

/// One live tracked buffer, as reported by leak detection.
///
/// At `paranoid` every tracked allocation records its own backtrace. At `simple` a sampled
/// allocation records only its caller (one return address: free to take), and the backtrace is
/// taken once per caller, at the first sampled allocation from it, and shared by the later ones:
/// that keeps `simple` within about a nanosecond of `disabled` per allocation. So at `simple`, `caller` is exact and
/// `frames` is one call path through it (the innermost frames are the allocator's, then the
/// caller's; outer frames may differ from this buffer's own path).
struct LeakReport {
  std::size_t size = 0;        ///< The capacity requested.
  std::uint64_t sequence = 0;  ///< Allocation order among tracked buffers.
  /// The return address into the code that called buffer() (or the library function that did,
  /// such as a ByteBuf growing or Unpooled::copiedBuffer).
  void* caller = nullptr;
  /// Return addresses, innermost first: this allocation's (paranoid) or the first sampled one's
  /// from the same caller (simple; empty once kMaxLeakSites callers have traces).
  std::vector<void*> frames;
  bool sharedFrames = false;  ///< frames are another allocation's from the same caller (simple).
  std::string site;           ///< caller and frames symbolized, one per line.
};

/// At `simple`, backtraces are kept for at most this many distinct callers (beyond it a sampled
/// allocation records its caller only).
inline constexpr std::size_t kMaxLeakSites = 4096;

class PooledByteBufAllocator final : public ByteBufAllocator {
 public:
  PooledByteBufAllocator();
  explicit PooledByteBufAllocator(const PooledAllocatorOptions& options);
  /// Requires that no other thread uses the allocator. Empties every thread cache of this
  /// allocator; lists live tracked buffers on stderr; frees all memory when nothing is live.
  ~PooledByteBufAllocator() override;
  PooledByteBufAllocator(const PooledByteBufAllocator&) = delete;
  PooledByteBufAllocator& operator=(const PooledByteBufAllocator&) = delete;

  bool isPooled() const noexcept override { return true; }
  detail::Storage* allocateStorage(std::size_t minCapacity) override;

  /// Counters per arena and in total. Drains the arenas' return stacks first.
  AllocatorStats stats() const;
  PoolStats totalStats() const { return stats().total; }

  /// Returns memory to the OS: empties the calling thread's cache, drains the return stacks and
  /// unmaps every chunk with no slot in use. Other threads' caches are not touched (they are
  /// bounded, trimmed as they allocate and emptied when their thread exits). Returns bytes
  /// unmapped.
  std::size_t trim();
  /// Returns the calling thread's cached slots to their arenas.
  void trimCurrentThreadCache();

  LeakDetectionLevel leakDetectionLevel() const noexcept;
  /// Changes the level for later allocations (tracked buffers stay tracked).
  void setLeakDetectionLevel(LeakDetectionLevel level) noexcept;
  /// The level new allocators start with: set by API, else NETBUF_LEAK_DETECTION, else Simple.
  static LeakDetectionLevel defaultLeakDetectionLevel() noexcept;
  static void setDefaultLeakDetectionLevel(LeakDetectionLevel level) noexcept;

  /// Every live tracked buffer with its size and allocation site.
  std::vector<LeakReport> leaks() const;
  /// The same as text (empty when nothing tracked is live); also counts untracked live buffers.
  std::string reportLeaks() const;

  /// Checked manual release, for code that handles detail::Storage directly: throws
  /// WrongAllocatorError when the block is not from this allocator and DoubleReleaseError when it
  /// has already been returned; otherwise drops one reference.
  void release(detail::Storage* storage);
  /// Throws UseAfterFreeError when the block has been returned to its pool, WrongAllocatorError
  /// when it is not from this allocator. The handle overload accepts any non-empty handle.
  void checkLive(const detail::Storage* storage) const;
  void checkLive(const ByteBuf& buf) const { checkLive(storageOf(buf)); }

  /// Size-class table (for tests, benchmarks and docs).
  std::size_t sizeClassCount() const noexcept;
  std::size_t sizeClassSize(std::size_t index) const noexcept;
  /// The number of small classes (slots carved from runs); the rest are runs of pages.
  std::size_t smallSizeClassCount() const noexcept;
  /// The usable size a request of n bytes gets (n itself above chunkSize).
  std::size_t normalizeSize(std::size_t n) const;
  const PooledAllocatorOptions& options() const noexcept;

 private:
  /// Turns buffer()'s inline path on or off to match the options and the leak detection level.
  void updateFastPath() noexcept;

  detail::PoolCore* core_;
};

}  // namespace netbuf
