#include <netbuf/buffer/byte_buf.hpp>

#include <fmt/format.h>
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <new>

namespace netbuf {

std::string_view toString(StorageKind kind) noexcept {
  switch (kind) {
    case StorageKind::Heap:
      return "heap";
    case StorageKind::Pooled:
      return "pooled";
    case StorageKind::Wrapped:
      return "wrapped";
    case StorageKind::OwnedString:
      return "owned-string";
    case StorageKind::OwnedVector:
      return "owned-vector";
    case StorageKind::Unowned:
      return "unowned";
  }
  return "unknown";
}

namespace detail {

void Storage::refCountOverflow() {
  refs.fetch_sub(1, std::memory_order_relaxed);
  throw Error("ByteBuf reference count overflow (more than 2^32-1 handles on one storage)");
}

void Storage::refCountOverflowMany(std::uint32_t n) {
  refs.fetch_sub(n, std::memory_order_relaxed);
  throw Error("ByteBuf reference count overflow (more than 2^32-1 handles on one storage)");
}

void throwOutOfBounds(const ByteBuf& buf, const char* what, std::size_t index, std::size_t length,
                      std::size_t bound) {
  if (!buf.isValid()) {
    throw EmptyBufferError(
        fmt::format("{}: ByteBuf handle is empty (default-constructed or moved-from)", what));
  }
  throw IndexOutOfBoundsError(
      fmt::format("{}: index {}, length {} out of bounds (expected "
                  "index + length <= {}) in {}",
                  what, index, length, bound, buf.toString()));
}

void throwIllFormedUtf8(const char* what, std::size_t offset) {
  throw Utf8Error(fmt::format("{}: ill-formed UTF-8 at offset {}", what, offset), offset);
}

void throwViewOutOfBounds(std::size_t index, std::size_t length, std::size_t bound,
                          const char* what) {
  throw IndexOutOfBoundsError(fmt::format(
      "ByteBufView {}: index {}, length {} out of bounds (expected index + length <= {})", what,
      index, length, bound));
}

}  // namespace detail

// ------------------------------------------------------------------ ByteBuf: errors

void ByteBuf::checkMutable(const char* what) const {
  if (storage_ == nullptr) {
    throw EmptyBufferError(
        fmt::format("{}: ByteBuf handle is empty (default-constructed or moved-from)", what));
  }
  if (readOnly_) {
    throw ReadOnlyBufferError(fmt::format("{}: buffer is read-only: {}", what, toString()));
  }
}

void ByteBuf::badWritableIndex(std::size_t index, std::size_t length, const char* what) const {
  checkMutable(what);
  detail::throwOutOfBounds(*this, what, index, length, capacity_);
}

void ByteBuf::badWriterIndex(std::size_t index) const {
  if (storage_ == nullptr) checkMutable("writerIndex");
  throw IndexOutOfBoundsError(fmt::format(
      "writerIndex: {} (expected: readerIndex({}) <= writerIndex <= capacity({})) in {}", index,
      readerIndex_, capacity_, toString()));
}

void ByteBuf::badCommit(std::size_t n) const {
  checkMutable("commitWrite");
  throw IndexOutOfBoundsError(fmt::format("commitWrite: {} bytes exceeds writableBytes {} in {}", n,
                                          capacity_ - writerIndex_, toString()));
}

std::string ByteBuf::toString() const {
  if (storage_ == nullptr) return "ByteBuf(empty)";
  return fmt::format("ByteBuf({}{}, ridx: {}, widx: {}, cap: {}/{}, refCnt: {})",
                     netbuf::toString(storage_->kind), readOnly_ ? ", read-only" : "", readerIndex_,
                     writerIndex_, capacity_, maxCapacity_, refCnt());
}

// ------------------------------------------------------------------ ByteBuf: capacity

ByteBuf ByteBuf::adopt(detail::Storage* storage, std::size_t capacity, std::size_t maxCapacity) {
  if (storage == nullptr || capacity > storage->size || capacity > maxCapacity ||
      maxCapacity > kMaxCapacityLimit) {
    throw IllegalArgumentError(
        fmt::format("ByteBuf::adopt: capacity {} / maxCapacity {} do not fit storage of {} bytes",
                    capacity, maxCapacity, storage ? storage->size : 0));
  }
  return ByteBuf(storage, storage->data, 0, 0, capacity, maxCapacity, false);
}

std::size_t ByteBuf::maxFastWritableBytes() const noexcept {
  if (writeBlocked_) return 0;
  const std::size_t room = storage_->size - static_cast<std::size_t>(base_ - storage_->data);
  return std::min<std::size_t>(room, maxCapacity_) - writerIndex_;
}

ByteBuf& ByteBuf::capacity(std::size_t newCapacity) {
  checkMutable("capacity");
  if (newCapacity > maxCapacity_) {
    throw IndexOutOfBoundsError(fmt::format("capacity: newCapacity {} exceeds maxCapacity {} in {}",
                                            newCapacity, maxCapacity_, toString()));
  }
  reallocate(newCapacity);
  return *this;
}

void ByteBuf::releaseWithCredit(detail::Storage* storage, std::uint16_t credit) noexcept {
  storage->releaseMany(1U + credit);
}

void ByteBuf::takeRefCredit() {
  // Never more than the count can hold: fall back to smaller batches near the limit (retainMany
  // throws only when even one more reference would overflow).
  const std::uint32_t now = storage_->refs.load(std::memory_order_relaxed);
  const std::uint32_t batch = now <= UINT32_MAX - kRefCreditBatch ? kRefCreditBatch : 1;
  storage_->retainMany(batch);
  refCredit_ = static_cast<std::uint16_t>(batch);
}

void ByteBuf::reallocate(std::size_t newCapacity) {
  if (newCapacity == capacity_) return;
  const std::size_t room = storage_->size - static_cast<std::size_t>(base_ - storage_->data);
  if (newCapacity > capacity_ && newCapacity <= room) {
    // Growing into spare room is safe even when the storage is shared: only this handle can reach
    // bytes past its capacity (derived handles cover ranges inside the capacity they were taken
    // from, and never grow).
    setCapacity(newCapacity);
    return;
  }
  detail::Storage* fresh = alloc().allocateStorage(newCapacity);
  if (fresh->size < newCapacity) [[unlikely]]
    detail::rejectShortStorage(fresh, newCapacity, "ByteBuf reallocation");
  const std::size_t keep = std::min<std::size_t>(capacity_, newCapacity);
  if (keep != 0) std::memcpy(fresh->data, base_, keep);
  releaseStorage(storage_, refCredit_);
  refCredit_ = 0;
  storage_ = fresh;
  base_ = fresh->data;
  setCapacity(newCapacity);
  if (writerIndex_ > newCapacity) {
    readerIndex_ = std::min<std::size_t>(readerIndex_, newCapacity);
    writerIndex_ = newCapacity;
  }
}

void ByteBuf::ensureWritableSlow(std::size_t n) {
  checkMutable("ensureWritable");
  if (n <= capacity_ - writerIndex_) return;
  if (n > maxCapacity_ - writerIndex_) {
    throw IndexOutOfBoundsError(fmt::format(
        "ensureWritable: writerIndex({}) + minWritableBytes({}) exceeds maxCapacity({}) in {}",
        writerIndex_, n, maxCapacity_, toString()));
  }
  const std::size_t fast = maxFastWritableBytes();
  reallocate(fast >= n ? writerIndex_ + fast
                       : ByteBufAllocator::calculateNewCapacity(writerIndex_ + n, maxCapacity_));
}

EnsureWritableResult ByteBuf::ensureWritable(std::size_t n, bool force) {
  checkMutable("ensureWritable");
  if (n <= capacity_ - writerIndex_) return EnsureWritableResult::AlreadyWritable;
  if (n > maxCapacity_ - writerIndex_) {
    if (!force || capacity_ == maxCapacity_) return EnsureWritableResult::NotEnoughUnchanged;
    reallocate(maxCapacity_);
    return EnsureWritableResult::GrewToMax;
  }
  const std::size_t fast = maxFastWritableBytes();
  reallocate(fast >= n ? writerIndex_ + fast
                       : ByteBufAllocator::calculateNewCapacity(writerIndex_ + n, maxCapacity_));
  return EnsureWritableResult::Grew;
}

void ByteBuf::appendBytesSlow(std::span<const std::byte> src) {
  // src may point into this buffer's current storage, which the growth below would release:
  // hold a reference on it until the copy is done.
  detail::Storage* old = storage_;
  if (old != nullptr && !readOnly_) old->retain();
  struct Holder {
    detail::Storage* s;
    ~Holder() {
      if (s) s->release();
    }
  } holder{old != nullptr && !readOnly_ ? old : nullptr};
  ensureWritableSlow(src.size());
  if (!src.empty()) std::memmove(base_ + writerIndex_, src.data(), src.size());
  writerIndex_ += src.size();
}

ByteBuf& ByteBuf::setIndex(std::size_t readerIndex, std::size_t writerIndex) {
  if (readerIndex > writerIndex || writerIndex > capacity_) {
    if (storage_ == nullptr) checkMutable("setIndex");
    throw IndexOutOfBoundsError(fmt::format(
        "setIndex: readerIndex: {}, writerIndex: {} (expected: 0 <= readerIndex <= writerIndex <= "
        "capacity({})) in {}",
        readerIndex, writerIndex, capacity_, toString()));
  }
  readerIndex_ = readerIndex;
  writerIndex_ = writerIndex;
  return *this;
}

ByteBuf& ByteBuf::discardReadBytes() {
  // Read-only handles refuse even when nothing would move (Netty's ReadOnlyByteBuf does too).
  if (writeBlocked_ && storage_ != nullptr) checkMutable("discardReadBytes");
  if (readerIndex_ == 0) return *this;
  if (readerIndex_ != writerIndex_) {
    std::memmove(base_, base_ + readerIndex_, writerIndex_ - readerIndex_);
    writerIndex_ -= readerIndex_;
  } else {
    writerIndex_ = 0;
  }
  detail::adjustMarkers(markedReaderIndex_, markedWriterIndex_, readerIndex_);
  readerIndex_ = 0;
  return *this;
}

ByteBuf& ByteBuf::discardSomeReadBytes() {
  if (writeBlocked_ && storage_ != nullptr) checkMutable("discardSomeReadBytes");
  if (readerIndex_ == 0) return *this;
  if (readerIndex_ == writerIndex_ || readerIndex_ >= capacity_ / 2) return discardReadBytes();
  return *this;
}

// ------------------------------------------------------------------ ByteBuf: sharing

StorageKind ByteBuf::storageKind() const {
  if (storage_ == nullptr) checkMutable("storageKind");
  return storage_->kind;
}

ByteBufAllocator& ByteBuf::alloc() const noexcept {
  return storage_ != nullptr && storage_->allocator != nullptr
             ? *storage_->allocator
             : ByteBufAllocator::defaultAllocator();
}

ByteBuf ByteBuf::retainedDuplicate() const {
  if (storage_ == nullptr) checkMutable("retainedDuplicate");
  storage_->retain();
  return ByteBuf(storage_, base_, readerIndex_, writerIndex_, capacity_, capacity_, readOnly_);
}

ByteBuf ByteBuf::copy(std::size_t index, std::size_t length) const {
  if (storage_ == nullptr) checkMutable("copy");
  checkIndexRange(index, length, "copy");
  ByteBuf out = alloc().buffer(length, std::max<std::size_t>(length, maxCapacity_));
  if (length != 0) std::memcpy(out.base_, base_ + index, length);
  out.writerIndex_ = length;
  return out;
}

ByteBuf ByteBuf::asReadOnly() const {
  if (storage_ == nullptr) checkMutable("asReadOnly");
  storage_->retain();
  return ByteBuf(storage_, base_, readerIndex_, writerIndex_, capacity_, capacity_, true);
}

// ------------------------------------------------------------------ ByteBuf: bytes

ByteBuf ByteBuf::readBytes(std::size_t length) {
  checkReadableRange(length, "readBytes");
  ByteBuf out = copy(readerIndex_, length);
  readerIndex_ += length;
  return out;
}

// ------------------------------------------------------------------ allocators

void ByteBufAllocator::throwBadBufferArguments(std::size_t initialCapacity,
                                               std::size_t maxCapacity) {
  throw IllegalArgumentError(fmt::format(
      "buffer: initialCapacity: {} (expected: 0 <= initialCapacity <= maxCapacity({}) <= {})",
      initialCapacity, maxCapacity, kMaxCapacityLimit));
}

void detail::rejectShortStorage(Storage* storage, std::size_t requested, const char* who) {
  const std::size_t size = storage->size;
  storage->release();
  throw IllegalArgumentError(fmt::format(
      "{}: allocateStorage returned {} bytes for a request of {}", who, size, requested));
}

ByteBuf ByteBufAllocator::zeroedBuffer(std::size_t initialCapacity, std::size_t maxCapacity) {
  ByteBuf b = buffer(initialCapacity, maxCapacity);
  if (initialCapacity != 0) std::memset(b.mutableDataUnchecked(), 0, initialCapacity);
  return b;
}

std::size_t ByteBufAllocator::calculateNewCapacity(std::size_t minNewCapacity,
                                                   std::size_t maxCapacity) {
  constexpr std::size_t kThreshold = std::size_t{4} << 20;  // 4 MiB page
  if (minNewCapacity > maxCapacity) {
    throw IllegalArgumentError(
        fmt::format("calculateNewCapacity: minNewCapacity: {} (expected: not greater than "
                    "maxCapacity({}))",
                    minNewCapacity, maxCapacity));
  }
  if (minNewCapacity == kThreshold) return kThreshold;
  if (minNewCapacity > kThreshold) {
    // Above the threshold grow by whole 4 MiB steps instead of doubling.
    const std::size_t newCapacity = minNewCapacity / kThreshold * kThreshold;
    return newCapacity > maxCapacity - std::min(maxCapacity, kThreshold) ? maxCapacity
                                                                         : newCapacity + kThreshold;
  }
  std::size_t newCapacity = 64;
  while (newCapacity < minNewCapacity) newCapacity <<= 1;
  return std::min(newCapacity, maxCapacity);
}

// defaultAllocator()/setDefaultAllocator() are defined in default_allocator.cpp, which can
// construct either kind of allocator.

detail::Storage* ByteBufAllocator::storageOf(const ByteBuf& buf) noexcept { return buf.storage_; }

namespace {

// Heap storage: one malloc holds the control block followed by the data, so a buffer costs one
// allocation from glibc's thread cache. The data is 16-byte aligned (malloc's guarantee); asking
// for more (aligned operator new, memalign) leaves the thread cache for a path 5-10x slower.
constexpr std::size_t kHeapHeader = (sizeof(detail::Storage) + 15) / 16 * 16;
static_assert(alignof(std::max_align_t) >= 16 && alignof(detail::Storage) <= 16);

void destroyHeap(detail::Storage* s) noexcept {
  s->~Storage();
  std::free(static_cast<void*>(s));
}

}  // namespace

UnpooledByteBufAllocator& UnpooledByteBufAllocator::instance() noexcept {
  static UnpooledByteBufAllocator allocator;
  return allocator;
}

detail::Storage* UnpooledByteBufAllocator::allocateStorage(std::size_t minCapacity) {
  if (minCapacity > kMaxCapacityLimit) throw std::bad_alloc();
  void* raw = std::malloc(kHeapHeader + minCapacity);
  if (raw == nullptr) throw std::bad_alloc();
  auto* s = new (raw) detail::Storage();
  s->kind = StorageKind::Heap;
  s->data = static_cast<std::byte*>(raw) + kHeapHeader;
  s->size = minCapacity;
  s->allocator = this;
  s->destroy = &destroyHeap;
  return s;
}

// ------------------------------------------------------------------ Unpooled

namespace {

struct WrappedStorage : detail::Storage {
  std::function<void(void*, std::size_t)> deleter;
};

template <class Container>
struct OwnedStorage : detail::Storage {
  explicit OwnedStorage(Container&& c) : value(std::move(c)) {}
  Container value;
};

template <class Block>
void destroyBlock(detail::Storage* s) noexcept {
  delete static_cast<Block*>(s);
}

void destroyWrapped(detail::Storage* s) noexcept {
  auto* w = static_cast<WrappedStorage*>(s);
  // The deleter must not throw (documented); destroy is noexcept, so a throw terminates.
  if (w->deleter) w->deleter(w->data, w->size);
  delete w;
}

/// Wrapped memory must fit a ByteBuf's 32-bit indices. Checked before any storage is made, so a
/// refused container is left with the caller (not moved from) and nothing leaks.
void checkWrapSize(const char* what, std::size_t size) {
  if (size > kMaxCapacityLimit) {
    throw IllegalArgumentError(
        fmt::format("{}: {} bytes (expected: <= {})", what, size, kMaxCapacityLimit));
  }
}

ByteBuf wrapFull(detail::Storage* s) {
  ByteBuf b = ByteBuf::adopt(s, s->size, s->size);
  b.writerIndex(s->size);
  return b;
}

}  // namespace

ByteBuf Unpooled::zeroedBuffer(std::size_t initialCapacity, std::size_t maxCapacity) {
  return ByteBufAllocator::defaultAllocator().zeroedBuffer(initialCapacity, maxCapacity);
}

ByteBuf Unpooled::wrappedBuffer(void* data, std::size_t size,
                                std::function<void(void*, std::size_t)> deleter) {
  checkWrapSize("wrappedBuffer", size);
  if (data == nullptr && size != 0) {
    throw IllegalArgumentError(fmt::format("wrappedBuffer: invalid memory ({} bytes)", size));
  }
  auto* s = new WrappedStorage();
  s->kind = StorageKind::Wrapped;
  s->data = static_cast<std::byte*>(data);
  s->size = size;
  s->deleter = std::move(deleter);
  s->destroy = &destroyWrapped;
  return wrapFull(s);
}

ByteBuf Unpooled::wrappedBuffer(std::string&& bytes) {
  checkWrapSize("wrappedBuffer", bytes.size());
  auto* s = new OwnedStorage<std::string>(std::move(bytes));
  // Take the pointer after the move: a short string's characters live inside the string object.
  s->kind = StorageKind::OwnedString;
  s->data = reinterpret_cast<std::byte*>(s->value.data());
  s->size = s->value.size();
  s->destroy = &destroyBlock<OwnedStorage<std::string>>;
  return wrapFull(s);
}

ByteBuf Unpooled::wrappedBuffer(std::vector<std::byte>&& bytes) {
  checkWrapSize("wrappedBuffer", bytes.size());
  auto* s = new OwnedStorage<std::vector<std::byte>>(std::move(bytes));
  s->kind = StorageKind::OwnedVector;
  s->data = s->value.data();
  s->size = s->value.size();
  s->destroy = &destroyBlock<OwnedStorage<std::vector<std::byte>>>;
  return wrapFull(s);
}

ByteBuf Unpooled::wrappedUnownedBuffer(std::span<std::byte> bytes) {
  checkWrapSize("wrappedUnownedBuffer", bytes.size());
  auto* s = new detail::Storage();
  s->kind = StorageKind::Unowned;
  s->data = bytes.data();
  s->size = bytes.size();
  s->destroy = &destroyBlock<detail::Storage>;
  return wrapFull(s);
}

ByteBuf Unpooled::wrappedUnownedBuffer(std::span<const std::byte> bytes) {
  // Nothing writes through the pointer: the writable handle made first is only turned into a
  // read-only one (asReadOnly, which sets up the read-only state in one place) and dropped, and
  // every handle derived from a read-only one is read-only too.
  return wrappedUnownedBuffer(
             std::span<std::byte>(const_cast<std::byte*>(bytes.data()), bytes.size()))
      .asReadOnly();
}

ByteBuf Unpooled::wrappedUnownedBuffer(std::string_view bytes) {
  return wrappedUnownedBuffer(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

ByteBuf Unpooled::copiedBuffer(std::span<const std::byte> bytes) {
  ByteBuf b = buffer(bytes.size(), std::max(bytes.size(), kDefaultMaxCapacity));
  b.writeBytes(bytes);
  return b;
}

ByteBuf Unpooled::copiedBuffer(std::string_view bytes) {
  return copiedBuffer(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

}  // namespace netbuf
