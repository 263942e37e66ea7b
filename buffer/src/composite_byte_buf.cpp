#include <netbuf/buffer/composite_byte_buf.hpp>

#include <fmt/format.h>
#include <algorithm>

namespace netbuf {

CompositeByteBuf::CompositeByteBuf(ByteBufAllocator& alloc, std::size_t maxNumComponents,
                                   std::size_t maxCapacity)
    : alloc_(&alloc), maxNumComponents_(maxNumComponents), maxCapacity_(maxCapacity) {
  if (maxNumComponents < 1) {
    throw IllegalArgumentError(
        fmt::format("maxNumComponents: {} (expected: >= 1)", maxNumComponents));
  }
  if (maxCapacity > kMaxCapacityLimit) {
    throw IllegalArgumentError(
        fmt::format("maxCapacity: {} (expected: <= {})", maxCapacity, kMaxCapacityLimit));
  }
}

CompositeByteBuf::CompositeByteBuf(CompositeByteBuf&& o) noexcept
    : alloc_(o.alloc_),
      components_(std::move(o.components_)),
      maxNumComponents_(o.maxNumComponents_),
      maxCapacity_(o.maxCapacity_),
      capacity_(std::exchange(o.capacity_, 0)),
      readerIndex_(std::exchange(o.readerIndex_, 0)),
      writerIndex_(std::exchange(o.writerIndex_, 0)),
      markedReaderIndex_(std::exchange(o.markedReaderIndex_, 0)),
      markedWriterIndex_(std::exchange(o.markedWriterIndex_, 0)),
      bytesConsolidated_(o.bytesConsolidated_) {
  o.components_.clear();
  o.invalidateCache();
}

CompositeByteBuf& CompositeByteBuf::operator=(CompositeByteBuf&& o) noexcept {
  if (this != &o) {
    alloc_ = o.alloc_;
    components_ = std::move(o.components_);
    o.components_.clear();
    maxNumComponents_ = o.maxNumComponents_;
    maxCapacity_ = o.maxCapacity_;
    capacity_ = std::exchange(o.capacity_, 0);
    readerIndex_ = std::exchange(o.readerIndex_, 0);
    writerIndex_ = std::exchange(o.writerIndex_, 0);
    markedReaderIndex_ = std::exchange(o.markedReaderIndex_, 0);
    markedWriterIndex_ = std::exchange(o.markedWriterIndex_, 0);
    bytesConsolidated_ = o.bytesConsolidated_;
    o.invalidateCache();
    invalidateCache();
  }
  return *this;
}

// ------------------------------------------------------------------ errors and text

void CompositeByteBuf::outOfBounds(const char* what, std::size_t index, std::size_t length,
                                   std::size_t bound) const {
  throw IndexOutOfBoundsError(
      fmt::format("{}: index {}, length {} out of bounds (expected index + length <= {}) in {}",
                  what, index, length, bound, toString()));
}

std::string CompositeByteBuf::toString() const {
  return fmt::format("CompositeByteBuf(ridx: {}, widx: {}, cap: {}/{}, components: {})",
                     readerIndex_, writerIndex_, capacity_, maxCapacity_, components_.size());
}

// ------------------------------------------------------------------ lookup

void CompositeByteBuf::openReadWindow() const noexcept {
  if (readerIndex_ >= writerIndex_) {
    invalidateReadWindow();
    return;
  }
  const Component& c = components_[toComponentIndex(readerIndex_)];
  rp_ = c.data + (readerIndex_ - c.offset);
  rEnd_ = c.data + (std::min(c.end(), writerIndex_) - c.offset);
}

void CompositeByteBuf::invalidateCache() const noexcept {
  invalidateReadWindow();
  curIndex_ = 0;
  curOffset_ = 0;
  curLen_ = 0;
  curData_ = nullptr;
  curWritable_ = false;
}

void CompositeByteBuf::cache(std::size_t c) const noexcept {
  const Component& comp = components_[c];
  curIndex_ = c;
  curOffset_ = comp.offset;
  curLen_ = comp.length;
  curData_ = comp.data;
  curWritable_ = comp.writable;
}

std::size_t CompositeByteBuf::toComponentIndexSlow(std::size_t offset) const {
  if (offset >= capacity_) outOfBounds("toComponentIndex", offset, 1, capacity_);
  // Sequential access usually moves to the next non-empty component: try it before searching.
  std::size_t c = curLen_ != 0 ? curIndex_ + 1 : components_.size();
  while (c < components_.size() && components_[c].length == 0) ++c;
  if (c >= components_.size() || offset < components_[c].offset || offset >= components_[c].end()) {
    // Binary search: the first component whose end lies past offset (empty ones never qualify).
    const auto it =
        std::partition_point(components_.begin(), components_.end(),
                             [offset](const Component& k) { return k.end() <= offset; });
    c = static_cast<std::size_t>(it - components_.begin());
  }
  cache(c);
  return c;
}

std::size_t CompositeByteBuf::toByteIndex(std::size_t cIndex) const {
  if (cIndex >= components_.size()) outOfBounds("toByteIndex", cIndex, 1, components_.size());
  return components_[cIndex].offset;
}

const std::byte* CompositeByteBuf::contiguousSlow(std::size_t index,
                                                  std::size_t length) const noexcept {
  if (length == 0 || index >= capacity_ || length > capacity_ - index) return nullptr;
  const Component& comp = components_[toComponentIndex(index)];
  return index + length <= comp.end() ? comp.data + (index - comp.offset) : nullptr;
}

void CompositeByteBuf::gather(std::size_t index, std::span<std::byte> out) const {
  std::size_t at = 0;
  forEachSegment(index, out.size(), [&](std::span<const std::byte> seg) {
    std::memcpy(out.data() + at, seg.data(), seg.size());
    at += seg.size();
    return true;
  });
}

void CompositeByteBuf::scatter(std::size_t index, std::span<const std::byte> in) {
  std::size_t at = 0;
  forEachMutableSegment(index, in.size(), [&](std::span<std::byte> seg) {
    std::memcpy(seg.data(), in.data() + at, seg.size());
    at += seg.size();
  });
}

void CompositeByteBuf::checkWritableRange(std::size_t index, std::size_t length, const char* what) {
  checkIndexRange(index, length, what);
  if (length == 0) return;
  for (std::size_t c = toComponentIndex(index); c < components_.size(); ++c) {
    const Component& comp = components_[c];
    if (comp.offset >= index + length) break;
    if (!comp.writable && comp.length != 0) {
      throw ReadOnlyBufferError(fmt::format("{}: component {} (bytes {}..{}) is read-only in {}",
                                            what, c, comp.offset, comp.end(), toString()));
    }
  }
}

// ------------------------------------------------------------------ components

void CompositeByteBuf::updateOffsets(std::size_t from) noexcept {
  std::size_t offset = from == 0 ? 0 : components_[from - 1].end();
  for (std::size_t c = from; c < components_.size(); ++c) {
    components_[c].offset = offset;
    offset += components_[c].length;
  }
}

void CompositeByteBuf::checkCanAdd(std::size_t bytes) const {
  if (bytes > maxCapacity_ - capacity_) {
    throw IllegalArgumentError(
        fmt::format("addComponent: {} more bytes would exceed maxCapacity {} in {}", bytes,
                    maxCapacity_, toString()));
  }
}

void CompositeByteBuf::insertComponent(std::size_t cIndex, ByteBuf buf, bool increaseWriterIndex) {
  if (!buf.isValid()) {
    throw EmptyBufferError("addComponent: the ByteBuf handle is empty (moved-from?)");
  }
  if (cIndex > components_.size()) {
    outOfBounds("addComponent(componentIndex)", cIndex, 0, components_.size());
  }
  const std::size_t readable = buf.readableBytes();
  checkCanAdd(readable);
  if (increaseWriterIndex && cIndex == components_.size()) {
    trimSpareTail();
    cIndex = components_.size();
  }
  // One allocation covers the common case (up to maxNumComponents + 1 before consolidation).
  if (components_.capacity() == 0)
    components_.reserve(std::min<std::size_t>(maxNumComponents_ + 1, 17));
  Component comp;
  comp.writable = !buf.isReadOnly();
  comp.data = buf.mutableDataUnchecked() + buf.readerIndex();
  comp.length = readable;
  comp.buf = std::move(buf);
  components_.insert(components_.begin() + static_cast<std::ptrdiff_t>(cIndex), std::move(comp));
  updateOffsets(cIndex);
  capacity_ += readable;
  if (increaseWriterIndex) writerIndex_ += readable;
  invalidateCache();
}

CompositeByteBuf& CompositeByteBuf::addComponent(bool increaseWriterIndex, ByteBuf buf) {
  insertComponent(components_.size(), std::move(buf), increaseWriterIndex);
  consolidateIfNeeded(nullptr);
  return *this;
}

CompositeByteBuf& CompositeByteBuf::addComponent(bool increaseWriterIndex, std::size_t cIndex,
                                                 ByteBuf buf) {
  insertComponent(cIndex, std::move(buf), increaseWriterIndex);
  consolidateIfNeeded(nullptr);
  return *this;
}

CompositeByteBuf& CompositeByteBuf::addComponent(bool increaseWriterIndex,
                                                 CompositeByteBuf&& other) {
  if (&other == this) throw IllegalArgumentError("addComponent: cannot add a composite to itself");
  if (increaseWriterIndex) trimSpareTail();  // as for a single appended component
  // Flatten: move other's components in, trimmed to its readable region.
  const std::size_t from = other.readerIndex_, to = other.writerIndex_;
  for (Component& c : other.components_) {
    const std::size_t lo = std::max(from, c.offset), hi = std::min(to, c.end());
    if (lo >= hi) continue;  // outside the readable region (released with other)
    Component comp;
    comp.data = c.data + (lo - c.offset);
    comp.length = hi - lo;
    comp.writable = c.writable;
    comp.buf = std::move(c.buf);
    checkCanAdd(comp.length);
    comp.offset = capacity_;
    capacity_ += comp.length;
    if (increaseWriterIndex) writerIndex_ += comp.length;
    components_.push_back(std::move(comp));
  }
  other = CompositeByteBuf(*other.alloc_, other.maxNumComponents_, other.maxCapacity_);
  invalidateCache();
  consolidateIfNeeded(nullptr);
  return *this;
}

CompositeByteBuf& CompositeByteBuf::addComponents(bool increaseWriterIndex,
                                                  std::span<ByteBuf> bufs) {
  components_.reserve(components_.size() + bufs.size());
  for (ByteBuf& b : bufs) insertComponent(components_.size(), std::move(b), increaseWriterIndex);
  consolidateIfNeeded(nullptr);
  return *this;
}

CompositeByteBuf& CompositeByteBuf::removeComponents(std::size_t cIndex,
                                                     std::size_t numComponents) {
  if (cIndex > components_.size() || numComponents > components_.size() - cIndex) {
    outOfBounds("removeComponents", cIndex, numComponents, components_.size());
  }
  std::size_t removed = 0;
  for (std::size_t c = cIndex; c < cIndex + numComponents; ++c) removed += components_[c].length;
  const auto first = components_.begin() + static_cast<std::ptrdiff_t>(cIndex);
  components_.erase(first, first + static_cast<std::ptrdiff_t>(numComponents));
  updateOffsets(cIndex);
  capacity_ -= removed;
  trimIndicesToCapacity();
  invalidateCache();
  return *this;
}

ByteBuf CompositeByteBuf::component(std::size_t cIndex) const {
  if (cIndex >= components_.size()) outOfBounds("component", cIndex, 1, components_.size());
  const Component& c = components_[cIndex];
  return c.buf.retainedSlice(static_cast<std::size_t>(c.data - c.buf.data()), c.length);
}

void CompositeByteBuf::trimSpareTail() {
  // Spare room we allocated past writerIndex would otherwise sit between the written bytes and an
  // appended component, and addComponent(true, ...) would make those unwritten bytes readable
  // (Netty's behaviour, a known trap). Give it back: drop owned components wholly past
  // writerIndex and shorten an owned one that straddles it. Components the user added are kept.
  while (!components_.empty() && capacity_ > writerIndex_) {
    Component& last = components_.back();
    if (!last.owned) break;
    if (last.offset >= writerIndex_) {
      capacity_ -= last.length;
      components_.pop_back();
      continue;
    }
    const std::size_t cut = last.end() - writerIndex_;
    last.length -= cut;
    last.buf.writerIndex(last.buf.writerIndex() - cut);  // keeps the owned invariant
    capacity_ -= cut;
  }
  invalidateCache();
}

void CompositeByteBuf::trimIndicesToCapacity() noexcept {
  invalidateReadWindow();
  if (writerIndex_ > capacity_) {
    writerIndex_ = capacity_;
    readerIndex_ = std::min(readerIndex_, capacity_);
  }
}

// ------------------------------------------------------------------ consolidation

CompositeByteBuf::Component CompositeByteBuf::newOwnedComponent(std::size_t length) {
  Component comp;
  comp.buf = alloc_->buffer(length, maxCapacity_);
  comp.buf.writerIndex(length);
  comp.data = comp.buf.mutableDataUnchecked();
  comp.length = length;
  comp.writable = true;
  comp.owned = true;
  return comp;
}

void CompositeByteBuf::mergeComponents(std::size_t first, std::size_t last,
                                       std::vector<ByteBuf>* keepAlive) {
  std::size_t total = 0;
  for (std::size_t c = first; c < last; ++c) total += components_[c].length;
  Component merged = newOwnedComponent(total);
  merged.offset = components_[first].offset;
  std::size_t at = 0;
  for (std::size_t c = first; c < last; ++c) {
    Component& comp = components_[c];
    if (comp.length != 0) std::memcpy(merged.data + at, comp.data, comp.length);
    at += comp.length;
    if (keepAlive != nullptr) keepAlive->push_back(std::move(comp.buf));
  }
  bytesConsolidated_ += total;
  const auto it = components_.begin() + static_cast<std::ptrdiff_t>(first);
  components_.erase(it + 1, components_.begin() + static_cast<std::ptrdiff_t>(last));
  *it = std::move(merged);
  invalidateCache();
}

void CompositeByteBuf::appendInto(std::size_t p, std::size_t first,
                                  std::vector<ByteBuf>* keepAlive) {
  Component& target = components_[p];
  std::size_t total = 0;
  for (std::size_t c = first; c < components_.size(); ++c) total += components_[c].length;
  if (total > target.buf.maxFastWritableBytes()) {
    // Grow by doubling into fresh memory, copying only the component's bytes (not the slack):
    // amortized, each byte is copied O(1) times however the components arrive.
    const std::size_t need = target.length + total;
    const std::size_t doubled = target.length > kMaxCapacityLimit / 2 ? need : 2 * target.length;
    ByteBuf grown =
        alloc_->buffer(std::max(need, doubled), std::max({need, doubled, maxCapacity_}));
    grown.writeBytes(target.data, target.length);
    bytesConsolidated_ += target.length;
    if (keepAlive != nullptr) keepAlive->push_back(std::move(target.buf));
    target.buf = std::move(grown);
    target.data = target.buf.mutableDataUnchecked();
  }
  for (std::size_t c = first; c < components_.size(); ++c) {
    Component& comp = components_[c];
    target.buf.writeBytes(comp.data, comp.length);  // within the fast-writable room: no move
    if (keepAlive != nullptr) keepAlive->push_back(std::move(comp.buf));
  }
  bytesConsolidated_ += total;
  target.length += total;
  components_.erase(components_.begin() + static_cast<std::ptrdiff_t>(first), components_.end());
  invalidateCache();
}

void CompositeByteBuf::consolidateIfNeeded(std::vector<ByteBuf>* keepAlive) {
  const std::size_t count = components_.size();
  if (count <= maxNumComponents_) return;
  // Netty consolidates *everything* whenever the limit is exceeded, which is quadratic when
  // components arrive one at a time. Instead, the trailing components are appended to the last
  // component this composite owns (a buffer that grows by doubling), so each byte is copied a
  // constant number of times amortized.
  std::size_t p = count;
  for (std::size_t c = count; c-- > 0;) {
    if (components_[c].owned) {
      p = c;
      break;
    }
  }
  if (p < count && p + 1 <= maxNumComponents_ && p + 1 < count) {
    appendInto(p, p + 1, keepAlive);
    return;
  }
  // No usable owned component: merge the newer half into a new one, which later merges append to.
  mergeComponents(std::min(maxNumComponents_ / 2, count - 1), count, keepAlive);
}

CompositeByteBuf& CompositeByteBuf::consolidate() {
  if (components_.size() > 1) mergeComponents(0, components_.size(), nullptr);
  return *this;
}

CompositeByteBuf& CompositeByteBuf::consolidate(std::size_t cIndex, std::size_t numComponents) {
  if (cIndex > components_.size() || numComponents > components_.size() - cIndex) {
    outOfBounds("consolidate", cIndex, numComponents, components_.size());
  }
  if (numComponents > 1) mergeComponents(cIndex, cIndex + numComponents, nullptr);
  return *this;
}

// ------------------------------------------------------------------ discarding

CompositeByteBuf& CompositeByteBuf::discardReadComponents() {
  if (readerIndex_ == 0) return *this;
  if (readerIndex_ == writerIndex_ && writerIndex_ == capacity_) {
    components_.clear();
    detail::adjustMarkers(markedReaderIndex_, markedWriterIndex_, readerIndex_);
    capacity_ = readerIndex_ = writerIndex_ = 0;
    invalidateCache();
    return *this;
  }
  const auto firstKept =
      std::partition_point(components_.begin(), components_.end(),
                           [r = readerIndex_](const Component& c) { return c.end() <= r; });
  if (firstKept == components_.begin()) return *this;
  const std::size_t removed = (firstKept - 1)->end();
  components_.erase(components_.begin(), firstKept);
  updateOffsets(0);
  capacity_ -= removed;
  readerIndex_ -= removed;
  writerIndex_ -= removed;
  detail::adjustMarkers(markedReaderIndex_, markedWriterIndex_, removed);
  invalidateCache();
  return *this;
}

CompositeByteBuf& CompositeByteBuf::discardReadBytes() {
  discardReadComponents();
  if (readerIndex_ == 0 || components_.empty()) return *this;
  // The first component now contains readerIndex: trim it (pointer arithmetic, no copy).
  Component& first = components_.front();
  const std::size_t trim = readerIndex_;
  first.data += trim;
  first.length -= trim;  // owned invariant (data + length == buffer end) still holds
  updateOffsets(0);
  capacity_ -= trim;
  readerIndex_ = 0;
  writerIndex_ -= trim;
  detail::adjustMarkers(markedReaderIndex_, markedWriterIndex_, trim);
  invalidateCache();
  return *this;
}

std::vector<ByteBuf> CompositeByteBuf::decompose(std::size_t offset, std::size_t length) const {
  checkIndexRange(offset, length, "decompose");
  std::vector<ByteBuf> out;
  if (length == 0) return out;
  for (std::size_t c = toComponentIndex(offset); length != 0; ++c) {
    const Component& comp = components_[c];
    const std::size_t skip = offset - comp.offset;
    const std::size_t n = std::min(length, comp.length - skip);
    if (n != 0) {
      out.push_back(
          comp.buf.retainedSlice(static_cast<std::size_t>(comp.data - comp.buf.data()) + skip, n));
    }
    offset += n;
    length -= n;
  }
  return out;
}

// ------------------------------------------------------------------ indices and capacity

CompositeByteBuf& CompositeByteBuf::readerIndex(std::size_t index) {
  if (index > writerIndex_) outOfBounds("readerIndex", index, 0, writerIndex_);
  readerIndex_ = index;
  invalidateReadWindow();
  return *this;
}

CompositeByteBuf& CompositeByteBuf::writerIndex(std::size_t index) {
  if (index < readerIndex_ || index > capacity_) {
    throw IndexOutOfBoundsError(fmt::format(
        "writerIndex: {} (expected: readerIndex({}) <= writerIndex <= capacity({})) in {}", index,
        readerIndex_, capacity_, toString()));
  }
  writerIndex_ = index;
  invalidateReadWindow();
  return *this;
}

CompositeByteBuf& CompositeByteBuf::setIndex(std::size_t readerIndex, std::size_t writerIndex) {
  if (readerIndex > writerIndex || writerIndex > capacity_) {
    throw IndexOutOfBoundsError(fmt::format(
        "setIndex: readerIndex: {}, writerIndex: {} (expected: 0 <= readerIndex <= writerIndex <= "
        "capacity({})) in {}",
        readerIndex, writerIndex, capacity_, toString()));
  }
  readerIndex_ = readerIndex;
  writerIndex_ = writerIndex;
  invalidateReadWindow();
  return *this;
}

void CompositeByteBuf::ensureWritableSlow(std::size_t n, std::vector<ByteBuf>* keepAlive) {
  if (n <= capacity_ - writerIndex_) return;
  if (n > maxCapacity_ - writerIndex_) {
    throw IndexOutOfBoundsError(fmt::format(
        "ensureWritable: writerIndex({}) + minWritableBytes({}) exceeds maxCapacity({}) in {}",
        writerIndex_, n, maxCapacity_, toString()));
  }
  const std::size_t need = writerIndex_ + n - capacity_;
  const std::size_t policy =
      ByteBufAllocator::calculateNewCapacity(writerIndex_ + n, maxCapacity_) - capacity_;
  if (!components_.empty() && components_.back().owned) {
    // Spare room in the last component's memory (allocator slack, or a consolidation buffer's
    // doubling): extend it in place, no copy and no new component.
    Component& last = components_.back();
    const std::size_t fast = last.buf.maxFastWritableBytes();
    if (fast >= need) {
      const std::size_t extend = std::min(fast, policy);
      last.buf.ensureWritable(extend);  // within the fast room: memory does not move
      last.buf.advanceWriterUnchecked(extend);
      last.length += extend;
      capacity_ += extend;
      invalidateCache();
      return;
    }
  }
  Component comp = newOwnedComponent(policy);
  comp.offset = capacity_;
  capacity_ += policy;
  components_.push_back(std::move(comp));
  invalidateCache();
  consolidateIfNeeded(keepAlive);
}

CompositeByteBuf& CompositeByteBuf::capacity(std::size_t newCapacity) {
  if (newCapacity > maxCapacity_) {
    throw IndexOutOfBoundsError(fmt::format("capacity: newCapacity {} exceeds maxCapacity {} in {}",
                                            newCapacity, maxCapacity_, toString()));
  }
  if (newCapacity > capacity_) {
    Component comp = newOwnedComponent(newCapacity - capacity_);
    comp.offset = capacity_;
    capacity_ = newCapacity;
    components_.push_back(std::move(comp));
    invalidateCache();
    consolidateIfNeeded(nullptr);
    return *this;
  }
  std::size_t trim = capacity_ - newCapacity;
  while (trim != 0) {
    Component& last = components_.back();
    if (last.length <= trim) {
      trim -= last.length;
      components_.pop_back();
    } else {
      last.length -= trim;
      if (last.owned) last.buf.writerIndex(last.buf.writerIndex() - trim);  // keep the invariant
      trim = 0;
    }
  }
  capacity_ = newCapacity;
  trimIndicesToCapacity();
  invalidateCache();
  return *this;
}

void CompositeByteBuf::appendBytes(std::span<const std::byte> src) {
  const std::size_t n = src.size();
  const std::size_t w = writerIndex_;
  if (n <= capacity_ - w) {
    checkWritableRange(w, n, "writeBytes");
    copyIn(w, src);
    writerIndex_ = w + n;
    return;
  }
  // src may live in a component that growth merges away: keep those alive until the copy is done.
  std::vector<ByteBuf> keepAlive;
  ensureWritableSlow(n, &keepAlive);
  checkWritableRange(w, n, "writeBytes");
  copyIn(w, src);
  writerIndex_ = w + n;
}

// ------------------------------------------------------------------ slices and copies

std::variant<ByteBuf, CompositeByteBuf> CompositeByteBuf::retainedSlice(std::size_t index,
                                                                        std::size_t length) const {
  checkIndexRange(index, length, "retainedSlice");
  if (length == 0) return alloc_->buffer(0, 0);
  const Component& first = components_[toComponentIndex(index)];
  if (index + length <= first.end()) {
    return first.buf.retainedSlice(
        static_cast<std::size_t>(first.data - first.buf.data()) + (index - first.offset), length);
  }
  std::vector<ByteBuf> pieces = decompose(index, length);
  CompositeByteBuf out(*alloc_, std::max(maxNumComponents_, pieces.size()), maxCapacity_);
  out.addComponents(true, pieces);
  return out;
}

std::variant<ByteBuf, CompositeByteBuf> CompositeByteBuf::readRetainedSlice(std::size_t length) {
  checkReadableRange(length, "readRetainedSlice");
  auto slice = retainedSlice(readerIndex_, length);
  readerIndex_ += length;
  invalidateReadWindow();
  return slice;
}

void CompositeByteBuf::readRetainedSliceBatched(
    std::size_t length, std::vector<std::variant<ByteBuf, CompositeByteBuf>>& out) {
  checkReadableRange(length, "readRetainedSlice");
  const std::size_t index = readerIndex_;
  if (length != 0) {
    Component& c = components_[toComponentIndex(index)];
    if (index + length <= c.end()) {
      // Converts to the slice inside out's new element (guaranteed elision: no handle to move).
      struct Slice {
        ByteBuf& buf;
        std::size_t at;
        std::size_t length;
        operator ByteBuf() const { return buf.retainedSliceBatched(at, length); }
      };
      const auto at = static_cast<std::size_t>(c.data - c.buf.data()) + (index - c.offset);
      out.emplace_back(std::in_place_type<ByteBuf>, Slice{c.buf, at, length});
      readerIndex_ = index + length;
      invalidateReadWindow();
      return;
    }
  }
  out.push_back(readRetainedSlice(length));
}

ByteBuf CompositeByteBuf::copy(std::size_t index, std::size_t length) const {
  checkIndexRange(index, length, "copy");
  ByteBuf out = alloc_->buffer(length, std::max(length, maxCapacity_));
  copyOut(index, {out.writePtrUnchecked(), length});
  out.advanceWriterUnchecked(length);
  return out;
}

// ------------------------------------------------------------------ gather I/O

CompositeByteBuf::ReadableBuffers CompositeByteBuf::readableBuffers() const noexcept {
  ReadableBuffers r;
  r.components_ = components_.data();
  r.from_ = readerIndex_;
  r.to_ = writerIndex_;
  if (readerIndex_ == writerIndex_) return r;
  r.first_ = toComponentIndex(readerIndex_);
  r.last_ = toComponentIndex(writerIndex_ - 1) + 1;
  return r;
}

CompositeByteBuf::ReadableBuffers::const_iterator::reference
CompositeByteBuf::ReadableBuffers::const_iterator::operator*() const noexcept {
  const Component& c = range_->components_[i_];
  const std::size_t lo = std::max(range_->from_, c.offset);
  const std::size_t hi = std::min(range_->to_, c.end());
  return {c.data + (lo - c.offset), hi > lo ? hi - lo : 0};
}

CompositeByteBuf ByteBufAllocator::compositeBuffer(std::size_t maxNumComponents) {
  return CompositeByteBuf(*this, maxNumComponents);
}

CompositeByteBuf Unpooled::compositeBuffer(std::size_t maxNumComponents) {
  return ByteBufAllocator::defaultAllocator().compositeBuffer(maxNumComponents);
}

CompositeByteBuf compositeOf(std::span<ByteBuf> bufs, std::size_t maxNumComponents) {
  CompositeByteBuf out(ByteBufAllocator::defaultAllocator(),
                       std::max(maxNumComponents, std::max<std::size_t>(bufs.size(), 1)));
  out.addComponents(true, bufs);
  return out;
}

}  // namespace netbuf
