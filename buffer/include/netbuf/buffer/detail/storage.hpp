#pragma once
// The storage control block behind every ByteBuf handle. Internal: a header of its own so that
// allocator internals that inline code must see (detail/pool_fast_path.hpp) can name it without
// the whole ByteBuf API.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/storage_kind.hpp>

namespace netbuf {
class ByteBufAllocator;
}  // namespace netbuf

namespace netbuf::detail {

/// The storage control block shared by every handle on one piece of memory.
///
/// Invariants: `data[0..size)` is the usable memory; `refs` counts the handles (it starts at 1 for
/// the handle that adopts the block); `destroy` is called exactly once, by whichever thread drops
/// the count to zero, and frees both the memory and the block in the way its creator chose.
/// `allocator` is where handles on this storage get new memory when they grow or copy (nullptr:
/// the default allocator). Allocators may embed the block in a larger struct of their own.
struct Storage {
  using DestroyFn = void (*)(Storage*) noexcept;

  std::atomic<std::uint32_t> refs{1};
  StorageKind kind = StorageKind::Heap;
  std::byte* data = nullptr;
  std::size_t size = 0;
  ByteBufAllocator* allocator = nullptr;
  DestroyFn destroy = nullptr;

  void retain() {
    const std::uint32_t before = refs.fetch_add(1, std::memory_order_relaxed);
    if (before == UINT32_MAX) [[unlikely]]
      refCountOverflow();
  }
  [[noreturn]] void refCountOverflow();
  /// Adds n references at once (one atomic add), for a handle's reference credit.
  void retainMany(std::uint32_t n) {
    const std::uint32_t before = refs.fetch_add(n, std::memory_order_relaxed);
    if (before > UINT32_MAX - n) [[unlikely]]
      refCountOverflowMany(n);
  }
  [[noreturn]] void refCountOverflowMany(std::uint32_t n);
  /// Drops n references at once (the caller holds them all); destroys on the last.
  void releaseMany(std::uint32_t n) noexcept {
    if (refs.load(std::memory_order_acquire) == n) {  // same reasoning as release()
      refs.store(0, std::memory_order_relaxed);
      destroy(this);
      return;
    }
    if (refs.fetch_sub(n, std::memory_order_acq_rel) == n) destroy(this);
  }
  void release() noexcept {
    // Fast path (as folly's IOBuf): the caller holds a reference, so a count of 1 means it holds
    // the only one. No other thread holds a reference either, and a new one can only be made
    // through a handle the caller owns, so nobody can change the count concurrently and the
    // locked decrement can be skipped. The acquire load reads the value written by the last
    // other releaser's fetch_sub (a release operation), so every write made through other handles
    // happens-before destroy, exactly as with the RMW below. The count is still set to 0, so
    // that a stray retain() after the last release is seen as a double release by allocators
    // that check for it.
    if (refs.load(std::memory_order_acquire) == 1) {
      refs.store(0, std::memory_order_relaxed);
      destroy(this);
      return;
    }
    // Acquire-release: the thread that frees must see every write made through other handles.
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(this);
  }
};

}  // namespace netbuf::detail
