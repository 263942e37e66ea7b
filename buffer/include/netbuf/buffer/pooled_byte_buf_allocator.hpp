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
#include <netbuf/buffer/leak_detection_level.hpp>
#include <netbuf/buffer/leak_report.hpp>
#include <netbuf/buffer/pool_misuse_error.hpp>
#include <netbuf/buffer/pool_stats.hpp>
#include <netbuf/buffer/pooled_allocator_options.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace netbuf {

namespace detail {
struct PoolCore;
}  // namespace detail

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
