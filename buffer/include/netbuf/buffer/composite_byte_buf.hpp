#pragma once
// CompositeByteBuf: an ordered list of ByteBuf components presented as one buffer, without copying.
//
// Layout: the components lie end to end in one index space with ByteBuf's index model.
//
//      component 0          component 1                 component 2 (spare room)
//   +---------------+-------------------------+---------------------------------+
//   |  header       |  payload (a slice of    |  bytes written through the      |
//   |               |  someone's ByteBuf)     |  composite                      |
//   +---------------+-------------------------+---------------------------------+
//   0            offset(1)                 offset(2)                      capacity()
//        0 <= readerIndex <= writerIndex <= capacity <= maxCapacity
//
// Ownership: every component is a ByteBuf handle owned by the composite (it holds one reference on
// the component's storage). addComponent takes a ByteBuf by value: move yours in to hand over your
// reference, or pass buf.retainedSlice() to keep your own. Only the readable region of an added
// buffer becomes the component (Netty's semantics). Destroying the composite releases every
// component. A CompositeByteBuf is move-only, like ByteBuf, and not thread-safe.
//
// Cost model:
//  - Accesses inside one component take a contiguous fast path through a cached "current
//    component" (sequential reads never search). Other offsets are found by binary search over the
//    component offsets: O(log n). Accesses that straddle a boundary gather/scatter through a small
//    stack buffer.
//  - addComponent is O(1) at the end. When the count exceeds maxNumComponents, the trailing
//    components are merged into one consolidation buffer owned by the composite that grows by
//    doubling, so adding components one at a time copies each byte O(1) times amortized (never
//    quadratic, unlike consolidating everything each time).
//  - discardReadComponents/discardReadBytes drop or trim components without copying bytes.
//  - readableBuffers() is an Asio ConstBufferSequence over the components themselves: no
//  allocation,
//    one writev for the whole chain.

#include <boost/asio/buffer.hpp>
#include <cstddef>
#include <iterator>
#include <netbuf/buffer/byte_accessors.hpp>
#include <netbuf/buffer/byte_buf.hpp>
#include <string>
#include <variant>
#include <vector>

namespace netbuf {

class CompositeByteBuf : public ByteAccessors<CompositeByteBuf> {
  struct Component {
    ByteBuf buf;                // owns the reference; covers at least [data, data + length)
    std::byte* data = nullptr;  // first byte of this component
    std::size_t offset = 0;     // index of data[0] in the composite
    std::size_t length = 0;     // bytes this component contributes
    bool writable = false;      // false when buf is read-only
    // Allocated by this composite (growth or consolidation): exclusively ours and growable in
    // place. Invariant for owned components: data + length == buf.data() + buf.writerIndex().
    bool owned = false;
    std::size_t end() const noexcept { return offset + length; }
  };

 public:
  /// Netty's default maxNumComponents.
  static constexpr std::size_t kDefaultMaxComponents = 16;

  /// An empty composite (capacity 0) whose new components come from alloc.
  explicit CompositeByteBuf(ByteBufAllocator& alloc = ByteBufAllocator::defaultAllocator(),
                            std::size_t maxNumComponents = kDefaultMaxComponents,
                            std::size_t maxCapacity = kDefaultMaxCapacity);
  CompositeByteBuf(CompositeByteBuf&& other) noexcept;
  CompositeByteBuf& operator=(CompositeByteBuf&& other) noexcept;
  CompositeByteBuf(const CompositeByteBuf&) = delete;
  CompositeByteBuf& operator=(const CompositeByteBuf&) = delete;
  ~CompositeByteBuf() = default;

  // ---------------------------------------------------------------- components
  /// Appends buf's readable bytes as a new last component; writerIndex unchanged (Netty's
  /// default, so the bytes are not readable until writerIndex moves: prefer the bool form).
  CompositeByteBuf& addComponent(ByteBuf buf) { return addComponent(false, std::move(buf)); }
  /// Appends buf's readable bytes; when increaseWriterIndex, writerIndex grows by their count.
  /// Unlike Netty, an appending add first gives back the composite's own unwritten room past
  /// writerIndex (allocated by earlier writes), so the new bytes follow the written ones directly
  /// instead of leaving unwritten bytes readable in between.
  CompositeByteBuf& addComponent(bool increaseWriterIndex, ByteBuf buf);
  /// Inserts buf's readable bytes as component cIndex (0 <= cIndex <= numComponents()).
  CompositeByteBuf& addComponent(std::size_t cIndex, ByteBuf buf) {
    return addComponent(false, cIndex, std::move(buf));
  }
  CompositeByteBuf& addComponent(bool increaseWriterIndex, std::size_t cIndex, ByteBuf buf);
  /// Moves other's components (its readable region) in at the end: flattened, never nested.
  CompositeByteBuf& addComponent(bool increaseWriterIndex, CompositeByteBuf&& other);
  /// Appends every buffer of bufs (moved from) in order.
  CompositeByteBuf& addComponents(bool increaseWriterIndex, std::span<ByteBuf> bufs);
  /// Removes component cIndex (its reference is released). Indices beyond the new capacity are
  /// trimmed to it.
  CompositeByteBuf& removeComponent(std::size_t cIndex) { return removeComponents(cIndex, 1); }
  CompositeByteBuf& removeComponents(std::size_t cIndex, std::size_t numComponents);

  std::size_t numComponents() const noexcept { return components_.size(); }
  std::size_t maxNumComponents() const noexcept { return maxNumComponents_; }
  /// A new handle (+1 reference) on exactly the bytes of component cIndex.
  ByteBuf component(std::size_t cIndex) const;
  /// The component containing byte `offset` (0 <= offset < capacity): O(log n), with a shortcut
  /// for the component accessed last.
  std::size_t toComponentIndex(std::size_t offset) const {
    // Inline fast path: the cached component (its range always lies inside the capacity).
    if (offset - curOffset_ < curLen_) return curIndex_;
    return toComponentIndexSlow(offset);
  }
  /// The composite index of component cIndex's first byte.
  std::size_t toByteIndex(std::size_t cIndex) const;

  /// Copies every component into one new component (one allocation); content preserved.
  CompositeByteBuf& consolidate();
  /// Copies components [cIndex, cIndex + numComponents) into one.
  CompositeByteBuf& consolidate(std::size_t cIndex, std::size_t numComponents);
  /// Releases components entirely before readerIndex (no copying); indices move down.
  CompositeByteBuf& discardReadComponents();
  /// Like discardReadComponents, then trims the first component to start at readerIndex, so
  /// readerIndex becomes 0 (no copying either).
  CompositeByteBuf& discardReadBytes();
  /// Retained slices of the components covering [offset, offset + length), in order.
  std::vector<ByteBuf> decompose(std::size_t offset, std::size_t length) const;

  // ---------------------------------------------------------------- indices (as ByteBuf)
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t maxCapacity() const noexcept { return maxCapacity_; }
  /// Grows by adding a component from alloc(), or shrinks by dropping/trimming trailing ones.
  CompositeByteBuf& capacity(std::size_t newCapacity);
  std::size_t readerIndex() const noexcept { return readerIndex_; }
  std::size_t writerIndex() const noexcept { return writerIndex_; }
  CompositeByteBuf& readerIndex(std::size_t index);
  CompositeByteBuf& writerIndex(std::size_t index);
  CompositeByteBuf& setIndex(std::size_t readerIndex, std::size_t writerIndex);
  std::size_t readableBytes() const noexcept { return writerIndex_ - readerIndex_; }
  std::size_t writableBytes() const noexcept { return capacity_ - writerIndex_; }
  std::size_t maxWritableBytes() const noexcept { return maxCapacity_ - writerIndex_; }
  bool isReadable(std::size_t n = 1) const noexcept { return n <= readableBytes(); }
  bool isWritable(std::size_t n = 1) const noexcept { return n <= writableBytes(); }
  CompositeByteBuf& clear() noexcept {
    readerIndex_ = writerIndex_ = 0;
    invalidateReadWindow();
    return *this;
  }
  CompositeByteBuf& markReaderIndex() noexcept {
    markedReaderIndex_ = readerIndex_;
    return *this;
  }
  CompositeByteBuf& resetReaderIndex() { return readerIndex(markedReaderIndex_); }
  CompositeByteBuf& markWriterIndex() noexcept {
    markedWriterIndex_ = writerIndex_;
    return *this;
  }
  CompositeByteBuf& resetWriterIndex() { return writerIndex(markedWriterIndex_); }
  CompositeByteBuf& skipBytes(std::size_t n) {
    checkReadableRange(n, "skipBytes");
    readerIndex_ += n;
    invalidateReadWindow();
    return *this;
  }
  /// Makes room for n more bytes: first in the last component's spare room, otherwise by adding a
  /// component from alloc() (sized by Netty's growth policy). Throws past maxCapacity.
  CompositeByteBuf& ensureWritable(std::size_t n) {
    if (n > capacity_ - writerIndex_) ensureWritableSlow(n, nullptr);
    return *this;
  }
  ByteBufAllocator& alloc() const noexcept { return *alloc_; }

  // ---------------------------------------------------------------- slices and copies
  /// Shares storage: within one component a plain ByteBuf slice, across components a composite of
  /// slices. Either way the bytes are not copied.
  std::variant<ByteBuf, CompositeByteBuf> retainedSlice(std::size_t index,
                                                        std::size_t length) const;
  std::variant<ByteBuf, CompositeByteBuf> retainedSlice() const {
    return retainedSlice(readerIndex_, readableBytes());
  }
  /// retainedSlice(readerIndex, length), then advances readerIndex.
  std::variant<ByteBuf, CompositeByteBuf> readRetainedSlice(std::size_t length);
  /// out.push_back(readRetainedSlice(length)) for frame decoders: a slice inside one component is
  /// built in place in out and takes its reference from that component's reference credit (see
  /// ByteBuf::readRetainedSliceBatched), so the common case costs no atomic operation.
  void readRetainedSliceBatched(std::size_t length,
                                std::vector<std::variant<ByteBuf, CompositeByteBuf>>& out);
  /// A contiguous deep copy of the readable bytes (or of [index, index + length)).
  ByteBuf copy() const { return copy(readerIndex_, readableBytes()); }
  ByteBuf copy(std::size_t index, std::size_t length) const;

  using ByteAccessors<CompositeByteBuf>::readBytes;

  /// "CompositeByteBuf(ridx: 0, widx: 10, cap: 10/2147483647, components: 2)".
  std::string toString() const;

  // ---------------------------------------------------------------- gather I/O
  /// The readable bytes as an Asio ConstBufferSequence: one const_buffer per (part of a)
  /// component, iterated in place (no allocation). Valid while the composite is not modified.
  class ReadableBuffers {
   public:
    class const_iterator {
     public:
      using iterator_category = std::bidirectional_iterator_tag;
      using value_type = boost::asio::const_buffer;
      using difference_type = std::ptrdiff_t;
      using pointer = const boost::asio::const_buffer*;
      using reference = boost::asio::const_buffer;

      const_iterator() = default;
      reference operator*() const noexcept;
      const_iterator& operator++() noexcept {
        ++i_;
        return *this;
      }
      const_iterator operator++(int) noexcept {
        auto t = *this;
        ++i_;
        return t;
      }
      const_iterator& operator--() noexcept {
        --i_;
        return *this;
      }
      const_iterator operator--(int) noexcept {
        auto t = *this;
        --i_;
        return t;
      }
      bool operator==(const const_iterator& o) const noexcept { return i_ == o.i_; }

     private:
      friend class ReadableBuffers;
      const_iterator(const ReadableBuffers* range, std::size_t i) : range_(range), i_(i) {}
      const ReadableBuffers* range_ = nullptr;
      std::size_t i_ = 0;
    };
    const_iterator begin() const noexcept { return {this, first_}; }
    const_iterator end() const noexcept { return {this, last_}; }
    /// Number of buffers in the sequence.
    std::size_t size() const noexcept { return last_ - first_; }

   private:
    friend class CompositeByteBuf;
    const Component* components_ = nullptr;
    std::size_t first_ = 0, last_ = 0;  // component range [first_, last_)
    std::size_t from_ = 0, to_ = 0;     // composite byte range [from_, to_)
  };
  ReadableBuffers readableBuffers() const noexcept;

  // ---- The raw operations behind ByteAccessors (see byte_accessors.hpp). ----
  void advanceReaderUnchecked(std::size_t n) noexcept {
    readerIndex_ += n;
    invalidateReadWindow();
  }
  void advanceWriterUnchecked(std::size_t n) noexcept { writerIndex_ += n; }
  void checkIndexRange(std::size_t index, std::size_t length, const char* what) const {
    if (index > capacity_ || length > capacity_ - index)
      outOfBounds(what, index, length, capacity_);
  }
  void checkReadableRange(std::size_t length, const char* what) const {
    if (length > writerIndex_ - readerIndex_) outOfBounds(what, readerIndex_, length, writerIndex_);
  }
  /// Bounds, and every component in the range must be writable.
  void checkWritableRange(std::size_t index, std::size_t length, const char* what);
  const std::byte* contiguous(std::size_t index, std::size_t length) const noexcept {
    if (inCurrent(index, length)) return curData_ + (index - curOffset_);
    return contiguousSlow(index, length);
  }
  std::byte* contiguousMutable(std::size_t index, std::size_t length) noexcept {
    const std::byte* p = contiguous(index, length);
    return p != nullptr && curWritable_ ? const_cast<std::byte*>(p) : nullptr;
  }
  template <class Fn>
  bool forEachSegment(std::size_t index, std::size_t length, Fn&& fn) const {
    if (length == 0) return true;
    for (std::size_t c = toComponentIndex(index); length != 0; ++c) {
      const Component& comp = components_[c];
      const std::size_t skip = index - comp.offset;
      const std::size_t n = std::min(length, comp.length - skip);
      if (!fn(std::span<const std::byte>(comp.data + skip, n))) return false;
      index += n;
      length -= n;
    }
    return true;
  }
  template <class Fn>
  void forEachMutableSegment(std::size_t index, std::size_t length, Fn&& fn) {
    if (length == 0) return;
    for (std::size_t c = toComponentIndex(index); length != 0; ++c) {
      Component& comp = components_[c];
      const std::size_t skip = index - comp.offset;
      const std::size_t n = std::min(length, comp.length - skip);
      fn(std::span<std::byte>(comp.data + skip, n));
      index += n;
      length -= n;
    }
  }
  /// Appends src (aliasing-safe: components merged while growing stay alive until the copy ends).
  void appendBytes(std::span<const std::byte> src);

  template <class T, std::size_t N, ByteOrder O>
  T getValue(std::size_t index) const {
    if (inCurrent(index, N)) return detail::loadValue<T, N, O>(curData_ + (index - curOffset_));
    checkIndexRange(index, N, "get");
    std::array<std::byte, N> tmp;
    gather(index, tmp);
    return detail::loadValue<T, N, O>(tmp.data());
  }
  template <class T, std::size_t N, ByteOrder O>
  T readValue() {
    // Sequential reads run on a window of raw pointers into the current component: one compare
    // and one load per value.
    if (static_cast<std::size_t>(rEnd_ - rp_) >= N) [[likely]] {
      const T v = detail::loadValue<T, N, O>(rp_);
      rp_ += N;
      readerIndex_ += N;
      return v;
    }
    return readValueSlow<T, N, O>();
  }
  template <class T, std::size_t N, ByteOrder O>
  void setValue(std::size_t index, T value) {
    if (curWritable_ && inCurrent(index, N)) {
      detail::storeValue<T, N, O>(curData_ + (index - curOffset_), value);
      return;
    }
    checkWritableRange(index, N, "set");
    std::array<std::byte, N> tmp;
    detail::storeValue<T, N, O>(tmp.data(), value);
    scatter(index, tmp);
  }
  template <class T, std::size_t N, ByteOrder O>
  void writeValue(T value) {
    const std::size_t w = writerIndex_;
    if (!(curWritable_ && inCurrent(w, N))) {
      ensureWritable(N);
      checkWritableRange(w, N, "write");
      std::array<std::byte, N> tmp;
      detail::storeValue<T, N, O>(tmp.data(), value);
      scatter(w, tmp);
      writerIndex_ = w + N;
      return;
    }
    detail::storeValue<T, N, O>(curData_ + (w - curOffset_), value);
    writerIndex_ = w + N;
  }

  /// Bytes copied by consolidation so far (for tests and benchmarks of the no-quadratic rule).
  std::size_t bytesCopiedByConsolidation() const noexcept { return bytesConsolidated_; }

 private:
  template <class T, std::size_t N, ByteOrder O>
  T readValueSlow() {
    checkReadableRange(N, "read");
    const std::size_t r = readerIndex_;
    openReadWindow();
    if (static_cast<std::size_t>(rEnd_ - rp_) >= N) {
      const T v = detail::loadValue<T, N, O>(rp_);
      rp_ += N;
      readerIndex_ = r + N;
      return v;
    }
    std::array<std::byte, N> tmp;  // straddles a boundary
    gather(r, tmp);
    readerIndex_ = r + N;
    invalidateReadWindow();
    return detail::loadValue<T, N, O>(tmp.data());
  }
  /// Points the read window at readerIndex's component, up to min(its end, writerIndex).
  void openReadWindow() const noexcept;
  void invalidateReadWindow() const noexcept { rp_ = rEnd_ = nullptr; }
  /// Whether [index, index + length) lies in the cached component; overflow-safe for any index.
  bool inCurrent(std::size_t index, std::size_t length) const noexcept {
    const std::size_t rel = index - curOffset_;  // wraps to huge when index < curOffset_
    return rel < curLen_ && length <= curLen_ - rel;
  }
  [[noreturn]] void outOfBounds(const char* what, std::size_t index, std::size_t length,
                                std::size_t bound) const;
  const std::byte* contiguousSlow(std::size_t index, std::size_t length) const noexcept;
  std::size_t toComponentIndexSlow(std::size_t offset) const;
  /// Makes component c the cached current component.
  void cache(std::size_t c) const noexcept;
  void invalidateCache() const noexcept;
  void gather(std::size_t index, std::span<std::byte> out) const;
  void scatter(std::size_t index, std::span<const std::byte> in);
  void ensureWritableSlow(std::size_t n, std::vector<ByteBuf>* keepAlive);
  /// Throws IllegalArgumentError when `bytes` more would pass maxCapacity.
  void checkCanAdd(std::size_t bytes) const;
  void insertComponent(std::size_t cIndex, ByteBuf buf, bool increaseWriterIndex);
  void updateOffsets(std::size_t from) noexcept;
  /// Enforces maxNumComponents by merging the trailing components into the consolidation buffer.
  void consolidateIfNeeded(std::vector<ByteBuf>* keepAlive);
  /// Merges components [first, last) into one new owned component of exactly their size; the old
  /// handles go to keepAlive when given, else are released.
  void mergeComponents(std::size_t first, std::size_t last, std::vector<ByteBuf>* keepAlive);
  /// Appends components [first, end) to owned component p (growing it by doubling) and removes
  /// them.
  void appendInto(std::size_t p, std::size_t first, std::vector<ByteBuf>* keepAlive);
  /// A new owned component of `length` writable bytes from alloc().
  Component newOwnedComponent(std::size_t length);
  void trimIndicesToCapacity() noexcept;
  /// Drops the composite's own unwritten room past writerIndex (before an appending add).
  void trimSpareTail();

  ByteBufAllocator* alloc_;
  std::vector<Component> components_;
  std::size_t maxNumComponents_;
  std::size_t maxCapacity_;
  std::size_t capacity_ = 0;
  std::size_t readerIndex_ = 0;
  std::size_t writerIndex_ = 0;
  std::size_t markedReaderIndex_ = 0;
  std::size_t markedWriterIndex_ = 0;
  std::size_t bytesConsolidated_ = 0;
  // The cached current component (the last one accessed). Invariant: either curLen_ == 0 (no
  // cache: nothing matches) or [curOffset_, curOffset_ + curLen_) is component curIndex_'s range
  // and curData_ its memory.
  mutable std::size_t curIndex_ = 0;
  mutable std::size_t curOffset_ = 0;
  mutable std::size_t curLen_ = 0;
  mutable std::byte* curData_ = nullptr;
  mutable bool curWritable_ = false;
  // The read window. Invariant: when rp_ < rEnd_, rp_ is the memory of byte readerIndex_ and
  // [readerIndex_, readerIndex_ + (rEnd_ - rp_)) is readable and inside one component. Anything
  // that moves readerIndex_ (other than readValue), lowers writerIndex_ or changes components
  // closes it (rp_ == rEnd_).
  mutable const std::byte* rp_ = nullptr;
  mutable const std::byte* rEnd_ = nullptr;
};

/// Convenience: a composite of the given buffers' readable bytes, fully readable (Netty's
/// Unpooled.wrappedBuffer(ByteBuf...)).
CompositeByteBuf compositeOf(std::span<ByteBuf> bufs, std::size_t maxNumComponents =
                                                          CompositeByteBuf::kDefaultMaxComponents);

}  // namespace netbuf

/// fmt support, as for ByteBuf: "{}" prints toString(); "{:x}" prints prettyHexDump().
template <>
struct fmt::formatter<netbuf::CompositeByteBuf> : netbuf::detail::BufferFormatter {};
