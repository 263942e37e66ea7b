#pragma once
// The allocator interface: where ByteBuf memory comes from. Split from byte_buf.hpp so allocator
// implementations (unpooled here, pooled in pooled_byte_buf_allocator.hpp) and their users need not
// see the whole ByteBuf API; byte_buf.hpp includes this header, so ByteBuf users see it too.
//
// Ownership: an allocator hands out detail::Storage control blocks with a count of 1; the storage's
// `destroy` function returns the memory, on whichever thread drops the last reference. An allocator
// must outlive every buffer it made (a buffer that grows asks its storage's allocator for memory).
//
// Thread-safety: every allocator is safe to use from any number of threads at once. The default
// allocator may be replaced with setDefaultAllocator() only while no other thread uses it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <netbuf/buffer/detail/pool_fast_path.hpp>
#include <netbuf/buffer/limits.hpp>

namespace netbuf {

class ByteBuf;
class CompositeByteBuf;
namespace detail {
/// Releases a block smaller than allocateStorage was asked for (an allocator broke its promise),
/// and throws IllegalArgumentError naming `who`, the size and the request.
[[noreturn]] void rejectShortStorage(Storage* storage, std::size_t requested, const char* who);
}  // namespace detail

// kDefaultMaxCapacity and kMaxCapacityLimit: see limits.hpp.

/// Where buffers come from. The foundation provides UnpooledByteBufAllocator; the pooled
/// allocator implements the same interface. Its virtual call (allocateStorage) happens once
/// per buffer (or per growth), never per byte.
class ByteBufAllocator {
 public:
  static constexpr std::size_t kDefaultInitialCapacity = 256;

  virtual ~ByteBufAllocator() = default;

  /// A buffer with capacity initialCapacity (not zeroed) that may grow to maxCapacity.
  /// IllegalArgumentError unless initialCapacity <= maxCapacity <= kMaxCapacityLimit. (Inline,
  /// defined in byte_buf.hpp: the argument check; a pooled allocator's thread-cache hit for a
  /// small size, inline, with no call; otherwise one virtual call, allocateStorage. The handle is
  /// made inline from the block in both cases, so `b = alloc.buffer(n)` builds it in registers
  /// and stores it once, into b. Always inlined: the hit stays in the caller, and the return
  /// address of the call is the caller's code, which leak detection reports as the allocation
  /// site; an out-of-line copy would be reported instead.)
  [[gnu::always_inline]] inline ByteBuf buffer(
      std::size_t initialCapacity = kDefaultInitialCapacity,
      std::size_t maxCapacity = kDefaultMaxCapacity);
  /// Same, with the initial capacity zero-filled.
  ByteBuf zeroedBuffer(std::size_t initialCapacity, std::size_t maxCapacity = kDefaultMaxCapacity);

  /// An empty CompositeByteBuf whose new components come from this allocator (defined in
  /// composite_byte_buf.cpp; include <netbuf/buffer/composite_byte_buf.hpp> to call it).
  CompositeByteBuf compositeBuffer(std::size_t maxNumComponents = 16);

  virtual bool isPooled() const noexcept = 0;

  /// Returns a storage block (count 1) of at least minCapacity bytes whose `allocator` is this.
  /// It may be larger (the slack becomes maxFastWritableBytes). Throws std::bad_alloc. buffer()
  /// and growth release a smaller block and throw IllegalArgumentError.
  virtual detail::Storage* allocateStorage(std::size_t minCapacity) = 0;

  /// Netty's growth policy: minNewCapacity rounded up to a power of two >= 64 below 4 MiB, to a
  /// multiple of 4 MiB above it, never more than maxCapacity.
  static std::size_t calculateNewCapacity(std::size_t minNewCapacity, std::size_t maxCapacity);

  /// The process-wide default allocator. Unless setDefaultAllocator() chose one, the first call
  /// reads NETBUF_ALLOCATOR: unset or `pooled`, a process-wide PooledByteBufAllocator with default
  /// options (created once, never destroyed, so buffers may outlive static destructors), as
  /// Netty's default; `unpooled`, UnpooledByteBufAllocator::instance(). Any other value is
  /// reported on stderr and the pool is used.
  /// (Inline: one acquire load once chosen.)
  static ByteBufAllocator& defaultAllocator() noexcept;
  /// Makes `allocator` the process-wide default. Call it before other threads allocate; the
  /// allocator must outlive every later use of the default (buffers made earlier keep their own).
  static void setDefaultAllocator(ByteBufAllocator& allocator) noexcept;

 protected:
  /// For allocator implementations: the storage behind a handle (nullptr for an empty handle).
  static detail::Storage* storageOf(const ByteBuf& buf) noexcept;
  /// A handle adopting `storage` (count 1, storage->size >= initialCapacity, initialCapacity <=
  /// maxCapacity <= kMaxCapacityLimit, all unchecked), with indices 0/0. Defined in byte_buf.hpp.
  static inline ByteBuf handleOn(detail::Storage* storage, std::size_t initialCapacity,
                                 std::size_t maxCapacity) noexcept;
  [[noreturn]] static void throwBadBufferArguments(std::size_t initialCapacity,
                                                   std::size_t maxCapacity);
  /// defaultAllocator()'s first call: chooses the default (NETBUF_ALLOCATOR) and publishes it.
  static ByteBufAllocator& chooseDefaultAllocator() noexcept;
  /// The default allocator once chosen or set; nullptr before.
  static std::atomic<ByteBufAllocator*> defaultAllocator_;

  /// buffer()'s inline path (detail/pool_fast_path.hpp): off unless an allocator with thread
  /// caches of blocks turns it on.
  detail::PoolFastPath fastPath_;
};

inline ByteBufAllocator& ByteBufAllocator::defaultAllocator() noexcept {
  ByteBufAllocator* a = defaultAllocator_.load(std::memory_order_acquire);
  if (a != nullptr) [[likely]]
    return *a;
  return chooseDefaultAllocator();
}

/// Heap memory from malloc, no pooling and no zeroing. One allocation per buffer: the control
/// block and the data share it (the data is 16-byte aligned).
class UnpooledByteBufAllocator final : public ByteBufAllocator {
 public:
  static UnpooledByteBufAllocator& instance() noexcept;
  bool isPooled() const noexcept override { return false; }
  detail::Storage* allocateStorage(std::size_t minCapacity) override;
};

}  // namespace netbuf
