#pragma once
// ByteBuf: netbuf's contiguous byte buffer, with Netty's reader/writer index model and RAII
// ownership of reference-counted storage.
//
// Index model (the invariant every operation keeps):
//
//      +-------------------+------------------+------------------+.........................+
//      | discardable bytes |  readable bytes  |  writable bytes  | growth, up to max       |
//      |                   |     (CONTENT)    |                  |                         |
//      +-------------------+------------------+------------------+.........................+
//      |                   |                  |                  |                         |
//      0      <=      readerIndex   <=   writerIndex    <=    capacity     <=      maxCapacity
//
//  - readX() consumes at readerIndex and advances it; writeX() appends at writerIndex (growing the
//    capacity when needed, never beyond maxCapacity) and advances it.
//  - getX(index)/setX(index) work at absolute indices in [0, capacity) and move no index.
//  - The checked API never touches memory outside [0, capacity): a bad index or length throws
//    IndexOutOfBoundsError naming the index, the length and the bound.
//
// Ownership:
//  - A ByteBuf is a move-only *handle* on storage (a control block plus memory) that is reference
//    counted with an atomic count. Destroying or assigning over the last handle frees the storage
//    (or returns it to the allocator that made it) exactly once, on whichever thread that happens.
//  - Sharing is explicit: retainedSlice(), retainedDuplicate(), readRetainedSlice() and
//    asReadOnly() return new handles on the same storage (refCnt() + 1) with their own indices.
//    Such *derived* handles have a fixed capacity (maxCapacity == capacity): they never reallocate.
//  - copy() is an explicit deep copy. slice() and readSlice() return a ByteBufView: a non-owning
//    view that touches no count and follows std::string_view's lifetime rule.
//  - When a handle must grow past the memory it has, it moves to fresh storage (copying its bytes)
//    and releases its reference on the old one. Other handles sharing the old storage keep it,
//    unchanged: after a reallocation, writes through one handle are no longer seen by the others.
//  - A moved-from or default-constructed handle is *empty*: it may be destroyed or assigned to;
//    index queries return 0; any access throws EmptyBufferError.
//  - A handle is not thread-safe (like std::vector); different handles on the same storage may be
//    used and destroyed on different threads (the count is atomic).
//
// Cost model: each accessor is inline, with one predictable bounds branch on the fast path; growth,
// error formatting and other rare work live out of line. No virtual call on any byte or primitive
// access: heap, pooled, wrapped and unowned buffers differ only in how their control block frees
// memory (one function pointer, called once, when the count reaches zero).

#include <fmt/format.h>
#include <array>
#include <atomic>
#include <boost/asio/buffer.hpp>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <netbuf/buffer/byte_accessors.hpp>
#include <netbuf/buffer/byte_buf_allocator.hpp>
#include <netbuf/buffer/byte_buf_util.hpp>
#include <netbuf/buffer/byte_buf_view.hpp>
#include <netbuf/buffer/byte_processor.hpp>
#include <netbuf/buffer/detail/pool_fast_path.hpp>
#include <netbuf/buffer/detail/storage.hpp>
#include <netbuf/buffer/errors.hpp>
#include <netbuf/buffer/storage_kind.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace netbuf {

class ByteBuf;
class ByteBufAllocator;

/// Result of the non-throwing ByteBuf::ensureWritable(n, force); values match Netty's ints.
enum class EnsureWritableResult : int {
  AlreadyWritable = 0,     ///< Enough room already; capacity unchanged.
  NotEnoughUnchanged = 1,  ///< Would exceed maxCapacity and force was false; capacity unchanged.
  GrewToMax = 2,  ///< Would exceed maxCapacity; force was true, so capacity == maxCapacity.
  Grew = 3,       ///< Capacity increased to fit the request.
};

// kDefaultMaxCapacity and kMaxCapacityLimit are defined in limits.hpp.

namespace detail {

[[noreturn]] void throwOutOfBounds(const ByteBuf& buf, const char* what, std::size_t index,
                                   std::size_t length, std::size_t bound);

/// True when [index, index + length) lies inside [0, limit), with no overflow for any inputs.
constexpr bool fits(std::size_t index, std::size_t length, std::size_t limit) noexcept {
  return index <= limit && length <= limit - index;
}

}  // namespace detail

class ByteBuf : public ByteAccessors<ByteBuf> {
 public:
  /// One piece of memory: ByteAccessors compiles out its segmented paths.
  static constexpr bool kContiguous = true;
  static constexpr std::size_t npos = byte_buf_util::npos;

  /// An empty handle (no storage). See the ownership notes above.
  ByteBuf() noexcept = default;
  ~ByteBuf() { reset(); }

  ByteBuf(ByteBuf&& other) noexcept { moveFrom(other); }
  // Moves first, then releases the old reference unless this was a self-move, which moveFrom
  // (self-move safe field by field) leaves as it was: after it, other.storage_ is null exactly
  // when other is another handle. No address comparison: with `if (this != &other)` around the
  // body, clang 14 kept the temporary of `slot = alloc.buffer(n)` on the stack and copied it
  // field by field (about 2 ns per assignment in the allocator benchmark's random-slot loop).
  ByteBuf& operator=(ByteBuf&& other) noexcept {
    detail::Storage* const old = storage_;
    const std::uint16_t oldCredit = refCredit_;
    moveFrom(other);
    if (old != nullptr && other.storage_ == nullptr) releaseStorage(old, oldCredit);
    return *this;
  }
  ByteBuf(const ByteBuf&) = delete;
  ByteBuf& operator=(const ByteBuf&) = delete;

  /// Adopts a storage block whose count is 1 (for allocator implementations): the new handle has
  /// indices 0/0, the given capacity (<= storage->size) and maxCapacity.
  static ByteBuf adopt(detail::Storage* storage, std::size_t capacity, std::size_t maxCapacity);

  /// Releases this handle's reference; the handle becomes empty.
  void reset() noexcept {
    if (storage_ != nullptr) {
      releaseStorage(storage_, refCredit_);
      refCredit_ = 0;
      storage_ = nullptr;
    }
    base_ = nullptr;
    readerIndex_ = writerIndex_ = capacity_ = maxCapacity_ = 0;
    markedReaderIndex_ = markedWriterIndex_ = 0;
    readOnly_ = false;
    writeBlocked_ = true;
    writeLimit_ = 0;
  }

  /// True when the handle owns storage (not default-constructed, not moved-from).
  bool isValid() const noexcept { return storage_ != nullptr; }
  explicit operator bool() const noexcept { return isValid(); }

  // ---------------------------------------------------------------- capacity and indices
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t maxCapacity() const noexcept { return maxCapacity_; }
  /// Changes the capacity to newCapacity (<= maxCapacity), reallocating; shrinking trims the
  /// indices to the new capacity as Netty does. Throws on read-only and empty handles.
  ByteBuf& capacity(std::size_t newCapacity);
  /// Bytes that can be written without reallocating (spare room in the current memory).
  std::size_t maxFastWritableBytes() const noexcept;

  std::size_t readerIndex() const noexcept { return readerIndex_; }
  std::size_t writerIndex() const noexcept { return writerIndex_; }
  /// Sets readerIndex; requires readerIndex <= writerIndex.
  ByteBuf& readerIndex(std::size_t index) {
    if (index > writerIndex_)
      detail::throwOutOfBounds(*this, "readerIndex", index, 0, writerIndex_);
    readerIndex_ = index;
    return *this;
  }
  /// Sets writerIndex; requires readerIndex <= writerIndex <= capacity.
  ByteBuf& writerIndex(std::size_t index) {
    if (index < readerIndex_ || index > capacity_) badWriterIndex(index);
    writerIndex_ = index;
    return *this;
  }
  /// Sets both; requires readerIndex <= writerIndex <= capacity.
  ByteBuf& setIndex(std::size_t readerIndex, std::size_t writerIndex);

  std::size_t readableBytes() const noexcept { return writerIndex_ - readerIndex_; }
  std::size_t writableBytes() const noexcept { return capacity_ - writerIndex_; }
  std::size_t maxWritableBytes() const noexcept { return maxCapacity_ - writerIndex_; }
  bool isReadable() const noexcept { return writerIndex_ > readerIndex_; }
  bool isReadable(std::size_t n) const noexcept { return n <= writerIndex_ - readerIndex_; }
  bool isWritable() const noexcept { return !writeBlocked_ && capacity_ > writerIndex_; }
  bool isWritable(std::size_t n) const noexcept {
    return !writeBlocked_ && n <= capacity_ - writerIndex_;
  }

  /// readerIndex = writerIndex = 0; content and capacity unchanged.
  ByteBuf& clear() noexcept {
    readerIndex_ = writerIndex_ = 0;
    return *this;
  }
  ByteBuf& markReaderIndex() noexcept {
    markedReaderIndex_ = readerIndex_;
    return *this;
  }
  ByteBuf& resetReaderIndex() { return readerIndex(markedReaderIndex_); }
  ByteBuf& markWriterIndex() noexcept {
    markedWriterIndex_ = writerIndex_;
    return *this;
  }
  ByteBuf& resetWriterIndex() { return writerIndex(markedWriterIndex_); }

  ByteBuf& skipBytes(std::size_t n) {
    if (n > writerIndex_ - readerIndex_)
      detail::throwOutOfBounds(*this, "skipBytes", readerIndex_, n, writerIndex_);
    readerIndex_ += n;
    return *this;
  }

  /// Moves the readable bytes to index 0 (readerIndex becomes 0); marks adjusted as in Netty.
  ByteBuf& discardReadBytes();
  /// Like discardReadBytes, but only when it pays: all bytes read, or readerIndex past half the
  /// capacity (Netty's policy, used by decoders' cumulation buffers).
  ByteBuf& discardSomeReadBytes();

  /// Makes room for n more bytes after writerIndex, growing by Netty's policy (power of two from 64
  /// up to 4 MiB, then 4 MiB steps, capped at maxCapacity). Throws IndexOutOfBoundsError when
  /// writerIndex + n > maxCapacity, ReadOnlyBufferError on a read-only handle.
  ByteBuf& ensureWritable(std::size_t n) {
    if (writeBlocked_ || n > capacity_ - writerIndex_) ensureWritableSlow(n);
    return *this;
  }
  /// Non-throwing form (except for read-only/empty handles); see EnsureWritableResult.
  EnsureWritableResult ensureWritable(std::size_t n, bool force);

  // ---------------------------------------------------------------- sharing and copying
  /// Number of references to this buffer's storage (0 for an empty handle): one per handle, plus
  /// the unspent reference credit of other handles (see readRetainedSliceBatched); this handle's
  /// own credit is not counted.
  std::uint32_t refCnt() const noexcept {
    return storage_ ? storage_->refs.load(std::memory_order_acquire) - refCredit_ : 0;
  }
  StorageKind storageKind() const;
  /// The allocator new memory comes from when this buffer grows or is copied.
  ByteBufAllocator& alloc() const noexcept;

  /// A new handle on the same storage and the whole capacity, with the same indices (not marks).
  ByteBuf retainedDuplicate() const;
  /// A new handle on [readerIndex, writerIndex); its indices are 0 and readableBytes().
  ByteBuf retainedSlice() const { return retainedSlice(readerIndex_, writerIndex_ - readerIndex_); }
  /// A new handle on [index, index + length) (checked against capacity), fully readable.
  ByteBuf retainedSlice(std::size_t index, std::size_t length) const {
    if (storage_ == nullptr) checkMutable("retainedSlice");
    checkIndexRange(index, length, "retainedSlice");
    storage_->retain();
    return ByteBuf(storage_, base_ + index, 0, length, length, length, readOnly_);
  }
  /// retainedSlice(readerIndex, length), then advances readerIndex by length.
  ByteBuf readRetainedSlice(std::size_t length) {
    if (storage_ == nullptr) checkMutable("readRetainedSlice");
    checkReadableRange(length, "readRetainedSlice");
    storage_->retain();
    const std::size_t at = readerIndex_;
    readerIndex_ = at + length;
    return ByteBuf(storage_, base_ + at, 0, length, length, length, readOnly_);
  }

  /// readRetainedSlice(length) for code that cuts many slices from one buffer (frame decoders).
  /// The slice's reference is taken from a *reference credit*: references this handle acquires
  /// from the storage kRefCreditBatch at a time, in one atomic add, instead of one atomic add per
  /// slice. Unspent credit goes back in one atomic subtraction when this handle lets go of the
  /// storage (reset, destruction, assignment, reallocation). Until then the storage lives a little
  /// longer than the slices strictly need, and other handles' refCnt() include the credit.
  ByteBuf readRetainedSliceBatched(std::size_t length) {
    if (storage_ == nullptr) checkMutable("readRetainedSlice");
    checkReadableRange(length, "readRetainedSlice");
    if (refCredit_ == 0) takeRefCredit();
    --refCredit_;
    const std::size_t at = readerIndex_;
    readerIndex_ = at + length;
    return ByteBuf(storage_, base_ + at, 0, length, length, length, readOnly_);
  }
  /// retainedSlice(index, length) taking its reference from the credit, as above.
  ByteBuf retainedSliceBatched(std::size_t index, std::size_t length) {
    if (storage_ == nullptr) checkMutable("retainedSlice");
    checkIndexRange(index, length, "retainedSlice");
    if (refCredit_ == 0) takeRefCredit();
    --refCredit_;
    return ByteBuf(storage_, base_ + index, 0, length, length, length, readOnly_);
  }
  static constexpr std::uint32_t kRefCreditBatch = 64;
  static_assert(kRefCreditBatch <= UINT16_MAX, "the credit is 16 bits");

  /// A non-owning view of the readable bytes (see byte_buf_view.hpp for its lifetime rule).
  ByteBufView slice() const noexcept { return {base_ + readerIndex_, writerIndex_ - readerIndex_}; }
  /// A non-owning view of [index, index + length), checked against capacity.
  ByteBufView slice(std::size_t index, std::size_t length) const {
    checkIndexRange(index, length, "slice");
    return {base_ + index, length};
  }
  /// A non-owning view of the next length readable bytes; advances readerIndex.
  ByteBufView readSlice(std::size_t length) {
    checkReadableRange(length, "readSlice");
    ByteBufView v{base_ + readerIndex_, length};
    readerIndex_ += length;
    return v;
  }

  /// Deep copy of the readable bytes into new memory from alloc().
  ByteBuf copy() const { return copy(readerIndex_, writerIndex_ - readerIndex_); }
  /// Deep copy of [index, index + length), checked against capacity.
  ByteBuf copy(std::size_t index, std::size_t length) const;

  /// A read-only handle on the same storage with the same indices. Every set/write, capacity
  /// change or writable region through it throws ReadOnlyBufferError.
  ByteBuf asReadOnly() const;
  bool isReadOnly() const noexcept { return readOnly_; }

  // ---------------------------------------------------------------- bytes, search, text
  // getBytes/setBytes/readBytes/writeBytes, setZero/writeZero, indexOf/bytesBefore/forEachByte,
  // equals/compare/hashCode, hexDump/prettyHexDump, the UTF-8/ASCII text family and writeFormat
  // come from ByteAccessors (byte_accessors.hpp), shared with ByteBufView and CompositeByteBuf.
  using ByteAccessors<ByteBuf>::readBytes;
  /// Reads length bytes into a new buffer from alloc() (a copy).
  ByteBuf readBytes(std::size_t length);

  /// One line: "ByteBuf(heap, ridx: 0, widx: 5, cap: 64/2147483647, refCnt: 1)".
  std::string toString() const;

  // ---------------------------------------------------------------- Asio interop
  /// The readable bytes as an Asio buffer (valid until this buffer reallocates or is destroyed).
  boost::asio::const_buffer readableBuffer() const noexcept {
    return {base_ + readerIndex_, writerIndex_ - readerIndex_};
  }
  /// The readable bytes as an Asio ConstBufferSequence (one buffer), so code that gathers writes
  /// can be generic over ByteBuf and CompositeByteBuf: asio::async_write(s, b.readableBuffers(),..)
  std::array<boost::asio::const_buffer, 1> readableBuffers() const noexcept {
    return {readableBuffer()};
  }
  /// The writable region [writerIndex, capacity) as an Asio buffer. Fill it, then commitWrite(n).
  /// Throws ReadOnlyBufferError on a read-only handle.
  boost::asio::mutable_buffer writableBuffer() {
    if (writeBlocked_) checkMutable("writableBuffer");
    return {base_ + writerIndex_, capacity_ - writerIndex_};
  }
  /// ensureWritable(minWritable), then writableBuffer().
  boost::asio::mutable_buffer writableBuffer(std::size_t minWritable) {
    ensureWritable(minWritable);
    return writableBuffer();
  }
  /// Makes n bytes written into writableBuffer() readable (checked: n <= writableBytes()).
  ByteBuf& commitWrite(std::size_t n) {
    if (writeBlocked_ || n > capacity_ - writerIndex_) badCommit(n);
    writerIndex_ += n;
    return *this;
  }

  // ---------------------------------------------------------------- raw access
  /// The readable bytes as a span (valid until reallocation or destruction).
  std::span<const std::byte> readableSpan() const noexcept {
    return {base_ + readerIndex_, writerIndex_ - readerIndex_};
  }
  /// The readable bytes as text (no validation; valid until reallocation or destruction).
  std::string_view readableStringView() const noexcept {
    return {reinterpret_cast<const char*>(base_ + readerIndex_), writerIndex_ - readerIndex_};
  }
  /// Memory at index 0 (nullptr for an empty handle).
  const std::byte* data() const noexcept { return base_; }

  // Unchecked accessors for netbuf's own fast paths (text transcoders, codecs). They do no bounds,
  // read-only or empty-handle checks: the caller must have called ensureWritable(n) (which does
  // all three) before writing n bytes at writePtrUnchecked() and committing them.
  std::byte* writePtrUnchecked() noexcept { return base_ + writerIndex_; }
  std::byte* mutableDataUnchecked() noexcept { return base_; }
  void advanceWriterUnchecked(std::size_t n) noexcept { writerIndex_ += n; }
  const std::byte* readPtr() const noexcept { return base_ + readerIndex_; }
  void advanceReaderUnchecked(std::size_t n) noexcept { readerIndex_ += n; }

  // ---- The raw operations behind ByteAccessors (see byte_accessors.hpp). ----
  void checkIndexRange(std::size_t index, std::size_t length, const char* what) const {
    if (!detail::fits(index, length, capacity_))
      detail::throwOutOfBounds(*this, what, index, length, capacity_);
  }
  void checkReadableRange(std::size_t length, const char* what) const {
    if (length > writerIndex_ - readerIndex_)
      detail::throwOutOfBounds(*this, what, readerIndex_, length, writerIndex_);
  }
  void checkWritableRange(std::size_t index, std::size_t length, const char* what) {
    if (writeBlocked_ || !detail::fits(index, length, capacity_))
      badWritableIndex(index, length, what);
  }
  /// Contiguous memory: every in-bounds range is one piece.
  const std::byte* contiguous(std::size_t index, std::size_t) const noexcept {
    return base_ + index;
  }
  std::byte* contiguousMutable(std::size_t index, std::size_t) noexcept { return base_ + index; }
  template <class Fn>
  bool forEachSegment(std::size_t index, std::size_t length, Fn&& fn) const {
    return length == 0 || fn(std::span<const std::byte>(base_ + index, length));
  }
  template <class Fn>
  void forEachMutableSegment(std::size_t index, std::size_t length, Fn&& fn) {
    if (length != 0) fn(std::span<std::byte>(base_ + index, length));
  }
  /// Appends src, growing as needed. src may point into this buffer's own memory.
  void appendBytes(std::span<const std::byte> src) {
    if (writeBlocked_ || src.size() > capacity_ - writerIndex_) return appendBytesSlow(src);
    // memmove: src may be this buffer's own bytes, overlapping the destination.
    if (!src.empty()) std::memmove(base_ + writerIndex_, src.data(), src.size());
    writerIndex_ += src.size();
  }

  template <class T, std::size_t N, ByteOrder O>
  T getValue(std::size_t index) const {
    if (!detail::fits(index, N, capacity_))
      detail::throwOutOfBounds(*this, "get", index, N, capacity_);
    return detail::loadValue<T, N, O>(base_ + index);
  }
  template <class T, std::size_t N, ByteOrder O>
  T readValue() {
    if (readerIndex_ + N > writerIndex_)
      detail::throwOutOfBounds(*this, "read", readerIndex_, N, writerIndex_);
    T v = detail::loadValue<T, N, O>(base_ + readerIndex_);
    readerIndex_ += N;
    return v;
  }
  template <class T, std::size_t N, ByteOrder O>
  void setValue(std::size_t index, T value) {
    checkWritableRange(index, N, "set");
    detail::storeValue<T, N, O>(base_ + index, value);
  }
  template <class T, std::size_t N, ByteOrder O>
  void writeValue(T value) {
    // writeLimit_ is 0 on a read-only or empty handle, so one compare against one field covers
    // both; writerIndex_ <= kMaxCapacityLimit, so the sum cannot overflow. (Testing writeBlocked_
    // and capacity_ instead costs a load and a branch per value: the store below writes through a
    // byte pointer, which may alias this object, so every field the test reads is reloaded on the
    // next call.)
    if (writerIndex_ + N > writeLimit_) ensureWritableSlow(N);
    // The index is read once, before the store: the store writes through a byte pointer, which
    // may alias this object, so `writerIndex_ += N` after it would reload writerIndex_ from memory
    // and chain every write to the previous one through a store-to-load forwarding.
    const std::size_t wi = writerIndex_;
    detail::storeValue<T, N, O>(base_ + wi, value);
    writerIndex_ = wi + N;
  }

 private:
  friend class ByteBufAllocator;
  friend struct Unpooled;

  ByteBuf(detail::Storage* storage, std::byte* base, std::size_t readerIndex,
          std::size_t writerIndex, std::size_t capacity, std::size_t maxCapacity,
          bool readOnly) noexcept
      : storage_(storage),
        base_(base),
        readerIndex_(readerIndex),
        writerIndex_(writerIndex),
        capacity_(capacity),
        maxCapacity_(maxCapacity),
        writeLimit_(readOnly || storage == nullptr ? 0 : static_cast<std::uint32_t>(capacity)),
        readOnly_(readOnly),
        writeBlocked_(readOnly || storage == nullptr) {}

  /// Sets capacity_ and the write limit that follows it (see writeLimit_).
  void setCapacity(std::size_t capacity) noexcept {
    capacity_ = static_cast<std::uint32_t>(capacity);
    writeLimit_ = writeBlocked_ ? 0 : capacity_;
  }

  void moveFrom(ByteBuf& o) noexcept {
    storage_ = std::exchange(o.storage_, nullptr);
    base_ = std::exchange(o.base_, nullptr);
    readerIndex_ = std::exchange(o.readerIndex_, 0);
    writerIndex_ = std::exchange(o.writerIndex_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    maxCapacity_ = std::exchange(o.maxCapacity_, 0);
    markedReaderIndex_ = std::exchange(o.markedReaderIndex_, 0);
    markedWriterIndex_ = std::exchange(o.markedWriterIndex_, 0);
    writeLimit_ = std::exchange(o.writeLimit_, 0);
    readOnly_ = std::exchange(o.readOnly_, false);
    writeBlocked_ = std::exchange(o.writeBlocked_, true);
    refCredit_ = std::exchange(o.refCredit_, 0);
  }

  /// Throws the right error for a mutation of an empty or read-only handle.
  void checkMutable(const char* what) const;
  [[noreturn]] void badWritableIndex(std::size_t index, std::size_t length, const char* what) const;
  [[noreturn]] void badWriterIndex(std::size_t index) const;
  [[noreturn]] void badCommit(std::size_t n) const;
  void ensureWritableSlow(std::size_t n);
  void takeRefCredit();
  /// Drops one handle's reference to `storage` and its unspent `credit` (the handle's fields are
  /// not touched: the move assignment calls it after the handle took new storage).
  static void releaseStorage(detail::Storage* storage, std::uint16_t credit) noexcept {
    if (credit != 0) [[unlikely]] {
      releaseWithCredit(storage, credit);
    } else {
      storage->release();
    }
  }
  /// Releases a reference and its unspent credit (out of line: reset() stays small).
  static void releaseWithCredit(detail::Storage* storage, std::uint16_t credit) noexcept;
  void appendBytesSlow(std::span<const std::byte> src);
  /// Moves to memory of newCapacity bytes (or grows into spare room when it can).
  void reallocate(std::size_t newCapacity);

  // Invariants: readerIndex_ <= writerIndex_ <= capacity_ <= maxCapacity_ <= kMaxCapacityLimit;
  // base_[0..capacity_) lies inside storage_->data[0..storage_->size); an empty handle has every
  // field zero/null (writeBlocked_ true). Derived handles (slices, duplicates) have
  // maxCapacity_ == capacity_. writeLimit_ == (writeBlocked_ ? 0 : capacity_), and
  // writeBlocked_ == (readOnly_ || storage_ == nullptr).
  //
  // Indices and capacities are 32-bit (kMaxCapacityLimit is UINT32_MAX; Netty's is 2^31 - 1): the
  // handle is 48 bytes instead of 72, which is what a slot of a vector of buffers, a pipeline's
  // message or a composite's component costs in cache. The API takes and returns std::size_t;
  // every value stored here has been checked against capacity_ or maxCapacity_ first, and sums
  // of an index and a length are computed in std::size_t, so none overflows.
  detail::Storage* storage_ = nullptr;
  std::byte* base_ = nullptr;
  std::uint32_t readerIndex_ = 0;
  std::uint32_t writerIndex_ = 0;
  std::uint32_t capacity_ = 0;
  std::uint32_t maxCapacity_ = 0;
  std::uint32_t markedReaderIndex_ = 0;
  std::uint32_t markedWriterIndex_ = 0;
  // writeBlocked_ ? 0 : capacity_ (kept so by the constructor, setCapacity, reset and moveFrom):
  // the one field the fixed-size write fast path (writeValue) compares writerIndex_ + N with.
  // Paths whose length may be zero test writeBlocked_ instead, so that a zero-length write to a
  // read-only handle still throws.
  std::uint32_t writeLimit_ = 0;
  // References to storage_ held in reserve by this handle (beyond its own), spent by
  // readRetainedSliceBatched; at most kRefCreditBatch.
  std::uint16_t refCredit_ = 0;
  bool readOnly_ = false;
  // readOnly_ || empty: what the write paths whose length may be zero test.
  bool writeBlocked_ = true;
};
static_assert(sizeof(ByteBuf) == 48,
              "two pointers, seven 32-bit indices and limits, the credit, two flags");

inline bool operator==(const ByteBuf& a, const ByteBuf& b) { return a.equals(b); }

inline ByteBuf ByteBufAllocator::buffer(std::size_t initialCapacity, std::size_t maxCapacity) {
  if (initialCapacity > maxCapacity || maxCapacity > kMaxCapacityLimit) [[unlikely]]
    throwBadBufferArguments(initialCapacity, maxCapacity);
  // A thread-cache hit (detail::popFast: only the pool turns it on), inline: a virtual call would
  // cost more than the hit. Every other case makes the call. Either way the call yields a block,
  // not a handle: a handle returned by a call comes back through memory, and then the caller's move
  // from that temporary (wide loads over the narrower stores that built it) cannot be forwarded
  // from the store buffer and waits for the stores to retire (up to 0.7 ns per allocation,
  // measured).
  detail::Storage* s = detail::popFast(fastPath_, initialCapacity);
  if (s == nullptr) [[unlikely]] {
    s = allocateStorage(initialCapacity);
    if (s->size < initialCapacity) [[unlikely]]
      detail::rejectShortStorage(s, initialCapacity, "ByteBufAllocator::buffer");
  }
  return handleOn(s, initialCapacity, maxCapacity);
}

inline ByteBuf ByteBufAllocator::handleOn(detail::Storage* storage, std::size_t initialCapacity,
                                          std::size_t maxCapacity) noexcept {
  return ByteBuf(storage, storage->data, 0, 0, initialCapacity, maxCapacity, false);
}

// ------------------------------------------------------------------ allocators

// ByteBufAllocator and UnpooledByteBufAllocator live in byte_buf_allocator.hpp (included above).

/// Netty-style factory functions for buffers that do not come from a particular allocator.
struct Unpooled {
  /// A buffer from the default allocator: the process-wide pool unless NETBUF_ALLOCATOR=unpooled
  /// (unlike Netty's Unpooled.buffer, which is always unpooled; here the name says only that no
  /// allocator is named). Inline, so that it costs what defaultAllocator().buffer() costs.
  static ByteBuf buffer(std::size_t initialCapacity = ByteBufAllocator::kDefaultInitialCapacity,
                        std::size_t maxCapacity = kDefaultMaxCapacity) {
    return ByteBufAllocator::defaultAllocator().buffer(initialCapacity, maxCapacity);
  }
  /// A buffer from the default allocator whose initial capacity is zero-filled.
  static ByteBuf zeroedBuffer(std::size_t initialCapacity,
                              std::size_t maxCapacity = kDefaultMaxCapacity);
  /// An empty CompositeByteBuf whose new components come from the default allocator (Netty's
  /// Unpooled.compositeBuffer(maxNumComponents); the same as
  /// ByteBufAllocator::defaultAllocator().compositeBuffer(maxNumComponents)). Defined in
  /// composite_byte_buf.cpp: include <netbuf/buffer/composite_byte_buf.hpp> to call it.
  static CompositeByteBuf compositeBuffer(std::size_t maxNumComponents = 16);

  /// Wraps foreign memory [data, data + size) without copying; deleter(data, size) runs exactly
  /// once, when the last handle goes. Fully readable; fixed capacity (maxCapacity == size).
  static ByteBuf wrappedBuffer(void* data, std::size_t size,
                               std::function<void(void*, std::size_t)> deleter);
  /// Takes ownership of a string's characters without copying them.
  static ByteBuf wrappedBuffer(std::string&& bytes);
  /// Takes ownership of a vector's bytes without copying them.
  static ByteBuf wrappedBuffer(std::vector<std::byte>&& bytes);
  /// Wraps memory the caller keeps alive (and unchanged by others) for as long as any handle on it
  /// exists. Writable, fixed capacity, fully readable.
  static ByteBuf wrappedUnownedBuffer(std::span<std::byte> bytes);
  /// Wraps constant memory the caller keeps alive: the buffer is read-only.
  static ByteBuf wrappedUnownedBuffer(std::span<const std::byte> bytes);
  static ByteBuf wrappedUnownedBuffer(std::string_view bytes);

  /// A new heap buffer holding a copy of the bytes (fully readable, capacity == size).
  static ByteBuf copiedBuffer(std::span<const std::byte> bytes);
  static ByteBuf copiedBuffer(std::string_view bytes);
  static ByteBuf copiedBuffer(const ByteBuf& buf) { return buf.copy(); }
};

}  // namespace netbuf

template <>
struct std::hash<netbuf::ByteBuf> {
  std::size_t operator()(const netbuf::ByteBuf& b) const noexcept { return b.hashCode(); }
};

/// fmt support: "{}" prints ByteBuf::toString(); "{:x}" prints prettyHexDump().
template <>
struct fmt::formatter<netbuf::ByteBuf> : netbuf::detail::BufferFormatter {};
